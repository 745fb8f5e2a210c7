package translate_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"
	"testing"

	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/translatetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// FuzzTranslate throws random intents at every translator over random
// registries. Whatever the input: no panic, the same input gives the same
// bytes, and every object produced passes Istio's CRD schemas (structure,
// unknown fields and CEL rules). Invalid input must come back as errors,
// never as objects a cluster would reject. `make test` runs the seed corpus;
// `go test -fuzz FuzzTranslate ./internal/translate` explores further.
func FuzzTranslate(f *testing.F) {
	for _, seed := range []string{"", "east", "user.global", "priority", "locality", "\x00\x01\x02", "access", "shift-20"} {
		f.Add([]byte(seed))
	}
	for i := 0; i < 24; i++ {
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i)*0x9e3779b97f4a7c15)
		f.Add(b[:])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := fnv.New64a()
		h.Write(data)
		seed := h.Sum64()
		first := fuzzRun(t, seed)
		if second := fuzzRun(t, seed); !bytes.Equal(first, second) {
			t.Fatalf("translation is not deterministic for seed %d", seed)
		}
	})
}

// fuzzRun translates one random scenario and returns its rendering.
func fuzzRun(t *testing.T, seed uint64) []byte {
	g := &fuzzGen{r: rand.New(rand.NewPCG(seed, seed^0x5bd1e995))}
	reg := g.registry()
	var out bytes.Buffer
	check := func(what string, objs []translate.Object, err error) {
		if err != nil {
			var te translate.Errors
			var one *translate.Error
			if !errors.As(err, &te) && !errors.As(err, &one) && !errors.Is(err, translate.ErrUnknownPlacement) {
				t.Fatalf("%s: an error that names no attribute: %v", what, err)
			}
			fmt.Fprintf(&out, "%s error: %v\n", what, err)
			return
		}
		for _, o := range objs {
			if err := translatetest.CheckSchema(t, o); err != nil {
				t.Fatalf("%s produced an object a cluster would reject: %v\nregistry: %+v", what, err, reg.Names())
			}
		}
		out.Write(translatetest.RenderYAML(t, objs))
	}
	ci := g.clusterIntent(reg)
	objs, err := cluster.Translate(ci, reg)
	check("cluster", objs, err)
	vd := g.virtualDestination(reg)
	objs, err = virtualdestination.Translate(vd, reg)
	check("virtual destination", objs, err)
	tp := g.trafficPolicy(reg, "p1")
	dest := trafficpolicy.DestinationOf(vd, reg)
	objs, err = trafficpolicy.Translate(tp, dest, reg)
	check("traffic policy", objs, err)
	tp2 := g.trafficPolicy(reg, "p2")
	objs, err = trafficpolicy.Compose([]trafficpolicy.Named{{Policy: tp, Destination: dest}, {Policy: tp2, Destination: dest}}, reg)
	check("composed traffic policies", objs, err)
	ap, apDest := g.accessPolicy(reg, vd)
	objs, err = accesspolicy.Translate(ap, apDest, reg)
	check("access policy", objs, err)
	return out.Bytes()
}

// gen draws intents from small pools of valid and invalid values, so that
// random input reaches both the translation and the validation paths.
type fuzzGen struct{ r *rand.Rand }

func (g *fuzzGen) pick(xs ...string) string { return xs[g.r.IntN(len(xs))] }

// mostly picks a valid value, and rarely one of the invalid ones.
func (g *fuzzGen) mostly(valid []string, invalid ...string) string {
	if len(invalid) > 0 && g.chance(0.04) {
		return g.pick(invalid...)
	}
	return g.pick(valid...)
}

func (g *fuzzGen) mostlyInt(valid []int, invalid ...int) int {
	if len(invalid) > 0 && g.chance(0.04) {
		return g.pick2(invalid...)
	}
	return g.pick2(valid...)
}
func (g *fuzzGen) chance(p float64) bool { return g.r.Float64() < p }

