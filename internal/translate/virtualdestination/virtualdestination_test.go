package virtualdestination

import (
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/translatetest"

	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"sort"
	"strings"
	"testing"

	networking "istio.io/client-go/pkg/apis/networking/v1"
	"sigs.k8s.io/yaml"
)

// TestGolden translates every case of testdata/ and compares it with its
// golden file (REFRESH_GOLDEN=true rewrites them).
func TestGolden(t *testing.T) {
	translatetest.Golden(t, func(raw []byte, reg *translate.Registry) ([]translate.Object, error) {
		var in Intent
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		return Translate(in, reg)
	})
}

// testRegistry: east and west in the cloud, onprem in a data centre,
// nogw without an east-west gateway.
func testRegistry() *translate.Registry {
	return translate.NewRegistry(
		translate.Cluster{Name: "east", Network: "net-east", Region: "us-east-1", Zone: "us-east-1a",
			Labels: map[string]string{"env": "prod", "cloud": "aws"}, EastWestGateway: &translate.Gateway{Address: "203.0.113.10", Port: 15443}},
		translate.Cluster{Name: "west", Network: "net-west", Region: "us-west-2",
			Labels: map[string]string{"env": "prod", "cloud": "aws"}, EastWestGateway: &translate.Gateway{Address: "203.0.113.20", Port: 15443}},
		translate.Cluster{Name: "onprem", Network: "net-onprem", Region: "dc1",
			Labels: map[string]string{"env": "prod", "cloud": "onprem"}, EastWestGateway: &translate.Gateway{Address: "gw.onprem.example.com"}},
		translate.Cluster{Name: "nogw", Network: "net-nogw", Labels: map[string]string{"env": "dev"}},
	)
}

// valid is the DESIGN.md example: user.global in east, then onprem.
func valid() Intent {
	return Intent{
		Name:     "user",
		Hostname: "user.global",
		Ports:    []Port{{Number: 8080, Protocol: "HTTP"}},
		Backends: []Backend{
			{Cluster: "east", Namespace: "users", Service: "user", Priority: 0},
			{Cluster: "onprem", Namespace: "users", Service: "user", Priority: 1},
		},
		Failover: &Failover{Mode: FailoverModePriority},
		Clients: Clients{Placement: translate.Placement{ClusterSelector: map[string]string{"env": "prod"}},
			Namespaces: []string{"accounts"}},
	}
}

