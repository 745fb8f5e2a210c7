package translate

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"
	"sigs.k8s.io/yaml"
)

// tpGoldenIntent is the intent of a testdata/traffic-policy case: one
// policy with its destination, or several (compose) translated together.
type tpGoldenIntent struct {
	Policy      *TrafficPolicyIntent     `json:"policy,omitempty"`
	Destination TrafficPolicyDestination `json:"destination"`
	Compose     []NamedTrafficPolicy     `json:"compose,omitempty"`
}

var _ = registerGolden("traffic-policy", func(raw []byte, reg *Registry) ([]Object, error) {
	var in tpGoldenIntent
	if err := yaml.UnmarshalStrict(raw, &in); err != nil {
		return nil, err
	}
	if len(in.Compose) > 0 {
		return ComposeTrafficPolicies(in.Compose, reg)
	}
	if in.Policy == nil {
		return nil, errors.New("golden case has neither policy nor compose")
	}
	return TranslateTrafficPolicy(*in.Policy, in.Destination, reg)
})

func tpTestRegistry() *Registry {
	return NewRegistry(
		Cluster{Name: "eks", Labels: map[string]string{"cloud": "aws"}},
		Cluster{Name: "east", Labels: map[string]string{"cloud": "private"}},
		Cluster{Name: "onprem", Labels: map[string]string{"cloud": "private"}},
	)
}

// tpSeed is a valid policy touching every route feature, on a virtual
// destination backed by east and onprem, from the private clusters.
func tpSeed() (TrafficPolicyIntent, TrafficPolicyDestination) {
	percent := 5.0
	in := TrafficPolicyIntent{
		Name:    "user-resilience",
		Sources: TrafficPolicySources{Placement: Placement{ClusterSelector: map[string]string{"cloud": "private"}}, Namespaces: []string{"accounts"}, WorkloadLabels: map[string]string{"app": "account"}},
		Match:   []TrafficPolicyMatch{{URIPrefix: "/v2", Method: "GET", Headers: map[string]string{"x-canary": "true"}}},
		Timeout: "2s",
		Retries: &TrafficPolicyRetries{Attempts: 3, PerTryTimeout: "500ms", RetryOn: []string{"5xx", "connect-failure"}},
		Fault: &TrafficPolicyFault{
			Delay: &TrafficPolicyDelay{Percent: 10, FixedDelay: "100ms"},
			Abort: &TrafficPolicyAbort{Percent: 1, HTTPStatus: 503},
		},
		TrafficShift: []TrafficPolicyShift{{Local: true, Weight: 80}, {Cluster: "onprem", Weight: 20}},
		Mirror:       &TrafficPolicyMirror{Cluster: "east", Percent: &percent},
		Headers:      &TrafficPolicyHeaders{Request: &TrafficPolicyHeaderOps{Set: map[string]string{"x-mesh": "1"}, Remove: []string{"x-debug"}}},
		CORS:         &TrafficPolicyCORS{AllowOrigins: []string{"https://example.com"}, AllowMethods: []string{"GET"}},
	}
	dest := TrafficPolicyDestination{VirtualDestination: "user.global", BackendClusters: []string{"east", "onprem"}, VirtualDestinationName: "user"}
	return in, dest
}

// tpPaths returns the attribute paths of err, which must be Errors.
func tpPaths(t *testing.T, err error) []string {
	t.Helper()
	var errs Errors
	if !errors.As(err, &errs) {
		t.Fatalf("want Errors, got %T: %v", err, err)
	}
	paths := make([]string, len(errs))
	for i, e := range errs {
		paths[i] = e.Path.String()
	}
	return paths
}

func TestTrafficPolicySeedIsValid(t *testing.T) {
	in, dest := tpSeed()
	objs, err := TranslateTrafficPolicy(in, dest, tpTestRegistry())
	if err != nil {
		t.Fatal(err)
	}
	// One VirtualService in each private cluster, nothing in eks.
	if len(objs) != 2 || objs[0].Cluster != "east" || objs[1].Cluster != "onprem" {
		t.Fatalf("want VirtualServices in east and onprem, got %v", RenderYAML(t, objs))
	}
}

