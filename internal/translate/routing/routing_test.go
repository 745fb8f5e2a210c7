package routing

import (
	"errors"
	"maps"
	"reflect"
	"slices"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// registry: two AWS clusters in two regions (east has two zones' worth:
// east and east2 share us-east-1, in different zones), and a datacenter.
func registry() *translate.Registry {
	return translate.NewRegistry(
		translate.Cluster{Name: "east", Region: "us-east-1", Zone: "us-east-1a", TrustDomain: "east.mesh", Labels: map[string]string{"cloud": "aws", "env": "prod"}},
		translate.Cluster{Name: "east2", Region: "us-east-1", Zone: "us-east-1b", TrustDomain: "east.mesh", Labels: map[string]string{"cloud": "aws", "env": "prod"}},
		translate.Cluster{Name: "west", Region: "us-west-2", Zone: "us-west-2a", TrustDomain: "west.mesh", Labels: map[string]string{"cloud": "aws", "env": "prod"}},
		translate.Cluster{Name: "onprem", Region: "dc1", Zone: "dc1-a", TrustDomain: "onprem.mesh", Labels: map[string]string{"cloud": "private", "env": "prod"}},
	)
}

func backend(cluster string, priority int64) virtualdestination.Backend {
	return virtualdestination.Backend{Cluster: cluster, Namespace: "users", Service: "user", Priority: priority}
}

func weight(w int64) *int64 { return &w }

func vdStatement(t *testing.T, in virtualdestination.Intent, reg *translate.Registry) Statement {
	t.Helper()
	d, err := VirtualDestination(in, reg)
	if err != nil {
		t.Fatalf("VirtualDestination: %v", err)
	}
	return d.Statement()
}

func check(t *testing.T, got, want Statement) {
	t.Helper()
	for _, c := range slices.Sorted(maps.Keys(want)) {
		if got[c] != want[c] {
			t.Errorf("%s: got %q, want %q", c, got[c], want[c])
		}
	}
	for _, c := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[c]; !ok {
			t.Errorf("%s: unexpected line %q", c, got[c])
		}
	}
}

// The seed: east first, then the datacenter; the public cloud west last,
// and never for the datacenter's own clients.
func TestVirtualDestinationPriorityWithExclusion(t *testing.T) {
	in := virtualdestination.Intent{Name: "user", Hostname: "user.global",
		Backends: []virtualdestination.Backend{
			backend("east", 0), backend("onprem", 1),
			{Cluster: "west", Namespace: "users", Service: "user", Priority: 2,
				ExcludeFor: translate.Placement{ClusterSelector: map[string]string{"cloud": "private"}}},
		},
		Clients: virtualdestination.Clients{Placement: translate.Placement{Clusters: []string{"east", "onprem", "west"}}},
	}
	check(t, vdStatement(t, in, registry()), Statement{
		"east":   "east > onprem > west",
		"west":   "east > onprem > west",
		"onprem": "east > onprem",
	})
}

// Priorities are only an order: gaps do not matter, and backends listed
// out of order are still ranked by priority.
func TestVirtualDestinationPriorityOrderNotListOrder(t *testing.T) {
	in := virtualdestination.Intent{Name: "user", Hostname: "user.global",
		Backends: []virtualdestination.Backend{backend("west", 20), backend("onprem", 10), backend("east", 0)},
		Clients:  virtualdestination.Clients{Placement: translate.Placement{Clusters: []string{"onprem"}}},
	}
	check(t, vdStatement(t, in, registry()), Statement{"onprem": "east > onprem > west"})
}

// Equal priorities share: by name when the weights are equal, with
// percentages when they are not.
func TestVirtualDestinationSharedTiers(t *testing.T) {
	in := virtualdestination.Intent{Name: "user", Hostname: "user.global",
		Backends: []virtualdestination.Backend{backend("west", 0), backend("east", 0), backend("onprem", 1)},
		Clients:  virtualdestination.Clients{Placement: translate.Placement{Clusters: []string{"east"}}},
	}
	check(t, vdStatement(t, in, registry()), Statement{"east": "east, west > onprem"})

	in.Backends[0].Weight = weight(1)
	in.Backends[1].Weight = weight(3)
	check(t, vdStatement(t, in, registry()), Statement{"east": "east 75%, west 25% > onprem"})

	// Three equal thirds round to 100 in all.
	in.Backends = []virtualdestination.Backend{backend("west", 0), backend("east", 0), backend("onprem", 0)}
	in.Backends[0].Weight = weight(2)
	in.Backends[1].Weight = weight(2)
	in.Backends[2].Weight = weight(2)
	check(t, vdStatement(t, in, registry()), Statement{"east": "east, onprem, west"})
	in.Backends[2].Weight = weight(1)
	check(t, vdStatement(t, in, registry()), Statement{"east": "east 40%, onprem 20%, west 40%"})
	in.Backends[0].Weight = weight(1)
	in.Backends[1].Weight = weight(1)
	in.Backends[2].Weight = weight(1)
	check(t, vdStatement(t, in, registry()), Statement{"east": "east, onprem, west"})
}