func TestVirtualDestinationValidationErrors(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Intent)
		reg     *translate.Registry // testRegistry when nil
		path    string
		summary string
	}{
		{"name not a DNS label", func(in *Intent) { in.Name = "User_1" }, nil, "name", "Invalid name"},
		{"hostname with wildcard", func(in *Intent) { in.Hostname = "*.global" }, nil, "hostname", "Invalid hostname"},
		{"hostname single label", func(in *Intent) { in.Hostname = "user" }, nil, "hostname", "Invalid hostname"},
		{"hostname is an IP", func(in *Intent) { in.Hostname = "10.0.0.1" }, nil, "hostname", "Invalid hostname"},
		{"hostname under cluster.local", func(in *Intent) { in.Hostname = "user.users.svc.cluster.local" }, nil, "hostname", "Invalid hostname"},
		{"namespace invalid", func(in *Intent) { in.Namespace = "Istio.System" }, nil, "namespace", "Invalid namespace"},
		{"no ports", func(in *Intent) { in.Ports = nil }, nil, "ports", "Missing ports"},
		{"port zero", func(in *Intent) { in.Ports[0].Number = 0 }, nil, "ports[0].number", "Invalid port"},
		{"port too large", func(in *Intent) { in.Ports[0].Number = 65536 }, nil, "ports[0].number", "Invalid port"},
		{"duplicate port", func(in *Intent) {
			in.Ports = append(in.Ports, Port{Number: 8080, Protocol: "GRPC"})
		}, nil, "ports[1].number", "Duplicate port"},
		{"unsupported protocol", func(in *Intent) { in.Ports[0].Protocol = "UDP" }, nil, "ports[0].protocol", "Invalid protocol"},
		{"lowercase protocol", func(in *Intent) { in.Ports[0].Protocol = "http" }, nil, "ports[0].protocol", "Invalid protocol"},
		{"target port out of range", func(in *Intent) { in.Ports[0].TargetPort = ptr[int64](-1) }, nil, "ports[0].target_port", "Invalid port"},
		{"no backends", func(in *Intent) { in.Backends = nil }, nil, "backends", "Missing backends"},
		{"unknown backend cluster", func(in *Intent) { in.Backends[1].Cluster = "wine" }, nil, "backends[1].cluster", "Unknown cluster"},
		{"duplicate backend cluster", func(in *Intent) {
			in.Backends = append(in.Backends, Backend{Cluster: "east", Namespace: "users2", Service: "user"})
		}, nil, "backends[2].cluster", "Duplicate backend"},
		{"backend namespace invalid", func(in *Intent) { in.Backends[0].Namespace = "" }, nil, "backends[0].namespace", "Invalid namespace"},
		{"backend service invalid", func(in *Intent) { in.Backends[0].Service = "1user" }, nil, "backends[0].service", "Invalid service"},
		{"negative priority", func(in *Intent) { in.Backends[1].Priority = -1 }, nil, "backends[1].priority", "Invalid priority"},
		{"zero weight", func(in *Intent) { in.Backends[0].Weight = ptr[int64](0) }, nil, "backends[0].weight", "Invalid weight"},
		{"exclude_for unknown cluster", func(in *Intent) {
			in.Backends[1].ExcludeFor = translate.Placement{Clusters: []string{"east", "wine"}}
		}, nil, "backends[1].exclude_for.clusters[1]", "Unknown cluster"},
		{"failover mode", func(in *Intent) { in.Failover.Mode = "round-robin" }, nil, "failover.mode", "Invalid failover mode"},
		{"outlier detection interval", func(in *Intent) {
			in.Failover.OutlierDetection = &OutlierDetection{Interval: "10"}
		}, nil, "failover.outlier_detection.interval", "Invalid duration"},
		{"outlier detection ejection time too short", func(in *Intent) {
			in.Failover.OutlierDetection = &OutlierDetection{BaseEjectionTime: "10us"}
		}, nil, "failover.outlier_detection.base_ejection_time", "Invalid duration"},
		{"outlier detection sub-millisecond precision", func(in *Intent) {
			in.Failover.OutlierDetection = &OutlierDetection{Interval: "1500us"}
		}, nil, "failover.outlier_detection.interval", "Invalid duration"},
		{"outlier detection never ejects", func(in *Intent) {
			in.Failover.OutlierDetection = &OutlierDetection{Consecutive5xxErrors: ptr[int64](0)}
		}, nil, "failover.outlier_detection.consecutive_5xx_errors", "Invalid outlier detection"},
		{"outlier detection max ejection percent", func(in *Intent) {
			in.Failover.OutlierDetection = &OutlierDetection{MaxEjectionPercent: ptr[int64](101)}
		}, nil, "failover.outlier_detection.max_ejection_percent", "Invalid outlier detection"},
		{"unknown client cluster", func(in *Intent) {
			in.Clients.Placement = translate.Placement{Clusters: []string{"wine"}}
		}, nil, "clients.clusters[0]", "Unknown cluster"},
		{"client namespace invalid", func(in *Intent) { in.Clients.Namespaces = []string{"."} }, nil, "clients.namespaces[0]", "Invalid namespace"},
		{"client namespace is the config namespace", func(in *Intent) {
			in.Clients.Namespaces = []string{"accounts", "istio-system"}
		}, nil, "clients.namespaces[1]", "Invalid namespace"},
		{"star with other namespaces", func(in *Intent) { in.Clients.Namespaces = []string{"*", "accounts"} }, nil, "clients.namespaces[0]", "Invalid namespace"},
		{"remote backend without east-west gateway", func(in *Intent) {
			in.Backends[1].Cluster = "nogw"
		}, nil, "backends[1].cluster", "No east-west gateway"},
		{"invalid east-west gateway address", func(in *Intent) {}, translate.NewRegistry(
			translate.Cluster{Name: "east", Labels: map[string]string{"env": "prod"}, EastWestGateway: &translate.Gateway{Address: "203.0.113.10"}},
			translate.Cluster{Name: "onprem", Labels: map[string]string{"env": "prod"}, EastWestGateway: &translate.Gateway{Address: "gw_onprem:15443"}},
		), "backends[1].cluster", "Invalid east-west gateway address"},
		{"client with every backend excluded", func(in *Intent) {
			in.Backends[0].ExcludeFor = translate.Placement{ClusterSelector: map[string]string{"cloud": "aws"}}
			in.Backends[1].ExcludeFor = translate.Placement{Clusters: []string{"west"}}
		}, nil, "clients", "Client without backend"},
		{"locality failover without region", func(in *Intent) {
			in.Failover.Mode = FailoverModeLocality
			in.Backends[1].Cluster = "nogw"
			in.Clients.Placement = translate.Placement{Clusters: []string{"nogw"}}
		}, nil, "backends[1].cluster", "Missing region"},
		{"backend in the config namespace of a client cluster", func(in *Intent) {
			in.Backends[0].Namespace = translate.DefaultIstioNS
		}, nil, "backends[0].namespace", "Backend in the config namespace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := valid()
			tt.mutate(&in)
			reg := tt.reg
			if reg == nil {
				reg = testRegistry()
			}
			objs, err := Translate(in, reg)
			if err == nil {
				t.Fatalf("want an error at %s, got %d objects", tt.path, len(objs))
			}
			var es translate.Errors
			if !errors.As(err, &es) {
				t.Fatalf("want Errors, got %T: %v", err, err)
			}
			for _, e := range es {
				if e.Path.String() == tt.path && e.Summary == tt.summary {
					return
				}
			}
			t.Errorf("no %q error at %s in: %v", tt.summary, tt.path, err)
		})
	}
}