func TestTrafficPolicyValidation(t *testing.T) {
	neg := -1
	cases := []struct {
		name   string
		modify func(in *TrafficPolicyIntent, dest *TrafficPolicyDestination)
		want   []string // attribute paths, in order
	}{
		{"missing name", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Name = "" },
			[]string{"name"}},
		{"both destinations", func(_ *TrafficPolicyIntent, d *TrafficPolicyDestination) { d.Service = "user" },
			[]string{"destination"}},
		{"service without namespace", func(_ *TrafficPolicyIntent, d *TrafficPolicyDestination) {
			*d = TrafficPolicyDestination{Service: "user"}
		}, []string{"destination.namespace"}},
		{"invalid source namespace", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Sources.Namespaces = []string{"accounts", "Billing"}
		}, []string{"sources.namespaces[1]"}},
		{"unknown source cluster", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Sources.Placement = Placement{Clusters: []string{"east", "mars"}}
		}, []string{"sources.clusters[1]"}},
		{"two URI matches", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Match[0].URIExact = "/v2/users" },
			[]string{"match[0].uri_exact"}},
		{"bad regex", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Match = append(in.Match, TrafficPolicyMatch{URIRegex: "/v(2"})
		}, []string{"match[1].uri_regex"}},
		{"unknown method", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Match[0].Method = "get" },
			[]string{"match[0].method"}},
		{"upper-case match header", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Match[0].Headers = map[string]string{"X-Canary": "true"}
		}, []string{`match[0].headers["X-Canary"]`}},
		{"timeout not a duration", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Timeout = "2 seconds" },
			[]string{"timeout"}},
		{"timeout below 1ms", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Timeout = "500us" },
			[]string{"timeout"}},
		{"per-try timeout not whole ms", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Retries.PerTryTimeout = "1.5ms" },
			[]string{"retries.per_try_timeout"}},
		{"retries disabled with retry_on", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Retries.Attempts = 0 },
			[]string{"retries.attempts"}},
		{"unknown retry condition", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Retries.RetryOn = []string{"5xx", "timeout", "503"}
		}, []string{"retries.retry_on[1]"}},
		{"delay percent above 100", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Fault.Delay.Percent = 101 },
			[]string{"fault.delay.percent"}},
		{"abort percent zero", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Fault.Abort.Percent = 0 },
			[]string{"fault.abort.percent"}},
		{"abort status out of range", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Fault.Abort.HTTPStatus = 600 },
			[]string{"fault.abort.http_status"}},
		{"empty fault", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Fault = &TrafficPolicyFault{} },
			[]string{"fault"}},
		{"weights do not sum to 100", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.TrafficShift[1].Weight = 30 },
			[]string{"traffic_shift"}},
		{"weight out of range", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.TrafficShift = []TrafficPolicyShift{{Local: true, Weight: 120}, {Cluster: "onprem", Weight: -20}}
		}, []string{"traffic_shift[0].weight", "traffic_shift[1].weight"}},
		{"two targets in one entry", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.TrafficShift[0].Cluster = "east" },
			[]string{"traffic_shift[0]"}},
		{"same target twice", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.TrafficShift = []TrafficPolicyShift{{Cluster: "onprem", Weight: 50}, {Cluster: "onprem", Weight: 50}}
		}, []string{"traffic_shift[1]"}},
		{"shift to a cluster that does not back the destination", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.TrafficShift[1].Cluster = "eks"
		}, []string{"traffic_shift[1].cluster"}},
		{"shift to an unregistered cluster", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.TrafficShift[1].Cluster = "wine"
		}, []string{"traffic_shift[1].cluster"}},
		{"local without a backend in a source cluster", func(in *TrafficPolicyIntent, d *TrafficPolicyDestination) {
			d.BackendClusters = []string{"onprem"}
			in.Mirror.Cluster = "onprem"
		}, []string{"traffic_shift[0].local"}},
		{"subset on a virtual destination", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.TrafficShift[1] = TrafficPolicyShift{Subset: "v2", Labels: map[string]string{"version": "v2"}, Weight: 20}
		}, []string{"traffic_shift[1].subset"}},
		{"subset without labels", func(in *TrafficPolicyIntent, d *TrafficPolicyDestination) {
			*d = TrafficPolicyDestination{Service: "reviews", Namespace: "bookinfo"}
			in.TrafficShift = []TrafficPolicyShift{{Subset: "v1", Labels: map[string]string{"version": "v1"}, Weight: 90}, {Subset: "v2", Weight: 10}}
			in.Mirror = nil
		}, []string{"traffic_shift[1].labels"}},
		{"subset named after a cluster", func(in *TrafficPolicyIntent, d *TrafficPolicyDestination) {
			*d = TrafficPolicyDestination{Service: "reviews", Namespace: "bookinfo"}
			in.TrafficShift = []TrafficPolicyShift{{Local: true, Weight: 90}, {Subset: "onprem", Labels: map[string]string{"version": "v2"}, Weight: 10}}
			in.Mirror = nil
		}, []string{"traffic_shift[1].subset"}},
		{"mirror percent above 100", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			p := 200.0
			in.Mirror.Percent = &p
		}, []string{"mirror.percent"}},
		{"mirror without target", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.Mirror.Cluster = "" },
			[]string{"mirror"}},
		{"header set and removed", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Headers.Request.Remove = []string{"X-Mesh"}
		}, []string{"headers.request.remove[0]"}},
		{"host header changed", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Headers.Response = &TrafficPolicyHeaderOps{Set: map[string]string{"Host": "x"}}
		}, []string{`headers.response.set["Host"]`}},
		{"unpaired percent in header value", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Headers.Request.Set["x-mesh"] = "100%"
		}, []string{`headers.request.set["x-mesh"]`}},
		{"CORS without origins", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.CORS.AllowOrigins = nil },
			[]string{"cors.allow_origins"}},
		{"CORS max age not whole seconds", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) { in.CORS.MaxAge = "1500ms" },
			[]string{"cors.max_age"}},
		{"CORS method lower case", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.CORS.AllowMethods = []string{"GET", "post"}
		},
			[]string{"cors.allow_methods[1]"}},
		{"negative connection count", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Sources = TrafficPolicySources{Placement: in.Sources.Placement}
			in.Match = nil
			in.ConnectionPool = &TrafficPolicyConnectionPool{TCP: &TrafficPolicyTCPPool{MaxConnections: -1, Keepalive: &TrafficPolicyKeepalive{Time: "1h", Probes: -2}}}
		}, []string{"connection_pool.tcp.max_connections", "connection_pool.tcp.keepalive.probes"}},
		{"negative outlier count and bad percent", func(in *TrafficPolicyIntent, d *TrafficPolicyDestination) {
			*d = TrafficPolicyDestination{Service: "user", Namespace: "users"}
			in.Sources = TrafficPolicySources{Placement: in.Sources.Placement}
			in.Match = nil
			in.OutlierDetection = &TrafficPolicyOutlierDetection{Consecutive5xxErrors: &neg, MaxEjectionPercent: 101, Interval: "10"}
		}, []string{"outlier_detection.consecutive_5xx_errors", "outlier_detection.interval", "outlier_detection.max_ejection_percent"}},
		{"passthrough on a virtual destination", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Sources = TrafficPolicySources{Placement: in.Sources.Placement}
			in.Match = nil
			in.LoadBalancer = "PASSTHROUGH"
		}, []string{"load_balancer"}},
		{"TLS disabled on a virtual destination", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.Sources = TrafficPolicySources{Placement: in.Sources.Placement}
			in.Match = nil
			in.TLSMode = "DISABLE"
		}, []string{"tls_mode"}},
		{"destination setting for some callers", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			in.LoadBalancer = "RANDOM"
			in.ConnectionPool = &TrafficPolicyConnectionPool{HTTP: &TrafficPolicyHTTPPool{MaxRetries: 3}}
			in.TLSMode = "ISTIO_MUTUAL" // the virtual destination's own: not written, not refused
		}, []string{"connection_pool", "load_balancer"}},
		{"outlier detection on a virtual destination", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			five := 5
			in.Sources = TrafficPolicySources{Placement: in.Sources.Placement}
			in.Match = nil
			in.OutlierDetection = &TrafficPolicyOutlierDetection{Consecutive5xxErrors: &five}
		}, []string{"outlier_detection"}},
		{"virtual destination hostname without a dot", func(_ *TrafficPolicyIntent, d *TrafficPolicyDestination) {
			d.VirtualDestination = "user"
		}, []string{"destination.virtual_destination"}},
		{"no source cluster is a client", func(_ *TrafficPolicyIntent, d *TrafficPolicyDestination) {
			d.ClientBackends = map[string][]string{"eks": {"east", "onprem"}}
		}, []string{"sources"}},
		{"shift to a backend excluded for a source cluster", func(_ *TrafficPolicyIntent, d *TrafficPolicyDestination) {
			d.ClientBackends = map[string][]string{"east": {"east", "onprem"}, "onprem": {"onprem"}}
		}, []string{"mirror.cluster"}},
		{"virtual destination rule not resolved", func(in *TrafficPolicyIntent, d *TrafficPolicyDestination) {
			in.Sources = TrafficPolicySources{Placement: in.Sources.Placement}
			in.Match = nil
			in.LoadBalancer = "RANDOM"
			d.VirtualDestinationName = ""
		}, []string{"destination.virtual_destination"}},
		{"nothing to do", func(in *TrafficPolicyIntent, _ *TrafficPolicyDestination) {
			*in = TrafficPolicyIntent{Name: "idle"}
		}, []string{""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, dest := tpSeed()
			tc.modify(&in, &dest)
			_, err := TranslateTrafficPolicy(in, dest, tpTestRegistry())
			if err == nil {
				t.Fatal("want an error")
			}
			got := tpPaths(t, err)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("paths = %q, want %q\n%v", got, tc.want, err)
			}
		})
	}
}

