package simulation

import (
	"strings"
	"testing"

	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	tcpproxy "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/tcp_proxy/v3"
	"github.com/mesh-intent/terraform-provider-mesh/tools/istio/internal/oracle"
)

// A sidecar tells TCP services apart by VIP alone: each TCP port of a
// virtual destination gets a listener of its own on <VIP>_<port>. Two
// virtual destinations that shared a VIP would share that listener, and
// istiod would keep one of them: the other's TCP traffic goes to the wrong
// backend. This is why the provider refuses two virtual destinations with
// one VIP at plan (virtual_destination_resource_test.go), and why VIPs come
// from a wide reserved block.
func TestVirtualDestinationVIPListeners(t *testing.T) {
	g, err := loadCase(t, "virtual-destination", oracle.GoldenDir("virtual-destination")+"/multi-port.yaml")
	if err != nil {
		t.Fatal(err)
	}
	client := g.clientClusters()[0]
	docs := g.objects[client]
	vip := ""
	for _, d := range docs {
		if strings.Contains(d, "\nkind: ServiceEntry\n") && strings.Contains(d, "\n  name: vd-orders\n") {
			_, rest, _ := strings.Cut(d, "addresses:\n  - ")
			vip, _, _ = strings.Cut(rest, "\n")
		}
	}
	if vip == "" {
		t.Fatal("no VIP in the client ServiceEntry of multi-port")
	}
	listeners := func(s *istiod) map[string]bool {
		out := map[string]bool{}
		for _, l := range s.Listeners(s.sidecar("default")) {
			out[l.Name] = true
		}
		return out
	}

	// The TCP port has a listener on the VIP.
	s := newIstiod(t, g, client, docs)
	if !listeners(s)[vip+"_5432"] {
		t.Fatalf("no listener %s_5432 for the TCP port of orders.global: %v", vip, sortedKeys(listeners(s)))
	}

	// Another TCP service on the same VIP and port: one listener for both,
	// and only one of the two services behind it.
	other := `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: vd-payments, namespace: istio-system}
spec:
  hosts: [payments.global]
  addresses: [` + vip + `]
  location: MESH_INTERNAL
  resolution: DNS
  ports: [{number: 5432, name: tcp-5432, protocol: TCP}]
  endpoints: [{address: payments.payments.svc.cluster.local}]`
	s = newIstiod(t, g, client, append(append([]string(nil), docs...), other))
	for _, l := range s.Listeners(s.sidecar("default")) {
		if l.Name != vip+"_5432" {
			continue
		}
		var clusters []string
		for _, fc := range l.FilterChains {
			clusters = append(clusters, tcpProxyClusters(fc)...)
		}
		joined := strings.Join(clusters, " ")
		if strings.Contains(joined, "orders.global") && strings.Contains(joined, "payments.global") {
			t.Fatalf("Istio kept both services on one VIP listener (%v): the collision would be harmless and the plan error unneeded", clusters)
		}
		t.Logf("one listener %s for two services; it forwards to %v only", l.Name, clusters)
		return
	}
	t.Fatalf("no listener %s_5432 with two services on the VIP", vip)
}

// tcpProxyClusters are the upstream clusters of a filter chain's TCP proxy.
func tcpProxyClusters(fc *listener.FilterChain) []string {
	var out []string
	for _, f := range fc.Filters {
		tp := &tcpproxy.TcpProxy{}
		if f.GetTypedConfig().UnmarshalTo(tp) != nil {
			continue
		}
		if c := tp.GetCluster(); c != "" {
			out = append(out, c)
		}
		for _, wc := range tp.GetWeightedClusters().GetClusters() {
			out = append(out, wc.Name)
		}
	}
	return out
}