// The valid example must translate, or every case above passes vacuously.
func TestVirtualDestinationValidExample(t *testing.T) {
	objs, err := Translate(valid(), testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) == 0 {
		t.Fatal("no objects")
	}
}

func TestVirtualDestinationCollectsAllErrors(t *testing.T) {
	in := valid()
	in.Name = "Bad Name"
	in.Ports[0].Protocol = "SCTP"
	in.Backends[0].Cluster = "wine"
	in.Failover.OutlierDetection = &OutlierDetection{Interval: "soon"}
	_, err := Translate(in, testRegistry())
	var es translate.Errors
	if !errors.As(err, &es) {
		t.Fatalf("want Errors, got %v", err)
	}
	var paths []string
	for _, e := range es {
		paths = append(paths, e.Path.String())
	}
	sort.Strings(paths)
	want := "backends[0].cluster failover.outlier_detection.interval name ports[0].protocol"
	if got := strings.Join(paths, " "); got != want {
		t.Errorf("paths = %s, want %s", got, want)
	}
}

func TestValidateVirtualDestinationWithoutRegistry(t *testing.T) {
	if es := Validate(valid()); len(es) != 0 {
		t.Fatalf("valid intent: %v", es)
	}
	in := valid()
	in.Backends[1].Cluster = "wine" // needs the registry: not reported here
	in.Backends[1].Priority = -2
	es := Validate(in)
	if len(es) != 1 || es[0].Path.String() != "backends[1].priority" {
		t.Fatalf("got %v", es)
	}
}

func TestVirtualDestinationUnknownPlacement(t *testing.T) {
	reg := translate.NewRegistry(
		translate.Cluster{Name: "east", EastWestGateway: &translate.Gateway{Address: "203.0.113.10"}},
		translate.Cluster{Name: "late", LabelsUnknown: true, EastWestGateway: &translate.Gateway{Address: translate.Unknown("late.gateway")}},
	)
	in := valid()
	in.Backends[1].Cluster = "late"
	if _, err := Translate(in, reg); err != translate.ErrUnknownPlacement {
		t.Errorf("clients selector over unknown labels: got %v, want ErrUnknownPlacement", err)
	}
	in.Clients.Placement = translate.Placement{Clusters: []string{"east", "late"}}
	in.Backends[1].ExcludeFor = translate.Placement{ClusterSelector: map[string]string{"cloud": "aws"}}
	if _, err := Translate(in, reg); err != translate.ErrUnknownPlacement {
		t.Errorf("exclude_for selector over unknown labels: got %v, want ErrUnknownPlacement", err)
	}
	// Static errors win over an unknown placement: the user can fix them now.
	in.Name = ""
	if _, err := Translate(in, reg); err == translate.ErrUnknownPlacement || err == nil {
		t.Errorf("got %v, want the name error", err)
	}
}