func TestTrafficPolicyUnknownValues(t *testing.T) {
	in, dest := tpSeed()
	in.Timeout = Unknown("timeout")
	in.Match[0].Method = Unknown("method")
	if errs := ValidateTrafficPolicy(in, dest); len(errs) > 0 {
		t.Fatalf("unknown values must not be validated: %v", errs)
	}

	// Labels known only after apply: the placement is unknown.
	reg := NewRegistry(Cluster{Name: "east", LabelsUnknown: true}, Cluster{Name: "onprem"})
	in, dest = tpSeed()
	if _, err := TranslateTrafficPolicy(in, dest, reg); err != ErrUnknownPlacement {
		t.Fatalf("want ErrUnknownPlacement, got %v", err)
	}
	// ... but an invalid policy still reports its errors.
	in.Timeout = "soon"
	if _, err := TranslateTrafficPolicy(in, dest, reg); err == ErrUnknownPlacement || err == nil {
		t.Fatalf("want validation errors, got %v", err)
	}
}

// tpOneRoute translates in from east and returns the policy's route.
func tpOneRoute(t *testing.T, in TrafficPolicyIntent, dest TrafficPolicyDestination) *networkingapi.HTTPRoute {
	t.Helper()
	objs, err := TranslateTrafficPolicy(in, dest, tpTestRegistry())
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if vs, ok := o.Resource.(*networking.VirtualService); ok && o.Cluster == "east" {
			return vs.Spec.Http[0]
		}
	}
	t.Fatalf("no VirtualService in east")
	return nil
}

