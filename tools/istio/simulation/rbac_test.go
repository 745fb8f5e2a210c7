package simulation

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	rbacconfig "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	rbachttp "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	uritemplate "github.com/envoyproxy/go-control-plane/envoy/extensions/path/match/uri_template/v3"
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
	case *rbacconfig.Permission_UriTemplate:
		// Envoy's path template: * one segment, ** the rest (Istio
		// writes the policy's {*} and {**} so).
		cfg := &uritemplate.UriTemplateMatchConfig{}
		if err := x.UriTemplate.GetTypedConfig().UnmarshalTo(cfg); err != nil {
			t.Fatalf("RBAC uri_template: %v", err)
		}
		re := regexp.QuoteMeta(strings.NewReplacer("{**}", "**", "{*}", "*").Replace(cfg.PathTemplate))
		re = strings.ReplaceAll(re, `\*\*`, `.*`)
		re = strings.ReplaceAll(re, `\*`, `[^/]+`)
		return regexp.MustCompile("^" + re + "$").MatchString(r.path)
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
		Sources []apSource `json:"sources"`
		Rules   []apRule   `json:"rules"`
	} `json:"policy"`
	Destination struct {
		placement
		VirtualDestination string `json:"virtualDestination"`
		Backends           []struct {
			Cluster   string `json:"cluster"`
			Namespace string `json:"namespace"`
			Service   string `json:"service"`
		} `json:"backends"`
		Service        string            `json:"service"`
		Namespace      string            `json:"namespace"`
		WorkloadLabels map[string]string `json:"workloadLabels"`
	} `json:"destination"`
}

type apSource struct {
	placement
	Namespace           string    `json:"namespace"`
	ServiceAccount      string    `json:"serviceAccount"`
	DestinationClusters placement `json:"destinationClusters"`
}

type apRule struct {
	Methods []string `json:"methods"`
	Paths   []string `json:"paths"`
	Ports   []uint32 `json:"ports"`
}

// trustDomain is the cluster's trust domain (cluster.local by default).
func (c registryCluster) trustDomain() string {
	if c.TrustDomain == "" {
		return "cluster.local"
	}
	return c.TrustDomain
}

// mayCall is the intent's answer: may principal make r on the destination
// in cluster dest? A source allows its namespace and service account from
// the trust domains of the clusters it selects, in the destination
// clusters it names (none: every one), for requests one rule matches.
func (ap apCase) mayCall(g *goldenCase, dest string, r request) bool {
	who := false
	for _, s := range ap.Policy.Sources {
		if !s.DestinationClusters.empty() && !s.DestinationClusters.selects(g.cluster(dest)) {
			continue
		}
		for _, c := range g.registry {
			if s.placement.selects(c) && r.principal == fmt.Sprintf("spiffe://%s/ns/%s/sa/%s", c.trustDomain(), s.Namespace, s.ServiceAccount) {
				who = true
			}
		}
	}
	if !who {
		return false
	}
	if len(ap.Policy.Rules) == 0 {
		return true
	}
	for _, rule := range ap.Policy.Rules {
		if rule.matches(r) {
			return true
		}
	}
	return false
}

// matches is Istio's reading of a rule (AuthorizationPolicy operation):
// every field set must match; paths are exact, "prefix*", "*suffix", or
// templates with {*} (one segment) and {**} (the rest).
func (rule apRule) matches(r request) bool {
	if len(rule.Methods) > 0 && !slices.Contains(rule.Methods, r.method) {
		return false
	}
	if len(rule.Ports) > 0 && !slices.Contains(rule.Ports, r.port) {
		return false
	}
	if len(rule.Paths) == 0 {
		return true
	}
	for _, p := range rule.Paths {
		switch {
		case p == "*":
			return true
		case strings.Contains(p, "{"):
			re := regexp.QuoteMeta(p)
			re = strings.ReplaceAll(re, `\{\*\*\}`, `.*`)
			re = strings.ReplaceAll(re, `\{\*\}`, `[^/]+`)
			if regexp.MustCompile("^" + re + "$").MatchString(r.path) {
				return true
			}
		case strings.HasSuffix(p, "*") && strings.HasPrefix(r.path, strings.TrimSuffix(p, "*")):
			return true
		case strings.HasPrefix(p, "*") && strings.HasSuffix(r.path, strings.TrimPrefix(p, "*")):
			return true
		case p == r.path:
			return true
		}
	}
	return false
}

// requests are, per rule, a request for every combination of its
// methods, paths and ports (each one the rule allows), and ones that
// differ from the first in one field (method, path, port): a near miss.
func (ap apCase) requests() []request {
	rules := ap.Policy.Rules
	if len(rules) == 0 {
		rules = []apRule{{}}
	}
	var out []request
	for _, rule := range rules {
		methods, paths, ports := rule.Methods, []string{"/"}, rule.Ports
		if len(methods) == 0 {
			methods = []string{"GET"}
		}
		if len(rule.Paths) > 0 {
			paths = nil
			for _, p := range rule.Paths {
				paths = append(paths, pathFor(p))
			}
		}
		if len(ports) == 0 {
			ports = []uint32{8080}
		}
		for _, m := range methods {
			for _, p := range paths {
				for _, port := range ports {
					out = append(out, request{method: m, path: p, port: port})
				}
			}
		}
		r := request{method: methods[0], path: paths[0], port: ports[0]}
		if len(rule.Methods) > 0 {
			w := r
			w.method = "DELETE"
			if slices.Contains(rule.Methods, "DELETE") {
				w.method = "PATCH"
			}
			out = append(out, w)
		}
		if len(rule.Paths) > 0 {
			w := r
			w.path = "/not/listed"
			out = append(out, w)
		}
		if len(rule.Ports) > 0 {
			w := r
			w.port = 7777
			out = append(out, w)
		}
	}
	return out
}