var fuzzClusters = []string{"east", "west", "onprem", "wine", "edge-1"}

func (g *fuzzGen) registry() *translate.Registry {
	n := 1 + g.r.IntN(len(fuzzClusters))
	var cs []translate.Cluster
	for _, name := range fuzzClusters[:n] {
		c := translate.Cluster{
			Name:        name,
			Network:     g.pick("", "net-"+name, "net-shared"),
			Region:      g.pick("", "us-east-1", "eu-west-1", "dc1"),
			TrustDomain: g.pick("", name+".mesh", "shared.mesh", "cluster.local"),
			Labels:      map[string]string{"cloud": g.pick("aws", "gcp", "onprem"), "env": g.pick("prod", "dev")},
		}
		if c.Region != "" && g.chance(0.5) {
			c.Zone = c.Region + g.pick("a", "b")
		}
		if g.chance(0.95) {
			c.EastWestGateway = &translate.Gateway{Address: g.pick("203.0.113.10", "ew."+name+".example.com", "2001:db8::1"), Port: uint32(g.pick2(15443, 443, 0))}
		}
		if g.chance(0.05) {
			c.Network = translate.Unknown("network")
		}
		cs = append(cs, c)
	}
	return translate.NewRegistry(cs...)
}

func (g *fuzzGen) pick2(xs ...int) int { return xs[g.r.IntN(len(xs))] }

func (g *fuzzGen) placement(reg *translate.Registry) translate.Placement {
	switch g.r.IntN(4) {
	case 0:
		return translate.Placement{}
	case 1:
		names := reg.Names()
		p := translate.Placement{Clusters: []string{names[g.r.IntN(len(names))]}}
		if g.chance(0.03) {
			p.Clusters = append(p.Clusters, "nowhere")
		}
		return p
	case 2:
		return translate.Placement{ClusterSelector: map[string]string{"cloud": g.pick("aws", "gcp", "onprem")}}
	default:
		return translate.Placement{ClusterSelector: map[string]string{"env": g.mostly([]string{"prod", "dev"}, "bad value!")}}
	}
}

func (g *fuzzGen) clusterIntent(reg *translate.Registry) cluster.Intent {
	names := reg.Names()
	return cluster.Intent{
		Name:           g.pick(append(names, "missing")...),
		IstioNamespace: g.pick("", "istio-system", "mesh-system"),
		MTLSMode:       g.pick("", "STRICT", "PERMISSIVE", "DISABLE"),
		DefaultDeny:    g.chance(0.5),
		ExposeEastWest: g.chance(0.6),
		EastWestHosts:  [][]string{nil, {"*.global"}, {"*.local", "*.mesh"}}[g.r.IntN(3)],
	}
}

func (g *fuzzGen) duration() string {
	return g.mostly([]string{"", "10s", "500ms", "1m", "2s"}, "soon", "0s", "1.5ms")
}