func TestTrafficPolicyRouteFeatures(t *testing.T) {
	base := func() TrafficPolicyIntent {
		return TrafficPolicyIntent{Name: "p", Sources: TrafficPolicySources{Placement: Placement{Clusters: []string{"east"}}}}
	}
	vd := TrafficPolicyDestination{VirtualDestination: "user.global", BackendClusters: []string{"east", "onprem"}, VirtualDestinationName: "user"}
	// host routes to the hostname, or to one cluster's own host (where
	// that cluster comes first, VirtualDestinationClusterHost).
	host := func(cluster string, weight int32) *networkingapi.HTTPRouteDestination {
		h := "user.global"
		if cluster != "" {
			h = VirtualDestinationClusterHost(h, cluster)
		}
		return &networkingapi.HTTPRouteDestination{Destination: &networkingapi.Destination{Host: h}, Weight: weight}
	}
	cases := []struct {
		name   string
		modify func(in *TrafficPolicyIntent)
		want   *networkingapi.HTTPRoute
	}{
		{"timeout only routes to the host", func(in *TrafficPolicyIntent) { in.Timeout = "1m30s" },
			&networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("", 0)}, Timeout: tpDurationpb("90s")}},
		{"retries deduplicate retry_on", func(in *TrafficPolicyIntent) {
			in.Retries = &TrafficPolicyRetries{Attempts: 2, RetryOn: []string{"5xx", "reset", "5xx"}}
		}, &networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("", 0)},
			Retries: &networkingapi.HTTPRetry{Attempts: 2, RetryOn: "5xx,reset"}}},
		{"local and the same cluster add up", func(in *TrafficPolicyIntent) {
			in.TrafficShift = []TrafficPolicyShift{{Local: true, Weight: 60}, {Cluster: "east", Weight: 30}, {Cluster: "onprem", Weight: 10}}
		}, nil}, // invalid: duplicate target? no: local and east differ; checked below
		{"zero weights are dropped, one destination has no weight", func(in *TrafficPolicyIntent) {
			in.TrafficShift = []TrafficPolicyShift{{Cluster: "onprem", Weight: 100}, {Local: true, Weight: 0}}
		}, &networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("onprem", 0)}}},
		{"mirror to a cluster", func(in *TrafficPolicyIntent) {
			in.Mirror = &TrafficPolicyMirror{Cluster: "onprem"}
		}, &networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("", 0)},
			Mirror: &networkingapi.Destination{Host: "onprem.cluster.user.global"}}},
		{"CORS any origin is a regex", func(in *TrafficPolicyIntent) {
			in.CORS = &TrafficPolicyCORS{AllowOrigins: []string{"*"}}
		}, &networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("", 0)},
			CorsPolicy: &networkingapi.CorsPolicy{AllowOrigins: []*networkingapi.StringMatch{{MatchType: &networkingapi.StringMatch_Regex{Regex: ".*"}}}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.modify(&in)
			got := tpOneRoute(t, in, vd)
			want := tc.want
			if want == nil {
				// local (east) and east merge into one destination of 90.
				want = &networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("east", 90), host("onprem", 10)}}
			}
			if !proto.Equal(got, want) {
				t.Errorf("route =\n%v\nwant\n%v", got, want)
			}
		})
	}
}

