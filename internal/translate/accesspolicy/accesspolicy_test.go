package accesspolicy

import (
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/translatetest"

	"errors"
	"strconv"
	"strings"
	"testing"

	securityapi "istio.io/api/security/v1beta1"
	security "istio.io/client-go/pkg/apis/security/v1"
	"sigs.k8s.io/yaml"
)

// goldenIntent is the intent of a golden case (testdata/): the
// policy and its destination as the provider resolves it.
type goldenIntent struct {
	Policy      Intent      `json:"policy"`
	Destination Destination `json:"destination"`
}

// TestGolden translates every case of testdata/ and compares it with its
// golden file (REFRESH_GOLDEN=true rewrites them).
func TestGolden(t *testing.T) {
	translatetest.Golden(t, func(raw []byte, reg *translate.Registry) ([]translate.Object, error) {
		var in goldenIntent
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		return Translate(in.Policy, in.Destination, reg)
	})
}

// testRegistry: a public-cloud cluster and two private ones, each with
// its own trust domain.
func testRegistry() *translate.Registry {
	return translate.NewRegistry(
		translate.Cluster{Name: "eks", TrustDomain: "eks.mesh", Labels: map[string]string{"cloud": "aws"}},
		translate.Cluster{Name: "east", TrustDomain: "east.mesh", Labels: map[string]string{"cloud": "private"}},
		translate.Cluster{Name: "onprem", TrustDomain: "onprem.mesh", Labels: map[string]string{"cloud": "private"}},
	)
}

// seed is the seed intent: account in eks may call user in east only;
// account in the private clusters may call user everywhere.
func seed() (Intent, Destination) {
	in := Intent{
		Name: "account-to-user",
		Sources: []Source{
			{Placement: translate.Placement{Clusters: []string{"eks"}}, Namespace: "accounts", ServiceAccount: "account",
				DestinationClusters: translate.Placement{Clusters: []string{"east"}}},
			{Placement: translate.Placement{ClusterSelector: map[string]string{"cloud": "private"}}, Namespace: "accounts", ServiceAccount: "account"},
		},
		Rules: []Rule{{Methods: []string{"GET"}, Paths: []string{"/users/*"}, Ports: []int{8080}}},
	}
	dest := Destination{
		VirtualDestination: "user.global",
		Backends: []Backend{
			{Cluster: "east", Namespace: "users", Service: "user"},
			{Cluster: "onprem", Namespace: "users", Service: "user"},
		},
	}
	return in, dest
}