// A cluster created in the same apply: its gateway address, network and
// region are placeholders, passed through untouched.
func TestVirtualDestinationUnknownTopology(t *testing.T) {
	reg := translate.NewRegistry(
		translate.Cluster{Name: "east", Network: "net-east", Region: "us-east-1", EastWestGateway: &translate.Gateway{Address: "203.0.113.10"}},
		translate.Cluster{Name: "late", Network: translate.Unknown("late.network"), Region: translate.Unknown("late.region"),
			EastWestGateway: &translate.Gateway{Address: translate.Unknown("late.gateway.address")}},
	)
	in := valid()
	in.Backends[1].Cluster = "late"
	in.Clients.Placement = translate.Placement{Clusters: []string{"east", "late"}}
	for _, mode := range []string{FailoverModePriority, FailoverModeLocality} {
		in.Failover.Mode = mode
		objs, err := Translate(in, reg)
		if err != nil {
			t.Fatalf("%s: %v", mode, err)
		}
		for _, o := range objs {
			unknown, err := o.HasUnknown()
			if err != nil {
				t.Fatal(err)
			}
			// In east, the client ServiceEntry points at late's gateway and,
			// in locality mode, the DestinationRule fails over to late's
			// region. In locality mode late's client objects show its own
			// region; in priority mode nothing in late depends on its
			// topology (endpoints carry no network), and its backend
			// objects never do.
			k := o.Key()
			want := k.Cluster == "late" && mode == FailoverModeLocality && !strings.Contains(k.Name, "-backend") ||
				k.Cluster == "east" && (k.Kind == "ServiceEntry" && !strings.Contains(k.Name, "-backend") ||
					mode == FailoverModeLocality && k.Kind == "DestinationRule" && !strings.Contains(k.Name, "-backend"))
			if unknown != want {
				t.Errorf("%s: %s: HasUnknown = %v, want %v", mode, k, unknown, want)
			}
		}
	}
}

func TestSubsetName(t *testing.T) {
	for cluster, want := range map[string]string{
		"east":      "east",
		"eu-west-1": "eu-west-1",
		"On_Prem":   "on-prem-",
		"":          "cluster-",
		"a.b":       "a-b-",
	} {
		got := SubsetName(cluster)
		if !strings.HasPrefix(got, want) || (want[len(want)-1] != '-' && got != want) {
			t.Errorf("SubsetName(%q) = %q, want %q...", cluster, got, want)
		}
		if !translate.ValidDNSLabel(got) {
			t.Errorf("SubsetName(%q) = %q is not a DNS label", cluster, got)
		}
	}
	if SubsetName("On_Prem") == SubsetName("on-prem") || SubsetName("On_Prem") == SubsetName("on_prem") {
		t.Error("distinct clusters share a subset")
	}
	long := SubsetName(strings.Repeat("X", 100))
	if len(long) > 63 || !translate.ValidDNSLabel(long) {
		t.Errorf("long name: %q", long)
	}
}

// istioFailoverPriority reimplements how Istio turns failoverPriority
// entries of the form key=value into an endpoint priority
// (pilot/pkg/networking/core/loadbalancer: applyFailoverPriorityPerLocality,
// then compaction): an endpoint matching the first m of n entries, and not
// entry m, gets n-m.
func istioFailoverPriority(entries []string, labels map[string]string) int {
	for j, e := range entries {
		k, v, _ := strings.Cut(e, "=")
		if labels[k] != v {
			return len(entries) - j
		}
	}
	return 0
}