func TestTrafficPolicyIntersect(t *testing.T) {
	cases := []struct {
		name string
		a, b tpCond
		want tpOverlap
		both tpCond
	}{
		{"any and a namespace", tpCond{}, tpCond{Namespace: "a"}, tpOverlaps, tpCond{Namespace: "a"}},
		{"two namespaces", tpCond{Namespace: "a"}, tpCond{Namespace: "b"}, tpDisjoint, tpCond{}},
		{"labels merge", tpCond{Labels: map[string]string{"app": "x"}}, tpCond{Labels: map[string]string{"v": "1"}}, tpOverlaps,
			tpCond{Labels: map[string]string{"app": "x", "v": "1"}}},
		{"labels clash", tpCond{Labels: map[string]string{"app": "x"}}, tpCond{Labels: map[string]string{"app": "y"}}, tpDisjoint, tpCond{}},
		{"methods", tpCond{Method: "GET"}, tpCond{Method: "POST"}, tpDisjoint, tpCond{}},
		{"nested prefixes", tpCond{URIKind: "prefix", URI: "/v2"}, tpCond{URIKind: "prefix", URI: "/v2/users"}, tpOverlaps,
			tpCond{URIKind: "prefix", URI: "/v2/users"}},
		{"sibling prefixes", tpCond{URIKind: "prefix", URI: "/v1"}, tpCond{URIKind: "prefix", URI: "/v2"}, tpDisjoint, tpCond{}},
		{"exact under prefix", tpCond{URIKind: "prefix", URI: "/v2"}, tpCond{URIKind: "exact", URI: "/v2/x"}, tpOverlaps,
			tpCond{URIKind: "exact", URI: "/v2/x"}},
		{"exact matching regex", tpCond{URIKind: "regex", URI: "/v[0-9]+"}, tpCond{URIKind: "exact", URI: "/v2"}, tpOverlaps,
			tpCond{URIKind: "exact", URI: "/v2"}},
		{"exact not matching regex", tpCond{URIKind: "regex", URI: "/v[0-9]+"}, tpCond{URIKind: "exact", URI: "/v2/x"}, tpDisjoint, tpCond{}},
		{"regex and prefix", tpCond{URIKind: "regex", URI: "/v.*"}, tpCond{URIKind: "prefix", URI: "/v2"}, tpUndecided, tpCond{}},
		{"same regex", tpCond{URIKind: "regex", URI: "/v.*"}, tpCond{URIKind: "regex", URI: "/v.*", Method: "GET"}, tpOverlaps,
			tpCond{URIKind: "regex", URI: "/v.*", Method: "GET"}},
		{"headers clash", tpCond{Headers: map[string]string{"x": "1"}}, tpCond{Headers: map[string]string{"x": "2"}}, tpDisjoint, tpCond{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, order := range [][2]tpCond{{tc.a, tc.b}, {tc.b, tc.a}} {
				both, got := tpIntersect(order[0], order[1])
				if got != tc.want {
					t.Fatalf("overlap = %v, want %v", got, tc.want)
				}
				if got == tpOverlaps && both.key() != tc.both.key() {
					t.Errorf("intersection = %s, want %s", both.key(), tc.both.key())
				}
			}
		})
	}
}