func TestPercentagesSumTo100(t *testing.T) {
	for _, tc := range []struct {
		weights []int64
		want    []string
	}{
		{[]int64{1, 1, 1}, []string{"34", "33", "33"}},
		{[]int64{1, 2}, []string{"33", "67"}},
		{[]int64{95, 5}, []string{"95", "5"}},
		{[]int64{1, 1, 1, 1, 1, 1, 1}, []string{"15", "15", "14", "14", "14", "14", "14"}},
	} {
		var shares []Share
		for _, w := range tc.weights {
			shares = append(shares, Share{To: "x", Weight: w})
		}
		if got := percentages(shares); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("percentages(%v) = %v, want %v", tc.weights, got, tc.want)
		}
	}
}

// Locality mode: the client's zone, its region, the region traffic leaves
// to (that of the visible backend of lowest priority outside the region),
// then the rest; priority orders only the way out of the region.
func TestVirtualDestinationLocality(t *testing.T) {
	in := virtualdestination.Intent{Name: "user", Hostname: "user.global",
		Backends: []virtualdestination.Backend{backend("east", 2), backend("east2", 3), backend("west", 1), backend("onprem", 0)},
		Failover: &virtualdestination.Failover{Mode: virtualdestination.FailoverModeLocality},
	}
	check(t, vdStatement(t, in, registry()), Statement{
		"east":   "east > east2 > onprem > west",
		"east2":  "east2 > east > onprem > west",
		"west":   "west > onprem > east, east2",
		"onprem": "onprem > west > east, east2",
	})

	// Excluding the datacenter for the AWS clients moves their way out of
	// the region to west.
	in.Backends[3].ExcludeFor = translate.Placement{ClusterSelector: map[string]string{"cloud": "aws"}}
	check(t, vdStatement(t, in, registry()), Statement{
		"east":   "east > east2 > west",
		"east2":  "east2 > east > west",
		"west":   "west > east, east2",
		"onprem": "onprem > west > east, east2",
	})
}

// A region known only after apply leaves the lines of the clients it
// affects unknown, and only those.
func TestVirtualDestinationLocalityUnknown(t *testing.T) {
	reg := translate.NewRegistry(
		translate.Cluster{Name: "east", Region: "us-east-1"},
		translate.Cluster{Name: "new", Region: translate.Unknown("new.region")},
		translate.Cluster{Name: "west", Region: "us-west-2"},
	)
	in := virtualdestination.Intent{Name: "user", Hostname: "user.global",
		Backends: []virtualdestination.Backend{backend("east", 0), backend("west", 1),
			{Cluster: "new", Namespace: "users", Service: "user", Priority: 2,
				ExcludeFor: translate.Placement{Clusters: []string{"west"}}}},
		Failover: &virtualdestination.Failover{Mode: virtualdestination.FailoverModeLocality},
	}
	got := vdStatement(t, in, reg)
	if !translate.IsUnknown(got["east"]) || !translate.IsUnknown(got["new"]) {
		t.Errorf("east and new depend on new's region, want unknown lines: %q", got)
	}
	if got["west"] != "west > east" {
		t.Errorf("west: got %q, want %q", got["west"], "west > east")
	}
}

// clients.namespaces shows on every line; "*" is every namespace.
func TestVirtualDestinationNamespaces(t *testing.T) {
	in := virtualdestination.Intent{Name: "user", Hostname: "user.global",
		Backends: []virtualdestination.Backend{backend("east", 0)},
		Clients: virtualdestination.Clients{Placement: translate.Placement{Clusters: []string{"west"}},
			Namespaces: []string{"payments", "accounts"}},
	}
	check(t, vdStatement(t, in, registry()), Statement{"west": "east (ns accounts, payments)"})
	in.Clients.Namespaces = []string{"*"}
	check(t, vdStatement(t, in, registry()), Statement{"west": "east"})
}

