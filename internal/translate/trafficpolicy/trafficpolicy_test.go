package trafficpolicy

import (
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/translatetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"

	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"
	"sigs.k8s.io/yaml"
)

// goldenIntent is the intent of a golden case (testdata/): one
// policy with its destination, or several (compose) translated together.
type goldenIntent struct {
	Policy      *Intent     `json:"policy,omitempty"`
	Destination Destination `json:"destination"`
	Compose     []Named     `json:"compose,omitempty"`
}

// TestGolden translates every case of testdata/ and compares it with its
// golden file (REFRESH_GOLDEN=true rewrites them).
func TestGolden(t *testing.T) {
	translatetest.Golden(t, func(raw []byte, reg *translate.Registry) ([]translate.Object, error) {
		var in goldenIntent
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		if len(in.Compose) > 0 {
			return Compose(in.Compose, reg)
		}
		if in.Policy == nil {
			return nil, errors.New("golden case has neither policy nor compose")
		}
		return Translate(*in.Policy, in.Destination, reg)
	})
}

func testRegistry() *translate.Registry {
	return translate.NewRegistry(
		translate.Cluster{Name: "eks", Labels: map[string]string{"cloud": "aws"}},
		translate.Cluster{Name: "east", Labels: map[string]string{"cloud": "private"}},
		translate.Cluster{Name: "onprem", Labels: map[string]string{"cloud": "private"}},
	)
}

// seed is a valid policy touching every route feature, on a virtual
// destination backed by east and onprem, from the private clusters.
func seed() (Intent, Destination) {
	percent := 5.0
	in := Intent{
		Name:    "user-resilience",
		Sources: Sources{Placement: translate.Placement{ClusterSelector: map[string]string{"cloud": "private"}}, Namespaces: []string{"accounts"}, WorkloadLabels: map[string]string{"app": "account"}},
		Match:   []Match{{URIPrefix: "/v2", Method: "GET", Headers: map[string]string{"x-canary": "true"}}},
		Timeout: "2s",
		Retries: &Retries{Attempts: 3, PerTryTimeout: "500ms", RetryOn: []string{"5xx", "connect-failure"}},
		Fault: &Fault{
			Delay: &Delay{Percent: 10, FixedDelay: "100ms"},
			Abort: &Abort{Percent: 1, HTTPStatus: 503},
		},
		TrafficShift: []Shift{{Local: true, Weight: 80}, {Cluster: "onprem", Weight: 20}},
		Mirror:       &Mirror{Cluster: "east", Percent: &percent},
		Headers:      &Headers{Request: &HeaderOps{Set: map[string]string{"x-mesh": "1"}, Remove: []string{"x-debug"}}},
		CORS:         &CORS{AllowOrigins: []string{"https://example.com"}, AllowMethods: []string{"GET"}},
	}
	dest := Destination{VirtualDestination: "user.global", BackendClusters: []string{"east", "onprem"}, VirtualDestinationName: "user"}
	return in, dest
}