func TestCheckTrafficPolicyConflicts(t *testing.T) {
	reg := tpTestRegistry()
	vd := TrafficPolicyDestination{VirtualDestination: "user.global", BackendClusters: []string{"east", "onprem"}, VirtualDestinationName: "user"}
	policy := func(name string, modify func(*TrafficPolicyIntent)) NamedTrafficPolicy {
		in := TrafficPolicyIntent{Name: name}
		modify(&in)
		return NamedTrafficPolicy{Policy: in, Destination: vd}
	}
	cases := []struct {
		name string
		a, b NamedTrafficPolicy
		want []string // error paths; nil means compatible
	}{
		{"different settings on the same requests",
			policy("a", func(in *TrafficPolicyIntent) { in.Timeout = "1s" }),
			policy("b", func(in *TrafficPolicyIntent) { in.Retries = &TrafficPolicyRetries{Attempts: 1} }), nil},
		{"same setting, same value",
			policy("a", func(in *TrafficPolicyIntent) { in.Timeout = "1s" }),
			policy("b", func(in *TrafficPolicyIntent) { in.Timeout = "1000ms"; in.Sources.Namespaces = []string{"x"} }), nil},
		{"same setting, different value, overlapping",
			policy("a", func(in *TrafficPolicyIntent) { in.Timeout = "1s" }),
			policy("b", func(in *TrafficPolicyIntent) { in.Timeout = "2s"; in.Match = []TrafficPolicyMatch{{Method: "GET"}} }),
			[]string{"timeout"}},
		{"same setting, different value, disjoint clusters",
			policy("a", func(in *TrafficPolicyIntent) { in.Timeout = "1s"; in.Sources.Clusters = []string{"east"} }),
			policy("b", func(in *TrafficPolicyIntent) { in.Timeout = "2s"; in.Sources.Clusters = []string{"onprem"} }), nil},
		{"same setting, different value, disjoint workloads",
			policy("a", func(in *TrafficPolicyIntent) {
				in.Timeout = "1s"
				in.Sources.WorkloadLabels = map[string]string{"app": "a"}
			}),
			policy("b", func(in *TrafficPolicyIntent) {
				in.Timeout = "2s"
				in.Sources.WorkloadLabels = map[string]string{"app": "b"}
			}), nil},
		{"different headers combine",
			policy("a", func(in *TrafficPolicyIntent) {
				in.Headers = &TrafficPolicyHeaders{Request: &TrafficPolicyHeaderOps{Set: map[string]string{"x-a": "1"}}}
			}),
			policy("b", func(in *TrafficPolicyIntent) {
				in.Headers = &TrafficPolicyHeaders{Request: &TrafficPolicyHeaderOps{Remove: []string{"x-b"}}}
			}), nil},
		{"one header set and removed",
			policy("a", func(in *TrafficPolicyIntent) {
				in.Headers = &TrafficPolicyHeaders{Request: &TrafficPolicyHeaderOps{Set: map[string]string{"x-a": "1"}}}
			}),
			policy("b", func(in *TrafficPolicyIntent) {
				in.Headers = &TrafficPolicyHeaders{Request: &TrafficPolicyHeaderOps{Remove: []string{"X-A"}}}
			}), []string{"headers.request.remove[0]"}},
		{"destination settings, different fields",
			policy("a", func(in *TrafficPolicyIntent) { in.LoadBalancer = "RANDOM" }),
			policy("b", func(in *TrafficPolicyIntent) {
				in.ConnectionPool = &TrafficPolicyConnectionPool{TCP: &TrafficPolicyTCPPool{MaxConnections: 5}}
			}), nil},
		{"destination settings, same field",
			policy("a", func(in *TrafficPolicyIntent) { in.LoadBalancer = "RANDOM"; in.Sources.Clusters = []string{"east"} }),
			policy("b", func(in *TrafficPolicyIntent) { in.LoadBalancer = "LEAST_REQUEST" }), []string{"load_balancer"}},
		{"undecidable overlap",
			policy("a", func(in *TrafficPolicyIntent) { in.Timeout = "1s"; in.Match = []TrafficPolicyMatch{{URIRegex: "/a.*"}} }),
			policy("b", func(in *TrafficPolicyIntent) { in.Timeout = "1s"; in.Match = []TrafficPolicyMatch{{URIPrefix: "/a"}} }),
			[]string{"match"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, pair := range [][2]NamedTrafficPolicy{{tc.a, tc.b}, {tc.b, tc.a}} {
				err := CheckTrafficPolicyConflicts(pair[0], pair[1], reg)
				if tc.want == nil {
					if err != nil {
						t.Fatalf("want compatible, got %v", err)
					}
					continue
				}
				if err == nil {
					t.Fatal("want a conflict")
				}
				if got := tpPaths(t, err); strings.Join(got, " ") != strings.Join(tc.want, " ") {
					t.Errorf("paths = %q, want %q", got, tc.want)
				}
				if msg := err.Error(); !strings.Contains(msg, `"a"`) || !strings.Contains(msg, `"b"`) {
					t.Errorf("the error must name both policies: %v", err)
				}
			}
		})
	}
}