func TestAccessPolicyValidation(t *testing.T) {
	cases := []struct {
		name   string
		modify func(in *Intent, dest *Destination)
		// reg overrides testRegistry.
		reg  *translate.Registry
		want []string // attribute paths, in order
	}{
		{"missing name", func(in *Intent, _ *Destination) { in.Name = "" },
			nil, []string{"name"}},
		{"name not a DNS label", func(in *Intent, _ *Destination) { in.Name = "Account_To_User" },
			nil, []string{"name"}},
		{"name too long for ap- prefix", func(in *Intent, _ *Destination) { in.Name = strings.Repeat("a", 61) },
			nil, []string{"name"}},
		{"empty sources", func(in *Intent, _ *Destination) { in.Sources = nil },
			nil, []string{"sources"}},
		{"missing service account", func(in *Intent, _ *Destination) { in.Sources[1].ServiceAccount = "" },
			nil, []string{"sources[1].service_account"}},
		{"invalid namespace", func(in *Intent, _ *Destination) { in.Sources[0].Namespace = "Accounts" },
			nil, []string{"sources[0].namespace"}},
		{"service account with wildcard", func(in *Intent, _ *Destination) { in.Sources[0].ServiceAccount = "acc*" },
			nil, []string{"sources[0].service_account"}},
		{"lower-case method", func(in *Intent, _ *Destination) {
			in.Rules = append(in.Rules, Rule{Methods: []string{"get"}})
		}, nil, []string{"rules[1].methods[0]"}},
		{"unknown method", func(in *Intent, _ *Destination) { in.Rules[0].Methods = []string{"GET", "FETCH"} },
			nil, []string{"rules[0].methods[1]"}},
		{"star in the middle of a path", func(in *Intent, _ *Destination) { in.Rules[0].Paths = []string{"/users/*/orders"} },
			nil, []string{"rules[0].paths[0]"}},
		{"two stars in a path", func(in *Intent, _ *Destination) { in.Rules[0].Paths = []string{"/ok", "*users*"} },
			nil, []string{"rules[0].paths[1]"}},
		{"relative path", func(in *Intent, _ *Destination) { in.Rules[0].Paths = []string{"users"} },
			nil, []string{"rules[0].paths[0]"}},
		{"path with query", func(in *Intent, _ *Destination) { in.Rules[0].Paths = []string{"/users?id=1"} },
			nil, []string{"rules[0].paths[0]"}},
		{"path template with {**} not last", func(in *Intent, _ *Destination) {
			in.Rules[0].Paths = []string{"/{**}/x/{*}"}
		}, nil, []string{"rules[0].paths[0]"}},
		{"port zero and too large", func(in *Intent, _ *Destination) { in.Rules[0].Ports = []int{0, 8080, 65536} },
			nil, []string{"rules[0].ports[0]", "rules[0].ports[2]"}},
		{"both virtual destination and service", func(_ *Intent, d *Destination) { d.Service = "user" },
			nil, []string{"destination"}},
		{"no destination", func(_ *Intent, d *Destination) { *d = Destination{} },
			nil, []string{"destination"}},
		{"service without namespace", func(_ *Intent, d *Destination) {
			*d = Destination{Service: "user"}
		}, nil, []string{"destination.namespace"}},
		{"namespace with a virtual destination", func(_ *Intent, d *Destination) { d.Namespace = "users" },
			nil, []string{"destination.namespace"}},
		{"invalid workload label", func(_ *Intent, d *Destination) {
			d.WorkloadLabels = map[string]string{"app": "user", "bad key": "x"}
		}, nil, []string{`destination.workload_labels["bad key"]`}},
		{"unknown source cluster", func(in *Intent, _ *Destination) { in.Sources[0].Clusters = []string{"eks", "wine"} },
			nil, []string{"sources[0].clusters[1]"}},
		{"unknown destination cluster", func(_ *Intent, d *Destination) { d.Clusters = []string{"mars"} },
			nil, []string{"destination.clusters[0]"}},
		{"destination cluster runs no backend", func(_ *Intent, d *Destination) { d.Clusters = []string{"east", "eks"} },
			nil, []string{"destination.clusters[1]"}},
		{"unregistered backend cluster", func(_ *Intent, d *Destination) {
			d.Backends = append(d.Backends, Backend{Cluster: "moon", Namespace: "users", Service: "user"})
		}, nil, []string{"destination.virtual_destination"}},
		{"virtual destination without backends", func(_ *Intent, d *Destination) { d.Backends = nil },
			nil, []string{"destination.virtual_destination"}},
		{"source destination cluster not covered", func(in *Intent, _ *Destination) {
			in.Sources[0].DestinationClusters.Clusters = []string{"east", "eks"}
		}, nil, []string{"sources[0].destination_clusters.clusters[1]"}},
		{"trust domain collision", func(in *Intent, _ *Destination) {}, translate.NewRegistry(
			translate.Cluster{Name: "eks", TrustDomain: "shared.mesh"},
			translate.Cluster{Name: "east", TrustDomain: "east.mesh", Labels: map[string]string{"cloud": "private"}},
			translate.Cluster{Name: "onprem", TrustDomain: "shared.mesh", Labels: map[string]string{"cloud": "private"}},
		), []string{"sources[1].cluster_selector"}},
		{"cluster.local source in a cluster with its own trust domain", func(in *Intent, _ *Destination) {}, translate.NewRegistry(
			translate.Cluster{Name: "eks", TrustDomain: "eks.mesh"},
			translate.Cluster{Name: "east", TrustDomain: "east.mesh", Labels: map[string]string{"cloud": "private"}},
			translate.Cluster{Name: "onprem", Labels: map[string]string{"cloud": "private"}},
		), []string{"sources[1].cluster_selector"}},
		{"all problems at once", func(in *Intent, d *Destination) {
			in.Name = ""
			in.Sources[0].Namespace = ""
			in.Sources[1].Clusters = []string{"wine"}
			in.Rules[0].Methods = []string{"get"}
			in.Rules[0].Ports = []int{-1}
		}, nil, []string{"name", "sources[0].namespace", "rules[0].methods[0]", "rules[0].ports[0]", "sources[1].clusters[0]"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			in, dest := seed()
			tc.modify(&in, &dest)
			reg := tc.reg
			if reg == nil {
				reg = testRegistry()
			}
			objs, err := Translate(in, dest, reg)
			var errs translate.Errors
			if !errors.As(err, &errs) {
				t.Fatalf("want Errors, got %v (objects %d)", err, len(objs))
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Path.String())
				if e.Summary == "" || e.Detail == "" {
					t.Errorf("error at %s lacks a summary or detail: %#v", e.Path, e)
				}
			}
			if strings.Join(got, " | ") != strings.Join(tc.want, " | ") {
				t.Errorf("error paths:\n got %q\nwant %q\nerrors: %v", got, tc.want, err)
			}
		})
	}
}