// paths returns the attribute paths of err, which must be Errors.
func paths(t *testing.T, err error) []string {
	t.Helper()
	var errs translate.Errors
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
	in, dest := seed()
	objs, err := Translate(in, dest, testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	// One VirtualService in each private cluster, nothing in eks.
	if len(objs) != 2 || objs[0].Cluster != "east" || objs[1].Cluster != "onprem" {
		t.Fatalf("want VirtualServices in east and onprem, got %v", translatetest.RenderYAML(t, objs))
	}
}

func TestTrafficPolicyValidation(t *testing.T) {
	neg := -1
	cases := []struct {
		name   string
		modify func(in *Intent, dest *Destination)
		want   []string // attribute paths, in order
	}{
		{"missing name", func(in *Intent, _ *Destination) { in.Name = "" },
			[]string{"name"}},
		{"both destinations", func(_ *Intent, d *Destination) { d.Service = "user" },
			[]string{"destination"}},
		{"service without namespace", func(_ *Intent, d *Destination) {
			*d = Destination{Service: "user"}
		}, []string{"destination.namespace"}},
		{"invalid source namespace", func(in *Intent, _ *Destination) {
			in.Sources.Namespaces = []string{"accounts", "Billing"}
		}, []string{"sources.namespaces[1]"}},
		{"unknown source cluster", func(in *Intent, _ *Destination) {
			in.Sources.Placement = translate.Placement{Clusters: []string{"east", "mars"}}
		}, []string{"sources.clusters[1]"}},
		{"two URI matches", func(in *Intent, _ *Destination) { in.Match[0].URIExact = "/v2/users" },
			[]string{"match[0].uri_exact"}},
		{"bad regex", func(in *Intent, _ *Destination) {
			in.Match = append(in.Match, Match{URIRegex: "/v(2"})
		}, []string{"match[1].uri_regex"}},
		{"unknown method", func(in *Intent, _ *Destination) { in.Match[0].Method = "get" },
			[]string{"match[0].method"}},
		{"upper-case match header", func(in *Intent, _ *Destination) {
			in.Match[0].Headers = map[string]string{"X-Canary": "true"}
		}, []string{`match[0].headers["X-Canary"]`}},
		{"timeout not a duration", func(in *Intent, _ *Destination) { in.Timeout = "2 seconds" },
			[]string{"timeout"}},
		{"timeout below 1ms", func(in *Intent, _ *Destination) { in.Timeout = "500us" },
			[]string{"timeout"}},
		{"per-try timeout not whole ms", func(in *Intent, _ *Destination) { in.Retries.PerTryTimeout = "1.5ms" },
			[]string{"retries.per_try_timeout"}},
		{"retries disabled with retry_on", func(in *Intent, _ *Destination) { in.Retries.Attempts = 0 },
			[]string{"retries.attempts"}},
		{"unknown retry condition", func(in *Intent, _ *Destination) {
			in.Retries.RetryOn = []string{"5xx", "timeout", "503"}
		}, []string{"retries.retry_on[1]"}},
		{"delay percent above 100", func(in *Intent, _ *Destination) { in.Fault.Delay.Percent = 101 },
			[]string{"fault.delay.percent"}},
		{"abort percent zero", func(in *Intent, _ *Destination) { in.Fault.Abort.Percent = 0 },
			[]string{"fault.abort.percent"}},
		{"abort status out of range", func(in *Intent, _ *Destination) { in.Fault.Abort.HTTPStatus = 600 },
			[]string{"fault.abort.http_status"}},
		{"empty fault", func(in *Intent, _ *Destination) { in.Fault = &Fault{} },
			[]string{"fault"}},
		{"weights do not sum to 100", func(in *Intent, _ *Destination) { in.TrafficShift[1].Weight = 30 },
			[]string{"traffic_shift"}},
		{"weight out of range", func(in *Intent, _ *Destination) {
			in.TrafficShift = []Shift{{Local: true, Weight: 120}, {Cluster: "onprem", Weight: -20}}
		}, []string{"traffic_shift[0].weight", "traffic_shift[1].weight"}},
		{"two targets in one entry", func(in *Intent, _ *Destination) { in.TrafficShift[0].Cluster = "east" },
			[]string{"traffic_shift[0]"}},
		{"same target twice", func(in *Intent, _ *Destination) {
			in.TrafficShift = []Shift{{Cluster: "onprem", Weight: 50}, {Cluster: "onprem", Weight: 50}}
		}, []string{"traffic_shift[1]"}},
		{"shift to a cluster that does not back the destination", func(in *Intent, _ *Destination) {
			in.TrafficShift[1].Cluster = "eks"
		}, []string{"traffic_shift[1].cluster"}},
		{"shift to an unregistered cluster", func(in *Intent, _ *Destination) {
			in.TrafficShift[1].Cluster = "wine"
		}, []string{"traffic_shift[1].cluster"}},
		{"local without a backend in a source cluster", func(in *Intent, d *Destination) {
			d.BackendClusters = []string{"onprem"}
			in.Mirror.Cluster = "onprem"
		}, []string{"traffic_shift[0].local"}},
		{"subset on a virtual destination", func(in *Intent, _ *Destination) {
			in.TrafficShift[1] = Shift{Subset: "v2", Labels: map[string]string{"version": "v2"}, Weight: 20}
		}, []string{"traffic_shift[1].subset"}},
		{"subset without labels", func(in *Intent, d *Destination) {
			*d = Destination{Service: "reviews", Namespace: "bookinfo"}
			in.TrafficShift = []Shift{{Subset: "v1", Labels: map[string]string{"version": "v1"}, Weight: 90}, {Subset: "v2", Weight: 10}}
			in.Mirror = nil
		}, []string{"traffic_shift[1].labels"}},
		{"subset named after a cluster", func(in *Intent, d *Destination) {
			*d = Destination{Service: "reviews", Namespace: "bookinfo"}
			in.TrafficShift = []Shift{{Local: true, Weight: 90}, {Subset: "onprem", Labels: map[string]string{"version": "v2"}, Weight: 10}}
			in.Mirror = nil
		}, []string{"traffic_shift[1].subset"}},
		{"mirror percent above 100", func(in *Intent, _ *Destination) {
			p := 200.0
			in.Mirror.Percent = &p
		}, []string{"mirror.percent"}},
		{"mirror without target", func(in *Intent, _ *Destination) { in.Mirror.Cluster = "" },
			[]string{"mirror"}},
		{"header set and removed", func(in *Intent, _ *Destination) {
			in.Headers.Request.Remove = []string{"X-Mesh"}
		}, []string{"headers.request.remove[0]"}},
		{"host header changed", func(in *Intent, _ *Destination) {
			in.Headers.Response = &HeaderOps{Set: map[string]string{"Host": "x"}}
		}, []string{`headers.response.set["Host"]`}},
		{"unpaired percent in header value", func(in *Intent, _ *Destination) {
			in.Headers.Request.Set["x-mesh"] = "100%"
		}, []string{`headers.request.set["x-mesh"]`}},
		{"CORS without origins", func(in *Intent, _ *Destination) { in.CORS.AllowOrigins = nil },
			[]string{"cors.allow_origins"}},
		{"CORS max age not whole seconds", func(in *Intent, _ *Destination) { in.CORS.MaxAge = "1500ms" },
			[]string{"cors.max_age"}},
		{"CORS method lower case", func(in *Intent, _ *Destination) {
			in.CORS.AllowMethods = []string{"GET", "post"}
		},
			[]string{"cors.allow_methods[1]"}},
		{"negative connection count", func(in *Intent, _ *Destination) {
			in.Sources = Sources{Placement: in.Sources.Placement}
			in.Match = nil
			in.ConnectionPool = &ConnectionPool{TCP: &TCPPool{MaxConnections: -1, Keepalive: &Keepalive{Time: "1h", Probes: -2}}}
		}, []string{"connection_pool.tcp.max_connections", "connection_pool.tcp.keepalive.probes"}},
		{"negative outlier count and bad percent", func(in *Intent, d *Destination) {
			*d = Destination{Service: "user", Namespace: "users"}
			in.Sources = Sources{Placement: in.Sources.Placement}
			in.Match = nil
			in.OutlierDetection = &OutlierDetection{Consecutive5xxErrors: &neg, MaxEjectionPercent: 101, Interval: "10"}
		}, []string{"outlier_detection.consecutive_5xx_errors", "outlier_detection.interval", "outlier_detection.max_ejection_percent"}},
		{"passthrough on a virtual destination", func(in *Intent, _ *Destination) {
			in.Sources = Sources{Placement: in.Sources.Placement}
			in.Match = nil
			in.LoadBalancer = "PASSTHROUGH"
		}, []string{"load_balancer"}},
		{"TLS disabled on a virtual destination", func(in *Intent, _ *Destination) {
			in.Sources = Sources{Placement: in.Sources.Placement}
			in.Match = nil
			in.TLSMode = "DISABLE"
		}, []string{"tls_mode"}},
		{"destination setting for some callers", func(in *Intent, _ *Destination) {
			in.LoadBalancer = "RANDOM"
			in.ConnectionPool = &ConnectionPool{HTTP: &HTTPPool{MaxRetries: 3}}
			in.TLSMode = "ISTIO_MUTUAL" // the virtual destination's own: not written, not refused
		}, []string{"connection_pool", "load_balancer"}},
		{"outlier detection on a virtual destination", func(in *Intent, _ *Destination) {
			five := 5
			in.Sources = Sources{Placement: in.Sources.Placement}
			in.Match = nil
			in.OutlierDetection = &OutlierDetection{Consecutive5xxErrors: &five}
		}, []string{"outlier_detection"}},
		{"virtual destination hostname without a dot", func(_ *Intent, d *Destination) {
			d.VirtualDestination = "user"
		}, []string{"destination.virtual_destination"}},
		{"no source cluster is a client", func(_ *Intent, d *Destination) {
			d.ClientBackends = map[string][]string{"eks": {"east", "onprem"}}
		}, []string{"sources"}},
		{"shift to a backend excluded for a source cluster", func(_ *Intent, d *Destination) {
			d.ClientBackends = map[string][]string{"east": {"east", "onprem"}, "onprem": {"onprem"}}
		}, []string{"mirror.cluster"}},
		{"virtual destination rule not resolved", func(in *Intent, d *Destination) {
			in.Sources = Sources{Placement: in.Sources.Placement}
			in.Match = nil
			in.LoadBalancer = "RANDOM"
			d.VirtualDestinationName = ""
		}, []string{"destination.virtual_destination"}},
		{"nothing to do", func(in *Intent, _ *Destination) {
			*in = Intent{Name: "idle"}
		}, []string{""}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, dest := seed()
			tc.modify(&in, &dest)
			_, err := Translate(in, dest, testRegistry())
			if err == nil {
				t.Fatal("want an error")
			}
			got := paths(t, err)
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("paths = %q, want %q\n%v", got, tc.want, err)
			}
		})
	}
}