func TestCheckTrafficPolicyConflictsIgnoresInvalidPolicies(t *testing.T) {
	vd := TrafficPolicyDestination{VirtualDestination: "user.global", VirtualDestinationName: "user"}
	a := NamedTrafficPolicy{Policy: TrafficPolicyIntent{Name: "a", Timeout: "1s"}, Destination: vd}
	b := NamedTrafficPolicy{Policy: TrafficPolicyIntent{Name: "b", Timeout: "forever"}, Destination: vd}
	if err := CheckTrafficPolicyConflicts(a, b, tpTestRegistry()); err != nil {
		t.Fatalf("an invalid policy reports its own errors; want nil, got %v", err)
	}
}

// Composition does not depend on the order policies come in.
func TestComposeTrafficPoliciesOrderIndependent(t *testing.T) {
	reg := tpTestRegistry()
	svc := TrafficPolicyDestination{Service: "user", Namespace: "users"}
	ps := []NamedTrafficPolicy{
		{Policy: TrafficPolicyIntent{Name: "c", Timeout: "3s"}, Destination: svc},
		{Policy: TrafficPolicyIntent{Name: "a", Sources: TrafficPolicySources{Namespaces: []string{"x"}},
			Retries: &TrafficPolicyRetries{Attempts: 1}}, Destination: svc},
		{Policy: TrafficPolicyIntent{Name: "b", Match: []TrafficPolicyMatch{{Method: "GET"}},
			Fault: &TrafficPolicyFault{Abort: &TrafficPolicyAbort{Percent: 1, HTTPStatus: 500}}}, Destination: svc},
	}
	first, err := ComposeTrafficPolicies(ps, reg)
	if err != nil {
		t.Fatal(err)
	}
	reversed := []NamedTrafficPolicy{ps[2], ps[1], ps[0]}
	second, err := ComposeTrafficPolicies(reversed, reg)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := string(RenderYAML(t, first)), string(RenderYAML(t, second)); a != b {
		t.Fatalf("order changes the output:\n%s\n---\n%s", a, b)
	}
	// a+b+c overlap on namespace x with GET: the first route carries all
	// three settings.
	vs := first[0].Resource.(*networking.VirtualService)
	if got := vs.Spec.Http[0].Name; got != "a+b+c" {
		t.Errorf("first route = %q, want a+b+c", got)
	}
}