func TestVDPriorityFailoverRanks(t *testing.T) {
	for tiers := 1; tiers <= 6; tiers++ {
		v := &view{cluster: &translate.Cluster{Name: "c0"}, client: true, tiers: tiers}
		for r := 0; r < tiers; r++ {
			name := fmt.Sprintf("c%d", r)
			v.targets = append(v.targets, target{
				backend: &Backend{Cluster: name, Namespace: "ns", Service: "svc", Priority: int64(10 * r)},
				cluster: &translate.Cluster{Name: name, EastWestGateway: &translate.Gateway{Address: "192.0.2.1"}}, rank: r, local: r == 0,
			})
		}
		p := &plan{in: valid(), mode: FailoverModePriority}
		tp := clientDestinationRule(p, v).Spec.TrafficPolicy
		lb := tp.GetLoadBalancer().GetLocalityLbSetting()
		if tiers == 1 {
			if lb.GetEnabled().GetValue() || len(lb.GetFailoverPriority()) != 0 {
				t.Errorf("one tier: want locality LB disabled, got %v", lb)
			}
			continue
		}
		if !lb.GetEnabled().GetValue() || len(lb.GetFailoverPriority()) != tiers-1 {
			t.Fatalf("%d tiers: got %v", tiers, lb)
		}
		for _, tg := range v.targets {
			ep := endpoint(p, v, tg)
			if got := istioFailoverPriority(lb.GetFailoverPriority(), ep.Labels); got != tg.rank {
				t.Errorf("%d tiers: endpoint of rank %d gets Envoy priority %d (labels %v)", tiers, tg.rank, got, ep.Labels)
			}
		}
	}
}

// Locality mode ranks backends by distance from the client: same zone,
// same region, the region of the lowest-priority backend outside the
// client's region, then the rest.
func TestVDLocalityRanks(t *testing.T) {
	mk := func(name, region, zone string, prio int64) target {
		return target{backend: &Backend{Cluster: name, Priority: prio}, cluster: &translate.Cluster{Name: name, Region: region, Zone: zone}}
	}
	client := &translate.Cluster{Name: "c", Region: "us-east-1", Zone: "us-east-1a"}
	v := &view{cluster: client, targets: []target{
		mk("eu", "eu-west-1", "", 1),
		mk("west", "us-west-2", "", 2),
		mk("east-b", "us-east-1", "us-east-1b", 5),
		mk("east-a", "us-east-1", "us-east-1a", 9),
		mk("asia", "ap-south-1", "", 1),
	}}
	rankTargets(v, FailoverModeLocality)
	var got []string
	for _, tg := range v.targets {
		got = append(got, fmt.Sprintf("%s:%d", tg.backend.Cluster, tg.rank))
	}
	// asia and eu both have priority 1 outside the region; asia wins the
	// tie by name, so ap-south-1 is the failover region.
	want := "east-a:0 east-b:1 asia:2 eu:3 west:3"
	if strings.Join(got, " ") != want {
		t.Errorf("ranks %s, want %s", strings.Join(got, " "), want)
	}
	if v.tiers != 4 {
		t.Errorf("tiers %d, want 4", v.tiers)
	}
}

// For each cluster's own host, Istio's failoverPriority rule (replayed by
// istioFailoverPriority) puts that cluster first and the others in the
// destination's order after it.
func TestVDSubsetFailoverOrder(t *testing.T) {
	p := &plan{in: valid(), mode: FailoverModePriority, namespace: translate.DefaultIstioNS}
	mk := func(name string, prio int64) target {
		return target{backend: &Backend{Cluster: name, Namespace: "ns", Service: "svc", Priority: prio}, cluster: &translate.Cluster{Name: name}, local: true}
	}
	v := &view{cluster: &translate.Cluster{Name: "a"}, targets: []target{mk("a", 0), mk("b", 1), mk("c", 1), mk("d", 2)}}
	rankTargets(v, FailoverModePriority)
	v.subsets = subsetOrders(p, v)
	want := map[string]map[string]int{
		"a": {"a": 0, "b": 1, "c": 1, "d": 2},
		"b": {"b": 0, "a": 1, "c": 2, "d": 3},
		"c": {"c": 0, "a": 1, "b": 2, "d": 3},
		"d": {"d": 0, "a": 1, "b": 2, "c": 2},
	}
	if len(v.subsets) != 4 {
		t.Fatalf("%d cluster orders, want 4", len(v.subsets))
	}
	for _, o := range v.subsets {
		dr := clusterHostDestinationRule(p, v, o)
		if want := ClusterHost(p.in.Hostname, o.cluster); dr.Spec.Host != want {
			t.Errorf("cluster %s: host %s, want %s", o.cluster, dr.Spec.Host, want)
		}
		if dr.Spec.TrafficPolicy.OutlierDetection == nil {
			t.Errorf("cluster %s: no outlier detection: Istio would not fail over", o.cluster)
		}
		fp := dr.Spec.GetTrafficPolicy().GetLoadBalancer().GetLocalityLbSetting().GetFailoverPriority()
		for _, tg := range v.targets {
			ep := endpoint(p, v, tg)
			got := istioFailoverPriority(fp, ep.Labels)
			// Istio compacts priorities (no gaps), as want does.
			if got != want[o.cluster][tg.backend.Cluster] {
				t.Errorf("host of %s: endpoint of %s gets priority %d, want %d (labels %v)", o.cluster, tg.backend.Cluster, got, want[o.cluster][tg.backend.Cluster], ep.Labels)
			}
		}
	}
}