func TestVirtualDestinationErrors(t *testing.T) {
	in := virtualdestination.Intent{Name: "user", Hostname: "user.global",
		Backends: []virtualdestination.Backend{{Cluster: "east", Namespace: "users", Service: "user",
			ExcludeFor: translate.Placement{Clusters: []string{"west"}}}},
		Clients: virtualdestination.Clients{Placement: translate.Placement{Clusters: []string{"west"}}},
	}
	if _, err := VirtualDestination(in, registry()); err == nil {
		t.Error("a client without backend: want an error")
	}
	in.Backends[0].ExcludeFor = translate.Placement{}
	in.Backends[0].Cluster = "mars"
	if _, err := VirtualDestination(in, registry()); err == nil {
		t.Error("an unregistered backend cluster: want an error")
	}
	reg := translate.NewRegistry(translate.Cluster{Name: "east", LabelsUnknown: true})
	in = virtualdestination.Intent{Name: "user", Hostname: "user.global",
		Backends: []virtualdestination.Backend{backend("east", 0)},
		Clients:  virtualdestination.Clients{Placement: translate.Placement{ClusterSelector: map[string]string{"env": "prod"}}},
	}
	if _, err := VirtualDestination(in, reg); !errors.Is(err, translate.ErrUnknownPlacement) {
		t.Errorf("labels known after apply: got %v, want ErrUnknownPlacement", err)
	}
}

func TestTrafficPolicyShiftMirrorAndConditions(t *testing.T) {
	five := 5.0
	in := trafficpolicy.Intent{Name: "canary",
		Sources: trafficpolicy.Sources{Placement: translate.Placement{ClusterSelector: map[string]string{"cloud": "aws"}},
			Namespaces: []string{"accounts"}, WorkloadLabels: map[string]string{"app": "account"}},
		Match:        []trafficpolicy.Match{{Method: "GET", URIPrefix: "/v2", Headers: map[string]string{"x-canary": "true"}}, {URIExact: "/health"}},
		Timeout:      "2000ms",
		Retries:      &trafficpolicy.Retries{Attempts: 3, PerTryTimeout: "500ms", RetryOn: []string{"5xx", "connect-failure"}},
		TrafficShift: []trafficpolicy.Shift{{Local: true, Weight: 80}, {Cluster: "onprem", Weight: 20}},
		Mirror:       &trafficpolicy.Mirror{Cluster: "west", Percent: &five},
	}
	vd := virtualdestination.Intent{Name: "user", Hostname: "user.global",
		Backends: []virtualdestination.Backend{backend("east", 0), backend("west", 0), backend("onprem", 1)},
		Clients:  virtualdestination.Clients{Placement: translate.Placement{Clusters: []string{"east", "west", "onprem"}}},
	}
	tr, err := TrafficPolicy(in, &vd, registry())
	if err != nil {
		t.Fatal(err)
	}
	when := "ns accounts app=account GET /v2* headers x-canary=true | /health: "
	rest := "; mirror west 5%; timeout 2s; retries 3 per 500ms on 5xx,connect-failure"
	// east2 is a source but no client of the virtual destination: nothing.
	check(t, tr.Statement(), Statement{
		"east": when + "east 80%, onprem 20%" + rest,
		"west": when + "west 80%, onprem 20%" + rest,
	})
}

// A local entry and an entry for the source cluster itself add up; zero
// weights are dropped; subsets of a service are named as such.
func TestTrafficPolicyShiftMerge(t *testing.T) {
	in := trafficpolicy.Intent{Name: "stay",
		Sources:      trafficpolicy.Sources{Placement: translate.Placement{Clusters: []string{"east", "west"}}},
		TrafficShift: []trafficpolicy.Shift{{Local: true, Weight: 50}, {Cluster: "east", Weight: 50}, {Cluster: "onprem", Weight: 0}},
	}
	tr, err := TrafficPolicy(in, nil, registry())
	if err != nil {
		t.Fatal(err)
	}
	check(t, tr.Statement(), Statement{"east": "east 100%", "west": "west 50%, east 50%"})

	in = trafficpolicy.Intent{Name: "versions",
		Sources:      trafficpolicy.Sources{Placement: translate.Placement{Clusters: []string{"east"}}},
		TrafficShift: []trafficpolicy.Shift{{Subset: "v1", Labels: map[string]string{"version": "v1"}, Weight: 95}, {Subset: "v2", Labels: map[string]string{"version": "v2"}, Weight: 5}},
		Mirror:       &trafficpolicy.Mirror{Subset: "v3", Labels: map[string]string{"version": "v3"}},
		Fault:        &trafficpolicy.Fault{Delay: &trafficpolicy.Delay{Percent: 0.5, FixedDelay: "100ms"}, Abort: &trafficpolicy.Abort{Percent: 1, HTTPStatus: 503}},
		Retries:      &trafficpolicy.Retries{Attempts: 0},
	}
	tr, err = TrafficPolicy(in, nil, registry())
	if err != nil {
		t.Fatal(err)
	}
	check(t, tr.Statement(), Statement{"east": "v1 95%, v2 5%; mirror v3 100%; no retries; delay 0.5% 100ms, abort 1% 503"})

	in = trafficpolicy.Intent{Name: "pool", Sources: trafficpolicy.Sources{Placement: translate.Placement{Clusters: []string{"west"}}}, LoadBalancer: "LEAST_REQUEST"}
	tr, err = TrafficPolicy(in, nil, registry())
	if err != nil {
		t.Fatal(err)
	}
	check(t, tr.Statement(), Statement{"west": "no routing change"})
}