func TestComposeTrafficPoliciesDuplicateName(t *testing.T) {
	svc := TrafficPolicyDestination{Service: "user", Namespace: "users"}
	p := NamedTrafficPolicy{Policy: TrafficPolicyIntent{Name: "a", Timeout: "1s"}, Destination: svc}
	if _, err := ComposeTrafficPolicies([]NamedTrafficPolicy{p, p}, tpTestRegistry()); err == nil {
		t.Fatal("want an error for two policies of one name")
	}
}

func TestTrafficPolicyDestinationOf(t *testing.T) {
	reg := NewRegistry(
		Cluster{Name: "east", Labels: map[string]string{"cloud": "private"}, EastWestGateway: &Gateway{Address: "10.0.0.1"}},
		Cluster{Name: "onprem", Labels: map[string]string{"cloud": "private"}, EastWestGateway: &Gateway{Address: "10.0.0.2"}},
		Cluster{Name: "west", Labels: map[string]string{"cloud": "aws"}, EastWestGateway: &Gateway{Address: "10.0.0.3"}},
	)
	vd := VirtualDestinationIntent{
		Name: "user", Hostname: "user.global",
		Ports: []VirtualDestinationPort{{Number: 8080, Protocol: "HTTP"}},
		Backends: []VirtualDestinationBackend{
			{Cluster: "east", Namespace: "users", Service: "user"},
			{Cluster: "west", Namespace: "users", Service: "user", Priority: 1,
				ExcludeFor: Placement{ClusterSelector: map[string]string{"cloud": "private"}}},
		},
	}
	d := TrafficPolicyDestinationOf(vd, reg)
	if d.VirtualDestinationName != "user" || strings.Join(d.BackendClusters, ",") != "east,west" {
		t.Fatalf("destination = %+v", d)
	}
	want := map[string]string{"east": "east", "onprem": "east", "west": "east,west"}
	if len(d.ClientBackends) != len(want) {
		t.Fatalf("client backends = %v, want %v", d.ClientBackends, want)
	}
	for c, bs := range want {
		if got := strings.Join(d.ClientBackends[c], ","); got != bs {
			t.Errorf("client %s reaches %q, want %q", c, got, bs)
		}
	}
	// Shifting to west from every client is refused: east and onprem are
	// excluded from it.
	in := TrafficPolicyIntent{Name: "p", TrafficShift: []TrafficPolicyShift{{Cluster: "east", Weight: 90}, {Cluster: "west", Weight: 10}}}
	_, err := TranslateTrafficPolicy(in, d, reg)
	if got := tpPaths(t, err); strings.Join(got, " ") != "traffic_shift[1].cluster" {
		t.Errorf("paths = %q (%v)", got, err)
	}
	// An invalid virtual destination still names its backends.
	vd.Backends[0].Cluster = "mars"
	if d := TrafficPolicyDestinationOf(vd, reg); d.ClientBackends != nil || len(d.BackendClusters) != 2 {
		t.Errorf("destination of an invalid virtual destination = %+v", d)
	}
}