func TestVDOutlierDefaults(t *testing.T) {
	o := effectiveOutlier(&Failover{OutlierDetection: &OutlierDetection{Interval: "1s"}})
	if o.consecutive5xx != 5 || o.interval.String() != "1s" || o.ejection.String() != "30s" || o.maxEjectionPercent != 100 {
		t.Errorf("got %+v", o)
	}
	if o := effectiveOutlier(nil); o.interval.String() != "10s" {
		t.Errorf("nil failover: got %+v", o)
	}
}

// The golden files check the output; this checks that every object is of a
// type and version the API server serves.
func TestVirtualDestinationObjectKinds(t *testing.T) {
	objs, err := Translate(valid(), testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o.Resource.(type) {
		case *networking.ServiceEntry, *networking.DestinationRule:
		default:
			t.Errorf("unexpected %T", o.Resource)
		}
		if got := o.Key().APIVersion; got != translate.NetworkingV1 {
			t.Errorf("%s: apiVersion %s", o.Key(), got)
		}
		if !translate.ValidDNSSubdomain(o.Resource.GetName()) || !translate.ValidDNSLabel(o.Resource.GetNamespace()) {
			t.Errorf("%s: invalid name or namespace", o.Key())
		}
	}
}

// VIPs stay in the reserved block, outside Istio's own allocation range,
// never end in .0 or .255, and are a function of the hostname alone. Over
// 20,000 hostnames the wider block keeps collisions rare (the old 65k-wide
// range gave ~50% at 300 destinations).
func TestVirtualDestinationVIPRange(t *testing.T) {
	seen := map[string]string{}
	collisions := 0
	for i := 0; i < 20000; i++ {
		host := fmt.Sprintf("svc-%d.global", i)
		vip := VIP(host)
		if vip != VIP(host) {
			t.Fatalf("VIP of %s is not stable", host)
		}
		ip, err := netip.ParseAddr(vip)
		if err != nil {
			t.Fatalf("VIP of %s: %v", host, err)
		}
		b := ip.As4()
		if b[0] < 241 || b[0] > 254 || b[3] == 0 || b[3] == 255 {
			t.Fatalf("VIP %s of %s is outside 241-254.x.x.1-254", vip, host)
		}
		if istioAutoAllocated.Contains(ip) {
			t.Fatalf("VIP %s of %s is in Istio's own range", vip, host)
		}
		if other, ok := seen[vip]; ok {
			collisions++
			t.Logf("%s and %s share %s (expected now and then: the plan-time check catches it)", other, host, vip)
		}
		seen[vip] = host
	}
	// Expected collisions among 20,000: n^2/2/233M = 0.86.
	if collisions > 5 {
		t.Errorf("%d collisions among 20,000 hostnames; the hash does not spread", collisions)
	}
	// Pinned: a changed function changes every client's DNS answer.
	if got := VIP("user.global"); got != "246.38.213.227" {
		t.Errorf("VIP of user.global changed to %s", got)
	}
}