// The registry-free checks are what the provider runs at validate time:
// they must not need the registry and must agree with translation.
func TestValidateAccessPolicyWithoutRegistry(t *testing.T) {
	in, dest := seed()
	if errs := Validate(in, dest); len(errs) != 0 {
		t.Fatalf("valid seed intent: %v", errs)
	}
	in.Sources[0].Clusters = []string{"not-registered-but-not-checked-here"}
	in.Rules[0].Paths = []string{"/a*b"}
	errs := Validate(in, dest)
	if len(errs) != 1 || errs[0].Path.String() != "rules[0].paths[0]" {
		t.Fatalf("want one error at rules[0].paths[0], got %v", errs)
	}
}

func TestAccessPolicyPathValidation(t *testing.T) {
	valid := []string{"/", "/users", "/users/*", "*.json", "*", "/users/", "/v1/{*}/profile", "/static/{**}",
		"/static/{**}/index.html", "/a/{*}/b/{**}", "/%7Euser", translate.Unknown("path")}
	invalid := []string{"", "users", "/users/*/x", "**", "*a*", "/a b", "/a?b", "/a#b", "/{*}x/y", "/{**}/{*}",
		"/a/{x}", "/a}", "{*}/a", "/a//{*}", "/a/{*}*"}
	for _, p := range valid {
		if err := path(translate.Root("p"), p); err != nil {
			t.Errorf("path(%q) = %v, want valid", p, err)
		}
	}
	for _, p := range invalid {
		if err := path(translate.Root("p"), p); err == nil {
			t.Errorf("path(%q) is valid, want an error", p)
		}
	}
}

func TestAccessPolicyTo(t *testing.T) {
	cases := []struct {
		name  string
		rules []Rule
		want  int // operations; 0 means `to` omitted (any operation)
	}{
		{"no rules", nil, 0},
		{"one rule", []Rule{{Methods: []string{"GET"}}}, 1},
		{"two rules", []Rule{{Methods: []string{"GET"}}, {Ports: []int{9090}}}, 2},
		{"an empty rule matches everything", []Rule{{Methods: []string{"GET"}}, {}}, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			to := to(tc.rules)
			if len(to) != tc.want {
				t.Fatalf("got %d operations, want %d", len(to), tc.want)
			}
			for _, op := range to {
				o := op.Operation
				if len(o.Methods) == 0 && len(o.Paths) == 0 && len(o.Ports) == 0 {
					t.Errorf("empty operation: Istio rejects it")
				}
			}
		})
	}
	if got := to([]Rule{{Ports: []int{8080, 15021}}})[0].Operation.Ports; strings.Join(got, ",") != "8080,15021" {
		t.Errorf("ports rendered as %q", got)
	}
}