func TestTrafficPolicyUnknownValues(t *testing.T) {
	in, dest := seed()
	in.Timeout = translate.Unknown("timeout")
	in.Match[0].Method = translate.Unknown("method")
	if errs := Validate(in, dest); len(errs) > 0 {
		t.Fatalf("unknown values must not be validated: %v", errs)
	}

	// Labels known only after apply: the placement is unknown.
	reg := translate.NewRegistry(translate.Cluster{Name: "east", LabelsUnknown: true}, translate.Cluster{Name: "onprem"})
	in, dest = seed()
	if _, err := Translate(in, dest, reg); err != translate.ErrUnknownPlacement {
		t.Fatalf("want ErrUnknownPlacement, got %v", err)
	}
	// ... but an invalid policy still reports its errors.
	in.Timeout = "soon"
	if _, err := Translate(in, dest, reg); err == translate.ErrUnknownPlacement || err == nil {
		t.Fatalf("want validation errors, got %v", err)
	}
}

// oneRoute translates in from east and returns the policy's route.
func oneRoute(t *testing.T, in Intent, dest Destination) *networkingapi.HTTPRoute {
	t.Helper()
	objs, err := Translate(in, dest, testRegistry())
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
	base := func() Intent {
		return Intent{Name: "p", Sources: Sources{Placement: translate.Placement{Clusters: []string{"east"}}}}
	}
	vd := Destination{VirtualDestination: "user.global", BackendClusters: []string{"east", "onprem"}, VirtualDestinationName: "user"}
	// host routes to the hostname, or to one cluster's own host (where
	// that cluster comes first, virtualdestination.ClusterHost).
	host := func(cluster string, weight int32) *networkingapi.HTTPRouteDestination {
		h := "user.global"
		if cluster != "" {
			h = virtualdestination.ClusterHost(h, cluster)
		}
		return &networkingapi.HTTPRouteDestination{Destination: &networkingapi.Destination{Host: h}, Weight: weight}
	}
	cases := []struct {
		name   string
		modify func(in *Intent)
		want   *networkingapi.HTTPRoute
	}{
		{"timeout only routes to the host", func(in *Intent) { in.Timeout = "1m30s" },
			&networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("", 0)}, Timeout: durationProto("90s")}},
		{"retries deduplicate retry_on", func(in *Intent) {
			in.Retries = &Retries{Attempts: 2, RetryOn: []string{"5xx", "reset", "5xx"}}
		}, &networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("", 0)},
			Retries: &networkingapi.HTTPRetry{Attempts: 2, RetryOn: "5xx,reset"}}},
		{"local and the same cluster add up", func(in *Intent) {
			in.TrafficShift = []Shift{{Local: true, Weight: 60}, {Cluster: "east", Weight: 30}, {Cluster: "onprem", Weight: 10}}
		}, nil}, // invalid: duplicate target? no: local and east differ; checked below
		{"zero weights are dropped, one destination has no weight", func(in *Intent) {
			in.TrafficShift = []Shift{{Cluster: "onprem", Weight: 100}, {Local: true, Weight: 0}}
		}, &networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("onprem", 0)}}},
		{"mirror to a cluster", func(in *Intent) {
			in.Mirror = &Mirror{Cluster: "onprem"}
		}, &networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("", 0)},
			Mirror: &networkingapi.Destination{Host: "onprem.cluster.user.global"}}},
		{"CORS any origin is a regex", func(in *Intent) {
			in.CORS = &CORS{AllowOrigins: []string{"*"}}
		}, &networkingapi.HTTPRoute{Name: "p", Route: []*networkingapi.HTTPRouteDestination{host("", 0)},
			CorsPolicy: &networkingapi.CorsPolicy{AllowOrigins: []*networkingapi.StringMatch{{MatchType: &networkingapi.StringMatch_Regex{Regex: ".*"}}}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in := base()
			tc.modify(&in)
			got := oneRoute(t, in, vd)
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
		a, b cond
		want overlap
		both cond
	}{
		{"any and a namespace", cond{}, cond{Namespace: "a"}, overlaps, cond{Namespace: "a"}},
		{"two namespaces", cond{Namespace: "a"}, cond{Namespace: "b"}, disjoint, cond{}},
		{"labels merge", cond{Labels: map[string]string{"app": "x"}}, cond{Labels: map[string]string{"v": "1"}}, overlaps,
			cond{Labels: map[string]string{"app": "x", "v": "1"}}},
		{"labels clash", cond{Labels: map[string]string{"app": "x"}}, cond{Labels: map[string]string{"app": "y"}}, disjoint, cond{}},
		{"methods", cond{Method: "GET"}, cond{Method: "POST"}, disjoint, cond{}},
		{"nested prefixes", cond{URIKind: "prefix", URI: "/v2"}, cond{URIKind: "prefix", URI: "/v2/users"}, overlaps,
			cond{URIKind: "prefix", URI: "/v2/users"}},
		{"sibling prefixes", cond{URIKind: "prefix", URI: "/v1"}, cond{URIKind: "prefix", URI: "/v2"}, disjoint, cond{}},
		{"exact under prefix", cond{URIKind: "prefix", URI: "/v2"}, cond{URIKind: "exact", URI: "/v2/x"}, overlaps,
			cond{URIKind: "exact", URI: "/v2/x"}},
		{"exact matching regex", cond{URIKind: "regex", URI: "/v[0-9]+"}, cond{URIKind: "exact", URI: "/v2"}, overlaps,
			cond{URIKind: "exact", URI: "/v2"}},
		{"exact not matching regex", cond{URIKind: "regex", URI: "/v[0-9]+"}, cond{URIKind: "exact", URI: "/v2/x"}, disjoint, cond{}},
		{"regex and prefix", cond{URIKind: "regex", URI: "/v.*"}, cond{URIKind: "prefix", URI: "/v2"}, undecided, cond{}},
		{"same regex", cond{URIKind: "regex", URI: "/v.*"}, cond{URIKind: "regex", URI: "/v.*", Method: "GET"}, overlaps,
			cond{URIKind: "regex", URI: "/v.*", Method: "GET"}},
		{"headers clash", cond{Headers: map[string]string{"x": "1"}}, cond{Headers: map[string]string{"x": "2"}}, disjoint, cond{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, order := range [][2]cond{{tc.a, tc.b}, {tc.b, tc.a}} {
				both, got := intersect(order[0], order[1])
				if got != tc.want {
					t.Fatalf("overlap = %v, want %v", got, tc.want)
				}
				if got == overlaps && both.key() != tc.both.key() {
					t.Errorf("intersection = %s, want %s", both.key(), tc.both.key())
				}
			}
		})
	}
}

func TestCheckTrafficPolicyConflicts(t *testing.T) {
	reg := testRegistry()
	vd := Destination{VirtualDestination: "user.global", BackendClusters: []string{"east", "onprem"}, VirtualDestinationName: "user"}
	policy := func(name string, modify func(*Intent)) Named {
		in := Intent{Name: name}
		modify(&in)
		return Named{Policy: in, Destination: vd}
	}
	cases := []struct {
		name string
		a, b Named
		want []string // error paths; nil means compatible
	}{
		{"different settings on the same requests",
			policy("a", func(in *Intent) { in.Timeout = "1s" }),
			policy("b", func(in *Intent) { in.Retries = &Retries{Attempts: 1} }), nil},
		{"same setting, same value",
			policy("a", func(in *Intent) { in.Timeout = "1s" }),
			policy("b", func(in *Intent) { in.Timeout = "1000ms"; in.Sources.Namespaces = []string{"x"} }), nil},
		{"same setting, different value, overlapping",
			policy("a", func(in *Intent) { in.Timeout = "1s" }),
			policy("b", func(in *Intent) { in.Timeout = "2s"; in.Match = []Match{{Method: "GET"}} }),
			[]string{"timeout"}},
		{"same setting, different value, disjoint clusters",
			policy("a", func(in *Intent) { in.Timeout = "1s"; in.Sources.Clusters = []string{"east"} }),
			policy("b", func(in *Intent) { in.Timeout = "2s"; in.Sources.Clusters = []string{"onprem"} }), nil},
		{"same setting, different value, disjoint workloads",
			policy("a", func(in *Intent) {
				in.Timeout = "1s"
				in.Sources.WorkloadLabels = map[string]string{"app": "a"}
			}),
			policy("b", func(in *Intent) {
				in.Timeout = "2s"
				in.Sources.WorkloadLabels = map[string]string{"app": "b"}
			}), nil},
		{"different headers combine",
			policy("a", func(in *Intent) {
				in.Headers = &Headers{Request: &HeaderOps{Set: map[string]string{"x-a": "1"}}}
			}),
			policy("b", func(in *Intent) {
				in.Headers = &Headers{Request: &HeaderOps{Remove: []string{"x-b"}}}
			}), nil},
		{"one header set and removed",
			policy("a", func(in *Intent) {
				in.Headers = &Headers{Request: &HeaderOps{Set: map[string]string{"x-a": "1"}}}
			}),
			policy("b", func(in *Intent) {
				in.Headers = &Headers{Request: &HeaderOps{Remove: []string{"X-A"}}}
			}), []string{"headers.request.remove[0]"}},
		{"destination settings, different fields",
			policy("a", func(in *Intent) { in.LoadBalancer = "RANDOM" }),
			policy("b", func(in *Intent) {
				in.ConnectionPool = &ConnectionPool{TCP: &TCPPool{MaxConnections: 5}}
			}), nil},
		{"destination settings, same field",
			policy("a", func(in *Intent) { in.LoadBalancer = "RANDOM"; in.Sources.Clusters = []string{"east"} }),
			policy("b", func(in *Intent) { in.LoadBalancer = "LEAST_REQUEST" }), []string{"load_balancer"}},
		{"undecidable overlap",
			policy("a", func(in *Intent) { in.Timeout = "1s"; in.Match = []Match{{URIRegex: "/a.*"}} }),
			policy("b", func(in *Intent) { in.Timeout = "1s"; in.Match = []Match{{URIPrefix: "/a"}} }),
			[]string{"match"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, pair := range [][2]Named{{tc.a, tc.b}, {tc.b, tc.a}} {
				err := CheckConflicts(pair[0], pair[1], reg)
				if tc.want == nil {
					if err != nil {
						t.Fatalf("want compatible, got %v", err)
					}
					continue
				}
				if err == nil {
					t.Fatal("want a conflict")
				}
				if got := paths(t, err); strings.Join(got, " ") != strings.Join(tc.want, " ") {
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
	vd := Destination{VirtualDestination: "user.global", VirtualDestinationName: "user"}
	a := Named{Policy: Intent{Name: "a", Timeout: "1s"}, Destination: vd}
	b := Named{Policy: Intent{Name: "b", Timeout: "forever"}, Destination: vd}
	if err := CheckConflicts(a, b, testRegistry()); err != nil {
		t.Fatalf("an invalid policy reports its own errors; want nil, got %v", err)
	}
}

// Composition does not depend on the order policies come in.
func TestComposeTrafficPoliciesOrderIndependent(t *testing.T) {
	reg := testRegistry()
	svc := Destination{Service: "user", Namespace: "users"}
	ps := []Named{
		{Policy: Intent{Name: "c", Timeout: "3s"}, Destination: svc},
		{Policy: Intent{Name: "a", Sources: Sources{Namespaces: []string{"x"}},
			Retries: &Retries{Attempts: 1}}, Destination: svc},
		{Policy: Intent{Name: "b", Match: []Match{{Method: "GET"}},
			Fault: &Fault{Abort: &Abort{Percent: 1, HTTPStatus: 500}}}, Destination: svc},
	}
	first, err := Compose(ps, reg)
	if err != nil {
		t.Fatal(err)
	}
	reversed := []Named{ps[2], ps[1], ps[0]}
	second, err := Compose(reversed, reg)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := string(translatetest.RenderYAML(t, first)), string(translatetest.RenderYAML(t, second)); a != b {
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
	svc := Destination{Service: "user", Namespace: "users"}
	p := Named{Policy: Intent{Name: "a", Timeout: "1s"}, Destination: svc}
	if _, err := Compose([]Named{p, p}, testRegistry()); err == nil {
		t.Fatal("want an error for two policies of one name")
	}
}

func TestTrafficPolicyDestinationOf(t *testing.T) {
	reg := translate.NewRegistry(
		translate.Cluster{Name: "east", Labels: map[string]string{"cloud": "private"}, EastWestGateway: &translate.Gateway{Address: "10.0.0.1"}},
		translate.Cluster{Name: "onprem", Labels: map[string]string{"cloud": "private"}, EastWestGateway: &translate.Gateway{Address: "10.0.0.2"}},
		translate.Cluster{Name: "west", Labels: map[string]string{"cloud": "aws"}, EastWestGateway: &translate.Gateway{Address: "10.0.0.3"}},
	)
	vd := virtualdestination.Intent{
		Name: "user", Hostname: "user.global",
		Ports: []virtualdestination.Port{{Number: 8080, Protocol: "HTTP"}},
		Backends: []virtualdestination.Backend{
			{Cluster: "east", Namespace: "users", Service: "user"},
			{Cluster: "west", Namespace: "users", Service: "user", Priority: 1,
				ExcludeFor: translate.Placement{ClusterSelector: map[string]string{"cloud": "private"}}},
		},
	}
	d := DestinationOf(vd, reg)
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
	in := Intent{Name: "p", TrafficShift: []Shift{{Cluster: "east", Weight: 90}, {Cluster: "west", Weight: 10}}}
	_, err := Translate(in, d, reg)
	if got := paths(t, err); strings.Join(got, " ") != "traffic_shift[1].cluster" {
		t.Errorf("paths = %q (%v)", got, err)
	}
	// An invalid virtual destination still names its backends.
	vd.Backends[0].Cluster = "mars"
	if d := DestinationOf(vd, reg); d.ClientBackends != nil || len(d.BackendClusters) != 2 {
		t.Errorf("destination of an invalid virtual destination = %+v", d)
	}
}
