package simulation

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	rbacconfig "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	rbachttp "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"sigs.k8s.io/yaml"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/network"
)

// request is what an RBAC decision looks at: the caller's mTLS identity
// ("" for a caller without one) and the HTTP request.
type request struct {
	principal, method, path string
	port                    uint32
}

func (r request) String() string {
	who := r.principal
	if who == "" {
		who = "(no identity)"
	}
	return fmt.Sprintf("%s %s %s :%d", who, r.method, r.path, r.port)
}

// rbacFilters are the RBAC filters Istio puts in front of a proxy's HTTP
// traffic: for a sidecar, its inbound HTTP chain; for a gateway, the HTTP
// listener of its Gateway servers. Each is returned with its place.
func (s *istiod) rbacFilters(t *testing.T, p *model.Proxy) []*rbacconfig.RBAC {
	t.Helper()
	var out []*rbacconfig.RBAC
	for _, l := range s.Listeners(p) {
		if p.Type == model.SidecarProxy && l.Name != "virtualInbound" {
			continue
		}
		for _, fc := range l.FilterChains {
			if p.Type == model.SidecarProxy && fc.Name != "virtualInbound-catchall-http" {
				continue
			}
			for _, f := range fc.Filters {
				h := &hcm.HttpConnectionManager{}
				if f.GetTypedConfig().UnmarshalTo(h) != nil {
					continue
				}
				for _, hf := range h.HttpFilters {
					r := &rbachttp.RBAC{}
					if hf.GetTypedConfig().UnmarshalTo(r) == nil && r.Rules != nil {
						out = append(out, r.Rules)
					}
				}
			}
			if len(out) > 0 {
				return out // every chain of a listener gets the same filters
			}
		}
	}
	return out
}

// decide is Envoy's RBAC decision for a request across the filters in
// order: a matching DENY policy denies, an ALLOW filter allows only what
// one of its policies matches (none: nothing), no filter allows all.
func decide(t *testing.T, filters []*rbacconfig.RBAC, r request) bool {
	t.Helper()
	for _, f := range filters {
		matched := false
		for _, name := range sortedKeys(f.Policies) {
			pol := f.Policies[name]
			if anyPermission(t, pol.Permissions, r) && anyPrincipal(t, pol.Principals, r) {
				matched = true
				break
			}
		}
		switch f.Action {
		case rbacconfig.RBAC_DENY:
			if matched {
				return false
			}
		case rbacconfig.RBAC_ALLOW:
			if !matched {
				return false
			}
		default:
			t.Fatalf("RBAC action %v: the evaluator knows ALLOW and DENY only", f.Action)
		}
	}
	return true
}

func anyPermission(t *testing.T, ps []*rbacconfig.Permission, r request) bool {
	for _, p := range ps {
		if permission(t, p, r) {
			return true
		}
	}
	return false
}

func permission(t *testing.T, p *rbacconfig.Permission, r request) bool {
	t.Helper()
	switch x := p.Rule.(type) {
	case *rbacconfig.Permission_Any:
		return x.Any
	case *rbacconfig.Permission_AndRules:
		for _, sub := range x.AndRules.Rules {
			if !permission(t, sub, r) {
				return false
			}
		}
		return true
	case *rbacconfig.Permission_OrRules:
		return anyPermission(t, x.OrRules.Rules, r)
	case *rbacconfig.Permission_NotRule:
		return !permission(t, x.NotRule, r)
	case *rbacconfig.Permission_DestinationPort:
		return x.DestinationPort == r.port
	case *rbacconfig.Permission_Header:
		switch x.Header.Name {
		case ":method":
			return stringMatch(t, x.Header.GetStringMatch(), r.method)
		case ":path":
			return stringMatch(t, x.Header.GetStringMatch(), r.path)
		}
		t.Fatalf("RBAC header %q: the evaluator knows :method and :path", x.Header.Name)
	case *rbacconfig.Permission_UrlPath:
		return stringMatch(t, x.UrlPath.GetPath(), r.path)
	}
	t.Fatalf("RBAC permission %T: not known to the evaluator", p.Rule)
	return false
}

func anyPrincipal(t *testing.T, ps []*rbacconfig.Principal, r request) bool {
	for _, p := range ps {
		if principal(t, p, r) {
			return true
		}
	}
	return false
}

func principal(t *testing.T, p *rbacconfig.Principal, r request) bool {
	t.Helper()
	switch x := p.Identifier.(type) {
	case *rbacconfig.Principal_Any:
		return x.Any
	case *rbacconfig.Principal_AndIds:
		for _, sub := range x.AndIds.Ids {
			if !principal(t, sub, r) {
				return false
			}
		}
		return true
	case *rbacconfig.Principal_OrIds:
		return anyPrincipal(t, x.OrIds.Ids, r)
	case *rbacconfig.Principal_NotId:
		return !principal(t, x.NotId, r)
	case *rbacconfig.Principal_Authenticated_:
		return r.principal != "" && (x.Authenticated.PrincipalName == nil || stringMatch(t, x.Authenticated.PrincipalName, r.principal))
	}
	t.Fatalf("RBAC principal %T: not known to the evaluator", p.Identifier)
	return false
}