// Unknown values: a placement by labels not known yet stops translation with
// ErrUnknownPlacement; a trust domain not known yet flows into the
// principals as a placeholder and skips the checks that depend on it.
func TestAccessPolicyUnknown(t *testing.T) {
	t.Run("selector over unknown labels", func(t *testing.T) {
		reg := translate.NewRegistry(
			translate.Cluster{Name: "eks", TrustDomain: "eks.mesh", LabelsUnknown: true},
			translate.Cluster{Name: "east", TrustDomain: "east.mesh", Labels: map[string]string{"cloud": "private"}},
			translate.Cluster{Name: "onprem", TrustDomain: "onprem.mesh", Labels: map[string]string{"cloud": "private"}},
		)
		in, dest := seed()
		if _, err := Translate(in, dest, reg); err != translate.ErrUnknownPlacement {
			t.Fatalf("got %v, want ErrUnknownPlacement unchanged", err)
		}
		// Definite errors still win over "unknown".
		in.Rules[0].Ports = []int{0}
		_, err := Translate(in, dest, reg)
		var errs translate.Errors
		if !errors.As(err, &errs) || errs[0].Path.String() != "rules[0].ports[0]" {
			t.Fatalf("got %v, want the port error", err)
		}
	})
	t.Run("backend cluster not known yet", func(t *testing.T) {
		in, dest := seed()
		dest.Backends[1].Cluster = translate.Unknown("cluster")
		if _, err := Translate(in, dest, testRegistry()); err != translate.ErrUnknownPlacement {
			t.Fatalf("got %v, want ErrUnknownPlacement", err)
		}
	})
	t.Run("trust domain not known yet", func(t *testing.T) {
		// eks's trust domain is unknown; east and onprem use the default.
		// Known, eks might collide with them; unknown, the check waits for
		// apply.
		reg := translate.NewRegistry(
			translate.Cluster{Name: "eks", TrustDomain: translate.Unknown("trust_domain of eks")},
			translate.Cluster{Name: "east"},
			translate.Cluster{Name: "onprem"},
		)
		in := Intent{Name: "eks-to-user", Sources: []Source{
			{Placement: translate.Placement{Clusters: []string{"eks"}}, Namespace: "accounts", ServiceAccount: "account"},
		}}
		dest := Destination{Service: "user", Namespace: "users", Placement: translate.Placement{Clusters: []string{"east", "onprem"}}}
		objs, err := Translate(in, dest, reg)
		if err != nil {
			t.Fatal(err)
		}
		if len(objs) != 2 {
			t.Fatalf("got %d objects, want 2", len(objs))
		}
		for _, o := range objs {
			unknown, err := o.HasUnknown()
			if err != nil || !unknown {
				t.Errorf("%s: HasUnknown = %v, %v; want true", o.Key(), unknown, err)
			}
		}
	})
	t.Run("enforcing cluster's trust domain not known yet", func(t *testing.T) {
		// onprem is on cluster.local; whether Istio rewrites it in east
		// depends on east's trust domain, unknown at plan.
		reg := translate.NewRegistry(translate.Cluster{Name: "east", TrustDomain: translate.Unknown("td")}, translate.Cluster{Name: "onprem"})
		in := Intent{Name: "onprem-to-user", Sources: []Source{
			{Placement: translate.Placement{Clusters: []string{"onprem"}}, Namespace: "accounts", ServiceAccount: "account"},
		}}
		dest := Destination{Service: "user", Namespace: "users", Placement: translate.Placement{Clusters: []string{"east"}}}
		objs, err := Translate(in, dest, reg)
		if err != nil || len(objs) != 1 {
			t.Fatalf("got %d objects, %v; want 1, nil", len(objs), err)
		}
		// At apply the trust domain is known, and the check runs.
		reg = translate.NewRegistry(translate.Cluster{Name: "east", TrustDomain: "east.mesh"}, translate.Cluster{Name: "onprem"})
		if _, err := Translate(in, dest, reg); err == nil {
			t.Fatal("want the cluster.local error once east's trust domain is known")
		}
	})
}

// Interplay with mesh_cluster.default_deny, on a small model of Istio's
// ALLOW evaluation: a workload no ALLOW policy selects accepts everything;
// otherwise a request passes only if some ALLOW policy matches it. The
// deny-all policy of default_deny selects every workload and matches
// nothing, so with it only what access policies allow gets through.
func TestAccessPolicyDefaultDeny(t *testing.T) {
	reg := testRegistry()
	in, dest := seed()
	seed, err := Translate(in, dest, reg)
	if err != nil {
		t.Fatal(err)
	}
	// The same seed said with the destination's placement only: eks may
	// call user in east; the policy writes nothing on-prem.
	eastOnly := Intent{Name: "eks-to-user", Rules: in.Rules, Sources: []Source{
		{Placement: translate.Placement{Clusters: []string{"eks"}}, Namespace: "accounts", ServiceAccount: "account"},
	}}
	eastDest := dest
	eastDest.Placement = translate.Placement{Clusters: []string{"east"}}
	placementOnly, err := Translate(eastOnly, eastDest, reg)
	if err != nil {
		t.Fatal(err)
	}
	var deny []translate.Object
	for _, c := range []string{"east", "onprem"} {
		objs, err := cluster.Translate(cluster.Intent{Name: c, DefaultDeny: true}, reg)
		if err != nil {
			t.Fatal(err)
		}
		deny = append(deny, objs...)
	}
	with := func(sets ...[]translate.Object) []translate.Object {
		var out []translate.Object
		for _, s := range sets {
			out = append(out, s...)
		}
		return out
	}

	ekssa := "eks.mesh/ns/accounts/sa/account"
	user := workload{namespace: "users", labels: map[string]string{"app": "user"}}
	order := workload{namespace: "shop", labels: map[string]string{"app": "order"}}
	get := request{principal: ekssa, method: "GET", path: "/users/42", port: 8080}
	cases := []struct {
		name    string
		objs    []translate.Object
		cluster string
		to      workload
		req     request
		allowed bool
	}{
		{"seed, default deny: eks account may call user in east", with(seed, deny), "east", user, get, true},
		{"seed, default deny: eks account may not call user on-prem", with(seed, deny), "onprem", user, get, false},
		{"seed, default deny: onprem account may call user on-prem", with(seed, deny), "onprem", user,
			request{principal: "onprem.mesh/ns/accounts/sa/account", method: "GET", path: "/users/42", port: 8080}, true},
		{"seed, default deny: east account may call user on-prem", with(seed, deny), "onprem", user,
			request{principal: "east.mesh/ns/accounts/sa/account", method: "GET", path: "/users/42", port: 8080}, true},
		{"seed, default deny: a method no rule allows", with(seed, deny), "east", user,
			request{principal: ekssa, method: "DELETE", path: "/users/42", port: 8080}, false},
		{"seed, default deny: a port no rule allows", with(seed, deny), "east", user,
			request{principal: ekssa, method: "GET", path: "/users/42", port: 9090}, false},
		{"seed, default deny: another service account", with(seed, deny), "east", user,
			request{principal: "eks.mesh/ns/accounts/sa/batch", method: "GET", path: "/users/42", port: 8080}, false},
		{"seed, default deny: a workload no access policy covers", with(seed, deny), "east", order, get, false},
		{"seed, no default deny: a workload no access policy covers accepts all", seed, "east", order, get, true},
		{"seed, no default deny: on-prem is still closed to eks, the private source's policy covers it", seed, "onprem", user, get, false},
		{"placement only, default deny: eks account may call user in east", with(placementOnly, deny), "east", user, get, true},
		{"placement only, default deny: eks account may not call user on-prem", with(placementOnly, deny), "onprem", user, get, false},
		{"placement only, no default deny: on-prem accepts everyone, as no ALLOW policy selects user there", placementOnly, "onprem", user, get, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := allowed(t, tc.objs, tc.cluster, translate.DefaultIstioNS, tc.to, tc.req); got != tc.allowed {
				t.Errorf("allowed = %v, want %v", got, tc.allowed)
			}
		})
	}
}

