package gen

import (
	"fmt"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// TestCostFlatInUntouchedClusters: intents confined to two clusters (a
// virtual destination with its clients there, an access policy and a
// traffic policy on it) cost the same with 10 and with 50 registered
// clusters: the same objects, the same requests from the engine, none of
// them to a cluster the intents do not touch. Counted on the in-memory
// clusters gen.Render applies to (fake clusters), not timed.
func TestCostFlatInUntouchedClusters(t *testing.T) {
	type cost struct{ objects, writes, requests, elsewhere int }
	costs := map[int]cost{}
	for _, n := range []int{10, 50} {
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("c%02d", i))
		}
		s := Generate(0, Clusters(names))
		touched := []string{"c00", "c01"}
		host := "pay.global"
		s.Destinations = []virtualdestination.Intent{{
			Name: "pay", Hostname: host, Namespace: translate.DefaultIstioNS, VIP: virtualdestination.VIP(host),
			Ports: []virtualdestination.Port{{Number: 8080, Protocol: "HTTP"}},
			Backends: []virtualdestination.Backend{
				{Cluster: "c00", Namespace: "pay", Service: "pay", Priority: 0},
				{Cluster: "c01", Namespace: "pay", Service: "pay", Priority: 1},
			},
			Clients: virtualdestination.Clients{Placement: translate.Placement{Clusters: touched}},
		}}
		s.Access = []Access{{Destination: host, Intent: accesspolicy.Intent{
			Name:    "pay-callers",
			Sources: []accesspolicy.Source{{Placement: translate.Placement{Clusters: touched}, Namespace: "shop", ServiceAccount: "cart"}},
			Rules:   []accesspolicy.Rule{{Methods: []string{"GET"}, Ports: []int{8080}}},
		}}}
		s.Traffic = []Traffic{{Destination: host, Intent: trafficpolicy.Intent{
			Name: "pay-resilience", Timeout: "3s",
			ConnectionPool: &trafficpolicy.ConnectionPool{TCP: &trafficpolicy.TCPPool{MaxConnections: 100}},
		}}}
		r, err := s.Render()
		if err != nil {
			t.Fatal(err)
		}
		c := cost{objects: r.Objects(), writes: len(r.Writes)}
		for cluster, k := range r.Requests {
			c.requests += k
			if cluster != "c00" && cluster != "c01" {
				c.elsewhere += k
			}
		}
		t.Logf("%d clusters: %d objects, %d writes, %d requests", n, c.objects, c.writes, c.requests)
		if c.objects == 0 || c.writes == 0 {
			t.Fatalf("%d clusters: nothing planned (%+v)", n, c)
		}
		if c.elsewhere != 0 {
			t.Errorf("%d clusters: %d requests to clusters the intents do not touch", n, c.elsewhere)
		}
		costs[n] = c
	}
	if costs[10] != costs[50] {
		t.Errorf("the cost grew with clusters the intents do not touch: 10 clusters %+v, 50 clusters %+v", costs[10], costs[50])
	}
}