func stringMatch(t *testing.T, m *matcher.StringMatcher, s string) bool {
	t.Helper()
	var ok bool
	switch x := m.MatchPattern.(type) {
	case *matcher.StringMatcher_Exact:
		ok = x.Exact == s
	case *matcher.StringMatcher_Prefix:
		ok = strings.HasPrefix(s, x.Prefix)
	case *matcher.StringMatcher_Suffix:
		ok = strings.HasSuffix(s, x.Suffix)
	case *matcher.StringMatcher_Contains:
		ok = strings.Contains(s, x.Contains)
	default:
		t.Fatalf("string matcher %T: not known to the evaluator", m.MatchPattern)
	}
	return ok
}

// apCase is what the RBAC expectations need of an access-policy case.
type apCase struct {
	Policy struct {
		Sources []struct {
			placement
			Namespace      string `json:"namespace"`
			ServiceAccount string `json:"serviceAccount"`
		} `json:"sources"`
		Rules []struct {
			Methods []string `json:"methods"`
			Paths   []string `json:"paths"`
			Ports   []uint32 `json:"ports"`
		} `json:"rules"`
	} `json:"policy"`
}

// TestAccessPolicyRBAC asks Istio's generated RBAC, on the destination's
// workload in each cluster that holds the policy, whether each source's
// principal (from every source cluster's trust domain) and an intruder
// may make the policy's request, and records the answers. An intruder is
// never allowed; sources are allowed in at least one backend cluster.
func TestAccessPolicyRBAC(t *testing.T) {
	forEachCase(t, "access-policy", nil, simulateAccessPolicy)
}

func simulateAccessPolicy(t *testing.T, g *goldenCase, ap apCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# What Istio's RBAC filters (generated from %s.golden.yaml) decide on the\n", g.name)
	b.WriteString("# destination workload in each cluster that holds the policy, per caller and request.\n")
	b.WriteString("# `make simulation UPDATE=1` rewrites it.\n")
	req := request{method: "GET", path: "/", port: 8080}
	if len(ap.Policy.Rules) > 0 {
		r := ap.Policy.Rules[0]
		if len(r.Methods) > 0 {
			req.method = r.Methods[0]
		}
		if len(r.Paths) > 0 {
			req.path = strings.ReplaceAll(r.Paths[0], "*", "x")
		}
		if len(r.Ports) > 0 {
			req.port = r.Ports[0]
		}
	}
	var callers []string
	seen := map[string]bool{}
	for _, src := range ap.Policy.Sources {
		for _, c := range g.registry {
			if src.placement.empty() || src.placement.selects(c) {
				td := c.TrustDomain
				if td == "" {
					td = "cluster.local"
				}
				p := fmt.Sprintf("spiffe://%s/ns/%s/sa/%s", td, src.Namespace, src.ServiceAccount)
				if !seen[p] {
					seen[p] = true
					callers = append(callers, p)
				}
			}
		}
	}
	sort.Strings(callers)
	intruder := "spiffe://cluster.local/ns/intruders/sa/intruder"
	allowedSomewhere := map[string]bool{}
	for _, c := range sortedKeys(g.objects) {
		s := newIstiod(t, g, c, g.objects[c])
		for _, w := range authorizationTargets(g.objects[c]) {
			p := s.workload(w.namespace, w.labels)
			filters := s.rbacFilters(t, p)
			if len(filters) == 0 {
				t.Errorf("%s: Istio put no RBAC filter in front of %s/%v", c, w.namespace, w.labels)
			}
			for _, who := range append(append([]string(nil), callers...), intruder, "") {
				r := req
				r.principal = who
				ok := decide(t, filters, r)
				verdict := "DENY"
				if ok {
					verdict = "ALLOW"
					allowedSomewhere[who] = true
				}
				fmt.Fprintf(&b, "%-72s | %s\n", fmt.Sprintf("%s %s/%s <- %s", c, w.namespace, labelString(w.labels), r), verdict)
				if ok && (who == intruder || who == "") {
					t.Errorf("%s: %s is allowed on %s/%v", c, r, w.namespace, w.labels)
				}
			}
		}
	}
	if len(ap.Policy.Rules) <= 1 {
		for _, who := range callers {
			if !allowedSomewhere[who] {
				t.Logf("note: %s is allowed nowhere (the case's trust domains may be shared or the source excluded)", who)
			}
		}
	}
	return b.String()
}

// authTarget is a workload an AuthorizationPolicy selects.
type authTarget struct {
	namespace string
	labels    map[string]string
}

// authorizationTargets reads, from a cluster's golden objects, the
// workloads the AuthorizationPolicies select.
func authorizationTargets(docs []string) []authTarget {
	var out []authTarget
	for _, d := range docs {
		var obj struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Namespace string `json:"namespace"`
			} `json:"metadata"`
			Spec struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
			} `json:"spec"`
		}
		if yaml.Unmarshal([]byte(d), &obj) != nil || obj.Kind != "AuthorizationPolicy" {
			continue
		}
		labels := obj.Spec.Selector.MatchLabels
		if len(labels) == 0 {
			labels = map[string]string{"app": "any"}
		}
		out = append(out, authTarget{namespace: obj.Metadata.Namespace, labels: labels})
	}
	return out
}

// workload is a sidecar with labels in ns.
func (s *istiod) workload(ns string, labels map[string]string) *model.Proxy {
	l := map[string]string{}
	for k, v := range labels {
		l[k] = v
	}
	return s.SetupProxy(&model.Proxy{
		ID: "workload-0." + ns, ConfigNamespace: ns, Labels: l, IPAddresses: []string{"10.1.0.7"},
		Metadata: &model.NodeMetadata{Namespace: ns, Labels: l, Network: network.ID(s.self.Network), ClusterID: cluster.ID(s.self.Name)},
	})
}

func labelString(m map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ",")
}