type workload struct {
	namespace string
	labels    map[string]string
}

type request struct {
	principal    string // SPIFFE ID without spiffe://
	method, path string
	port         int
}

// allowed models Istio's decision for the ALLOW policies this package
// emits (no DENY, CUSTOM, conditions or path templates).
func allowed(t *testing.T, objs []translate.Object, cluster, rootNS string, w workload, req request) bool {
	t.Helper()
	var policies []*securityapi.AuthorizationPolicy
	for _, o := range objs {
		ap, ok := o.Resource.(*security.AuthorizationPolicy)
		if !ok || o.Cluster != cluster || (ap.Namespace != rootNS && ap.Namespace != w.namespace) {
			continue
		}
		if sel := ap.Spec.GetSelector(); sel != nil && !translate.SelectorMatches(w.labels, sel.GetMatchLabels()) {
			continue
		}
		if ap.Spec.Action != securityapi.AuthorizationPolicy_ALLOW {
			t.Fatalf("%s: the model handles ALLOW only", o.Key())
		}
		policies = append(policies, &ap.Spec)
	}
	if len(policies) == 0 {
		return true
	}
	for _, p := range policies {
		for _, r := range p.GetRules() {
			if ruleMatches(t, r, req) {
				return true
			}
		}
	}
	return false
}

func ruleMatches(t *testing.T, r *securityapi.Rule, req request) bool {
	if len(r.GetWhen()) > 0 {
		t.Fatal("the model does not handle conditions")
	}
	from := len(r.GetFrom()) == 0
	for _, f := range r.GetFrom() {
		if anyMatch(f.GetSource().GetPrincipals(), req.principal) {
			from = true
		}
	}
	to := len(r.GetTo()) == 0
	for _, o := range r.GetTo() {
		op := o.GetOperation()
		if (len(op.Methods) == 0 || anyMatch(op.Methods, req.method)) &&
			(len(op.Paths) == 0 || anyMatch(op.Paths, req.path)) &&
			(len(op.Ports) == 0 || anyMatch(op.Ports, strconv.Itoa(req.port))) {
			to = true
		}
	}
	return from && to
}

// anyMatch applies Istio's string matching: exact, prefix*, *suffix, and
// * for any non-empty value.
func anyMatch(patterns []string, v string) bool {
	for _, p := range patterns {
		switch {
		case p == "*":
			if v != "" {
				return true
			}
		case strings.HasPrefix(p, "*"):
			if strings.HasSuffix(v, p[1:]) {
				return true
			}
		case strings.HasSuffix(p, "*"):
			if strings.HasPrefix(v, p[:len(p)-1]) {
				return true
			}
		case p == v:
			return true
		}
	}
	return false
}