func TestVirtualDestinationExplicitVIP(t *testing.T) {
	reg := translate.NewRegistry(translate.Cluster{Name: "east", Network: "net-east"})
	in := Intent{Name: "user", Hostname: "user.global",
		Ports:    []Port{{Number: 8080, Protocol: "HTTP"}},
		Backends: []Backend{{Cluster: "east", Namespace: "users", Service: "user"}},
		VIP:      "241.1.2.3"}
	objs, err := Translate(in, reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if se, ok := o.Resource.(*networking.ServiceEntry); ok && !strings.HasSuffix(se.Name, ".clusters") && (len(se.Spec.Addresses) != 1 || se.Spec.Addresses[0] != "241.1.2.3") {
			t.Errorf("%s: addresses %v, want [241.1.2.3]", o.Key(), se.Spec.Addresses)
		}
	}
	for vip, want := range map[string]string{"not-an-ip": "not an IP", "127.0.0.1": "loopback", "240.240.1.2": "240.240.0.0/16", "::": "unspecified"} {
		in.VIP = vip
		_, err := Translate(in, reg)
		if err == nil || !strings.Contains(err.Error(), "vip") || !strings.Contains(err.Error(), want) {
			t.Errorf("vip %q: got %v, want an error at vip saying %q", vip, err, want)
		}
	}
}

// Locality failover never produces the shape istiod 1.30 crash-loops on
// (translate.CheckIstioVersionShapes), even when every cluster runs 1.30.
func TestLocalityAvoidsIstio130Shape(t *testing.T) {
	in := valid()
	in.Failover = &Failover{Mode: FailoverModeLocality}
	reg := testRegistry()
	var clusters []translate.Cluster
	for _, name := range reg.Names() {
		c := *reg.Cluster(name)
		c.IstioVersion = "1.30"
		if c.Region == "" {
			c.Region = "r-" + name
		}
		clusters = append(clusters, c)
	}
	if _, err := Translate(in, translate.NewRegistry(clusters...)); err != nil {
		t.Errorf("locality failover on 1.30 clusters: %v", err)
	}
}

// hostnameOf is a valid hostname of n characters (n >= 11), labels of at
// most 63 characters, ending in .global.
func hostnameOf(n int) string {
	var labels []string
	left := n - len(".global")
	for left > 0 {
		l := min(left, 63)
		if left-l == 1 { // no empty label, no trailing dot
			l--
		}
		labels = append(labels, strings.Repeat("a", l))
		left -= l + 1
	}
	return strings.Join(labels, ".") + ".global"
}

// A hostname whose per-cluster hosts (<cluster>.cluster.<hostname>) would
// exceed Istio's 255-character host limit is refused at the hostname,
// naming the longest host and the longest hostname that fits; one that
// just fits translates, every host at most 255 characters.
func TestHostnameTooLongForItsPerClusterHosts(t *testing.T) {
	// The longest backend cluster is onprem: onprem.cluster. is 15.
	fits := MaxIstioHostLength - len("onprem.cluster.")
	in := valid()
	in.Hostname = hostnameOf(fits + 1)
	if len(in.Hostname) != fits+1 || !translate.ValidHostname(in.Hostname) {
		t.Fatalf("test hostname %q (%d) is not what the test needs", in.Hostname, len(in.Hostname))
	}
	es := Validate(in)
	if len(es) != 1 || es[0].Path.String() != "hostname" || !strings.Contains(es[0].Detail, `"onprem"`) ||
		!strings.Contains(es[0].Detail, fmt.Sprintf("at most %d characters (or shorter", fits)) || !strings.Contains(es[0].Detail, "256") {
		t.Fatalf("errors %v, want one at hostname naming onprem, the 256-character host and %d", es, fits)
	}
	in.Hostname = hostnameOf(fits)
	if es := Validate(in); len(es) != 0 {
		t.Fatalf("a hostname of %d characters is refused: %v", fits, es)
	}
	objs, err := Translate(in, testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	longest := 0
	for _, o := range objs {
		raw, err := json.Marshal(o.Resource)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Spec struct {
				Hosts []string `json:"hosts"`
				Host  string   `json:"host"`
			} `json:"spec"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		for _, h := range append(doc.Spec.Hosts, doc.Spec.Host) {
			longest = max(longest, len(h))
		}
	}
	if longest != MaxIstioHostLength {
		t.Fatalf("the longest host written is %d characters, want exactly %d (onprem's per-cluster host)", longest, MaxIstioHostLength)
	}
}