func (g *fuzzGen) virtualDestination(reg *translate.Registry) virtualdestination.Intent {
	names := reg.Names()
	in := virtualdestination.Intent{
		Name:     g.mostly([]string{"user", "ledger"}, "Bad_Name"),
		Hostname: g.mostly([]string{"user.global", "ledger.mesh.internal"}, "not a host"),
	}
	for i := 0; i < 1+g.r.IntN(2); i++ {
		p := virtualdestination.Port{Number: int64(8080 + i + g.mostlyInt([]int{0, 1000}, -8080)), Protocol: g.mostly([]string{"HTTP", "GRPC", "TCP", "HTTP2"}, "SMTP")}
		if g.chance(0.3) {
			tp := int64(g.mostlyInt([]int{8081, 9000}, 0))
			p.TargetPort = &tp
		}
		in.Ports = append(in.Ports, p)
	}
	perm := g.r.Perm(len(names))
	for i := 0; i < 1+g.r.IntN(len(names)); i++ {
		b := virtualdestination.Backend{
			Cluster:   g.mostly([]string{names[perm[i]]}, "nowhere", names[0]),
			Namespace: g.mostly([]string{"users", "users-prod"}, "Bad NS"),
			Service:   g.pick("user", "ledger"),
			Priority:  int64(g.r.IntN(3)),
		}
		if g.chance(0.3) {
			b.ExcludeFor = g.placement(reg)
		}
		if g.chance(0.2) {
			w := int64(g.mostlyInt([]int{1, 5}, 0))
			b.Weight = &w
		}
		in.Backends = append(in.Backends, b)
	}
	if g.chance(0.6) {
		in.Failover = &virtualdestination.Failover{Mode: g.mostly([]string{"", "priority", "locality"}, "random")}
		if g.chance(0.5) {
			in.Failover.OutlierDetection = &virtualdestination.OutlierDetection{Interval: g.duration(), BaseEjectionTime: g.duration()}
		}
	}
	in.Clients = virtualdestination.Clients{Placement: g.placement(reg)}
	if g.chance(0.4) {
		in.Clients.Namespaces = []string{g.mostly([]string{"accounts", "billing"}, "Bad NS")}
	}
	return in
}

func (g *fuzzGen) trafficPolicy(reg *translate.Registry, name string) trafficpolicy.Intent {
	names := reg.Names()
	in := trafficpolicy.Intent{Name: g.mostly([]string{name}, "Bad_Name"), Sources: trafficpolicy.Sources{Placement: g.placement(reg)}}
	if g.chance(0.4) {
		in.Sources.Namespaces = []string{g.pick("accounts", "billing")}
	}
	if g.chance(0.4) {
		in.Match = []trafficpolicy.Match{{URIPrefix: g.pick("/v2", "/"), Method: g.mostly([]string{"", "GET"}, "get"), Headers: map[string]string{}}}
		if g.chance(0.3) {
			in.Match[0].URIPrefix, in.Match[0].URIRegex = "", g.mostly([]string{"^/a.*"}, "(")
		}
	}
	if g.chance(0.5) {
		in.Timeout = g.duration()
	}
	if g.chance(0.4) {
		in.Retries = &trafficpolicy.Retries{Attempts: g.mostlyInt([]int{1, 3}, -1), PerTryTimeout: g.duration(), RetryOn: []string{g.mostly([]string{"5xx", "connect-failure"}, "bogus")}}
	}
	if g.chance(0.3) {
		in.Fault = &trafficpolicy.Fault{Abort: &trafficpolicy.Abort{Percent: float64(g.mostlyInt([]int{1, 50}, 150)), HTTPStatus: g.mostlyInt([]int{503, 429}, 99)}}
	}
	if g.chance(0.5) {
		w := g.pick2(80, 50, 90)
		in.TrafficShift = []trafficpolicy.Shift{{Local: true, Weight: w}, {Cluster: g.mostly(names, "nowhere"), Weight: 100 - w - g.mostlyInt([]int{0}, 5)}}
	}
	if g.chance(0.3) {
		in.Headers = &trafficpolicy.Headers{Request: &trafficpolicy.HeaderOps{Set: map[string]string{"x-mesh": "1"}, Remove: []string{g.mostly([]string{"x-debug"}, "bad header")}}}
	}
	if g.chance(0.3) {
		in.ConnectionPool = &trafficpolicy.ConnectionPool{TCP: &trafficpolicy.TCPPool{MaxConnections: g.mostlyInt([]int{100, 10}, -1), Keepalive: &trafficpolicy.Keepalive{Time: g.duration()}}}
	}
	if g.chance(0.2) {
		in.LoadBalancer = g.mostly([]string{"LEAST_REQUEST", "ROUND_ROBIN"}, "FASTEST")
	}
	return in
}