// pathFor is a request path a rule's path pattern matches: its
// wildcards and templates filled in.
func pathFor(pattern string) string {
	p := strings.ReplaceAll(pattern, "{**}", "a/b")
	p = strings.ReplaceAll(p, "{*}", "a")
	p = strings.ReplaceAll(p, "*", "x")
	if strings.HasPrefix(p, "x") {
		p = "/" + p
	}
	return p
}

// TestAccessPolicyRBAC asks Istio's generated RBAC, on the destination's
// workloads (its pods' labels, in each cluster the intent places it), who
// may make which request: every source principal (from every cluster the
// source selects) and the same namespace and service account from every
// other trust domain of the registry, an intruder and a caller without
// identity, each with a request each rule allows and with the wrong
// method, path and port. Istio's decision must be the intent's (mayCall).
func TestAccessPolicyRBAC(t *testing.T) {
	forEachCase(t, "access-policy", nil, simulateAccessPolicy)
}

func simulateAccessPolicy(t *testing.T, g *goldenCase, ap apCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# What Istio's RBAC filters (generated from %s.golden.yaml) decide on the\n", g.name)
	b.WriteString("# destination's pods in each cluster the intent places it, per caller and request.\n")
	b.WriteString("# `make simulation UPDATE=1` rewrites it.\n")
	var callers []string
	seen := map[string]bool{}
	for _, src := range ap.Policy.Sources {
		for _, c := range g.registry {
			// Every trust domain: those of the clusters the source
			// selects must be allowed, the others denied.
			p := fmt.Sprintf("spiffe://%s/ns/%s/sa/%s", c.trustDomain(), src.Namespace, src.ServiceAccount)
			if !seen[p] {
				seen[p] = true
				callers = append(callers, p)
			}
		}
	}
	sort.Strings(callers)
	callers = append(callers, "spiffe://cluster.local/ns/intruders/sa/intruder", "")
	stated := g.apRouting(t)
	if g.planned != nil {
		// An example's case: Istio judges the words its plan showed.
		stated = plannedAccess(t, g, g.planned)
	}
	var enforcing, placed []string
	for c := range stated.Clusters {
		enforcing = append(enforcing, c)
	}
	for _, w := range ap.destinationPods(g) {
		placed = append(placed, w.cluster)
	}
	sort.Strings(enforcing)
	sort.Strings(placed)
	placed = slices.Compact(placed) // two backends in one cluster
	if !slices.Equal(enforcing, placed) {
		t.Errorf("the routing statement (the plan) enforces the policy in %v; the destination's pods are in %v", enforcing, placed)
	}
	for _, w := range ap.destinationPods(g) {
		s := newIstiod(t, g, w.cluster, g.objects[w.cluster])
		p := s.workload(w.namespace, w.labels)
		filters := s.rbacFilters(t, p)
		for _, r := range ap.requests() {
			for _, who := range callers {
				r.principal = who
				ok := decide(t, filters, r)
				fmt.Fprintf(&b, "%-72s | %s\n", fmt.Sprintf("%s %s/%s <- %s", w.cluster, w.namespace, labelString(w.labels), r), verdict(ok))
				if want := statedAllows(stated, w.cluster, r); ok != want {
					t.Errorf("destination in %s: Istio answers %s to %s; the routing statement (the plan) says %s", w.cluster, verdict(ok), r, verdict(want))
				}
				if want := ap.mayCall(g, w.cluster, r); ok != want {
					t.Errorf("destination in %s: Istio answers %s to %s; the intent says %s", w.cluster, verdict(ok), r, verdict(want))
				}
			}
		}
	}
	return b.String()
}

// destPod is the destination's pods in one cluster.
type destPod struct {
	cluster, namespace string
	labels             map[string]string
}

// destinationPods are the destination's pods as its Kubernetes Service
// selects them (app: <service>, version v1, and the workload labels the
// intent says they carry), in each cluster the intent places it.
func (ap apCase) destinationPods(g *goldenCase) []destPod {
	d := ap.Destination
	labels := func(svc string) map[string]string {
		l := map[string]string{"app": svc, "version": "v1"}
		for k, v := range d.WorkloadLabels {
			l[k] = v
		}
		return l
	}
	var out []destPod
	if d.VirtualDestination != "" {
		for _, b := range d.Backends {
			if d.placement.selects(g.cluster(b.Cluster)) {
				out = append(out, destPod{b.Cluster, b.Namespace, labels(b.Service)})
			}
		}
		return out
	}
	for _, c := range g.registry {
		if d.placement.selects(c) {
			out = append(out, destPod{c.Name, d.Namespace, labels(d.Service)})
		}
	}
	return out
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