func seedAccess() (accesspolicy.Intent, accesspolicy.Destination) {
	in := accesspolicy.Intent{Name: "account-to-user",
		Sources: []accesspolicy.Source{
			{Placement: translate.Placement{Clusters: []string{"west"}}, Namespace: "accounts", ServiceAccount: "account",
				DestinationClusters: translate.Placement{Clusters: []string{"east"}}},
			{Placement: translate.Placement{ClusterSelector: map[string]string{"cloud": "private"}}, Namespace: "accounts", ServiceAccount: "account"},
			{Placement: translate.Placement{Clusters: []string{"east", "east2"}}, Namespace: "billing", ServiceAccount: "ledger",
				DestinationClusters: translate.Placement{ClusterSelector: map[string]string{"cloud": "private"}}},
		},
		Rules: []accesspolicy.Rule{{Methods: []string{"GET"}, Paths: []string{"/users/*"}, Ports: []int{8080}}, {Methods: []string{"POST"}, Paths: []string{"/audit"}}},
	}
	dest := accesspolicy.Destination{VirtualDestination: "user.global",
		Backends:  []accesspolicy.Backend{{Cluster: "east", Namespace: "users", Service: "user"}, {Cluster: "onprem", Namespace: "users", Service: "user"}, {Cluster: "west", Namespace: "users", Service: "user"}},
		Placement: translate.Placement{ClusterSelector: map[string]string{"env": "prod"}},
	}
	return in, dest
}

func TestAccessPolicy(t *testing.T) {
	in, dest := seedAccess()
	a, err := AccessPolicy(in, dest, registry())
	if err != nil {
		t.Fatal(err)
	}
	rules := ": GET /users/* port 8080 | POST /audit"
	check(t, a.Statement(), Statement{
		"east":   "allow accounts/account from onprem, west" + rules,
		"onprem": "allow accounts/account from onprem; billing/ledger from east, east2" + rules,
		"west":   "allow accounts/account from onprem" + rules,
	})
	// east and east2 share a trust domain: one principal.
	if want := []string{"east.mesh/ns/billing/sa/ledger", "onprem.mesh/ns/accounts/sa/account"}; !reflect.DeepEqual(a.Clusters["onprem"].Principals, want) {
		t.Errorf("onprem principals: got %v, want %v", a.Clusters["onprem"].Principals, want)
	}

	// Only the datacenter enforces; a rule matching everything is any
	// request.
	dest.Placement = translate.Placement{Clusters: []string{"onprem"}}
	in.Rules = append(in.Rules, accesspolicy.Rule{})
	in.Sources = in.Sources[:1]
	a, err = AccessPolicy(in, dest, registry())
	if err != nil {
		t.Fatal(err)
	}
	check(t, a.Statement(), Statement{"onprem": "allow nobody"})
	in.Sources[0].DestinationClusters = translate.Placement{}
	a, err = AccessPolicy(in, dest, registry())
	if err != nil {
		t.Fatal(err)
	}
	check(t, a.Statement(), Statement{"onprem": "allow accounts/account from west: any request"})
}

// A service destination is enforced in every cluster its placement
// selects; an unset trust domain is Istio's cluster.local.
func TestAccessPolicyService(t *testing.T) {
	reg := translate.NewRegistry(translate.Cluster{Name: "a"}, translate.Cluster{Name: "b", TrustDomain: "b.mesh"})
	in := accesspolicy.Intent{Name: "p", Sources: []accesspolicy.Source{{Placement: translate.Placement{Clusters: []string{"a"}}, Namespace: "n", ServiceAccount: "s"}}}
	a, err := AccessPolicy(in, accesspolicy.Destination{Service: "user", Namespace: "users"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	check(t, a.Statement(), Statement{"a": "allow n/s from a: any request", "b": "allow n/s from a: any request"})
	if want := []string{"cluster.local/ns/n/sa/s"}; !reflect.DeepEqual(a.Clusters["b"].Principals, want) {
		t.Errorf("principals: got %v, want %v", a.Clusters["b"].Principals, want)
	}
}

func TestStatementSize(t *testing.T) {
	s := Statement{"east": "east > onprem"}
	if got, want := s.Size(), len(`{"east":"east > onprem"}`); got != want {
		t.Errorf("Size = %d, want %d", got, want)
	}
	s["west"] = "west"
	if got, want := s.Size(), len(`{"east":"east > onprem","west":"west"}`); got != want {
		t.Errorf("Size = %d, want %d", got, want)
	}
}