func (g *fuzzGen) accessPolicy(reg *translate.Registry, vd virtualdestination.Intent) (accesspolicy.Intent, accesspolicy.Destination) {
	in := accesspolicy.Intent{Name: g.mostly([]string{"account-to-user", "x"}, "Bad_Name", strings.Repeat("n", 61))}
	for len(in.Sources) == 0 || g.chance(0.3) {
		if len(in.Sources) >= 3 {
			break
		}
		s := accesspolicy.Source{Placement: g.placement(reg), Namespace: g.mostly([]string{"accounts"}, "Bad NS"), ServiceAccount: g.pick("account", "default")}
		if g.chance(0.3) {
			s.DestinationClusters = g.placement(reg)
		}
		in.Sources = append(in.Sources, s)
	}
	if g.chance(0.5) {
		in.Rules = []accesspolicy.Rule{{Methods: []string{g.mostly([]string{"GET", "POST"}, "get")}, Paths: []string{g.mostly([]string{"/users/*", "*"}, "/a*b")}, Ports: []int{g.mostlyInt([]int{8080}, 0)}}}
	}
	dest := accesspolicy.Destination{VirtualDestination: vd.Hostname}
	for _, b := range vd.Backends {
		dest.Backends = append(dest.Backends, accesspolicy.Backend{Cluster: b.Cluster, Namespace: b.Namespace, Service: b.Service})
	}
	if g.chance(0.3) {
		dest = accesspolicy.Destination{Service: "user", Namespace: "users", Placement: g.placement(reg)}
	}
	return in, dest
}

// The schema check is only worth something if it rejects what a cluster
// would reject.
func TestCheckSchemaRejectsInvalidObjects(t *testing.T) {
	bad := translate.Object{Cluster: "east", Resource: &networking.ServiceEntry{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "ServiceEntry"),
		ObjectMeta: translate.ObjectMeta("istio-system", "bad"),
		Spec: networkingapi.ServiceEntry{
			Hosts: []string{"user.global"},
			Ports: []*networkingapi.ServicePort{{Number: 0, Name: "http", Protocol: "HTTP"}},
		},
	}}
	if err := translatetest.CheckSchema(t, bad); err == nil {
		t.Fatal("a ServiceEntry port 0 passed the schema check")
	}
	good := bad
	good.Resource.(*networking.ServiceEntry).Spec.Ports[0].Number = 8080
	if err := translatetest.CheckSchema(t, good); err != nil {
		t.Fatalf("a valid ServiceEntry failed the schema check: %v", err)
	}
}

// sweepSeeds is how many random scenarios TestFuzzSweep checks on every
// run: enough that each invalid value of the generator's pools turns up
// alone (everything else valid) several times, so that a validation check
// removed on purpose (make mutate) lets an invalid object through and the
// sweep fails. The fuzz target's own seed corpus is too small for that.
const sweepSeeds = 3000

// TestFuzzSweep runs FuzzTranslate's property (no panic, deterministic,
// errors that name an attribute, every object valid for an API server)
// over sweepSeeds scenarios, and checks that the generator reaches
// translation, not only validation errors, or the property would prove
// nothing about the objects.
func TestFuzzSweep(t *testing.T) {
	kinds := []string{"kind: Gateway", "kind: ServiceEntry", "kind: VirtualService", "kind: DestinationRule", "kind: AuthorizationPolicy", "kind: PeerAuthentication"}
	produced := map[string]int{}
	for seed := uint64(0); seed < sweepSeeds; seed++ {
		out := fuzzRun(t, seed)
		if again := fuzzRun(t, seed); !bytes.Equal(out, again) {
			t.Fatalf("translation is not deterministic for seed %d", seed)
		}
		for _, kind := range kinds {
			if bytes.Contains(out, []byte(kind)) {
				produced[kind]++
			}
		}
	}
	for _, kind := range kinds {
		if produced[kind] < sweepSeeds/20 {
			t.Errorf("only %d of %d random scenarios produced a %s; the generator mostly hits validation errors", produced[kind], sweepSeeds, kind)
		}
	}
	t.Logf("scenarios producing objects, of %d: %v", sweepSeeds, produced)
}
