package simulation

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/tools/istio/internal/oracle"
)

// The routing statement (internal/translate/routing, the plan's `routing`
// attribute) is computed from the intent and the registry alone; Istio's
// answers come from the translator's objects. The simulations compare
// the two for every golden case, so that a change to either side alone
// fails (tools/mutate: istio/* mutate the translator, routing/* the
// statement).

// vdRouting is the routing statement of the case's virtual destination.
func (g *goldenCase) vdRouting(t *testing.T) routing.Destination {
	t.Helper()
	d, err := oracle.RoutingVirtualDestination(g.raw, g.oracleRegistry())
	if err != nil {
		t.Fatalf("the routing statement of %s: %v", g.name, err)
	}
	return d
}

// tierNames are a statement's tiers as cluster names, as tierClusters
// writes Istio's.
func tierNames(tiers []routing.Tier) [][]string {
	var out [][]string
	for _, tier := range tiers {
		var names []string
		for _, s := range tier {
			names = append(names, s.To)
		}
		sort.Strings(names)
		out = append(out, names)
	}
	return out
}

// checkRoutingClients compares the client clusters of the statement with
// those Istio was asked about (the intent's clients).
func checkRoutingClients(t *testing.T, d routing.Destination, clients []string) {
	t.Helper()
	var stated []string
	for c := range d.Failover {
		stated = append(stated, c)
	}
	sort.Strings(stated)
	if !slices.Equal(stated, clients) {
		t.Errorf("the routing statement names client clusters %v; Istio gives the hostname to sidecars in %v", stated, clients)
	}
}

// tpRoutings are the routing statements of a traffic-policy case's
// policies, in the case's order (one, or each composed policy).
func (g *goldenCase) tpRoutings(t *testing.T, pds []pd) []routing.Traffic {
	t.Helper()
	var in struct {
		Policy      json.RawMessage `json:"policy"`
		Destination json.RawMessage `json:"destination"`
		Compose     []struct {
			Policy      json.RawMessage `json:"policy"`
			Destination json.RawMessage `json:"destination"`
		} `json:"compose"`
	}
	if err := json.Unmarshal(g.raw, &in); err != nil {
		t.Fatal(err)
	}
	policies := []json.RawMessage{in.Policy}
	if len(in.Compose) > 0 {
		policies = nil
		for _, c := range in.Compose {
			policies = append(policies, c.Policy)
		}
	}
	if len(policies) != len(pds) {
		t.Fatalf("%d policies in the case, %d read", len(policies), len(pds))
	}
	var out []routing.Traffic
	for i, p := range policies {
		var vd json.RawMessage
		if pds[i].d.VirtualDestination != "" {
			vd = vdOf(pds[i].d)
		}
		r, err := oracle.RoutingTrafficPolicy(p, vd, g.oracleRegistry())
		if err != nil {
			t.Fatalf("the routing statement of %s: %v", g.name, err)
		}
		out = append(out, r)
	}
	return out
}

// statedWeights is a statement's shift as weightsOf writes Istio's, in
// whole percentages of the shares' total: "<percent>% <Envoy cluster>".
func (g *goldenCase) statedWeights(d tpDestination, shares []routing.Share) map[string]float64 {
	total := 0.0
	for _, s := range shares {
		total += float64(s.Weight)
	}
	out := map[string]float64{}
	for _, s := range shares {
		out[g.shareCluster(d, s.To)] += float64(s.Weight) * 100 / total
	}
	return out
}

// shareCluster is the Envoy cluster a statement's target names: a
// cluster of the registry (a virtual destination's per-cluster host, or
// the service's cluster subset) or a subset of the destination.
func (g *goldenCase) shareCluster(d tpDestination, to string) string {
	if g.isCluster(to) {
		return d.envoyCluster("", tpTarget{Cluster: to})
	}
	return d.envoyCluster("", tpTarget{Subset: to})
}

// istioWeights are a route's weighted clusters in percent.
func istioWeights(a *route.RouteAction) map[string]float64 {
	out := map[string]float64{}
	if wc := a.GetWeightedClusters(); wc != nil {
		total := 0.0
		for _, c := range wc.Clusters {
			total += float64(c.GetWeight().GetValue())
		}
		for _, c := range wc.Clusters {
			out[c.Name] += float64(c.GetWeight().GetValue()) * 100 / total
		}
		return out
	}
	out[a.GetCluster()] = 100
	return out
}

// sameShares reports whether two splits agree to within a percentage
// point per target (the translator writes whole percentages).
func sameShares(a, b map[string]float64) bool {
	for k := range b {
		if _, ok := a[k]; !ok && b[k] >= 1 {
			return false
		}
	}
	for k, v := range a {
		if d := v - b[k]; d > 1 || d < -1 {
			return false
		}
	}
	return true
}

func percents(m map[string]float64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s %.4g%%", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// mirrorPercent is the share of requests a route's mirror copies.
func mirrorPercent(m *route.RouteAction_RequestMirrorPolicy) float64 {
	f := m.GetRuntimeFraction().GetDefaultValue()
	if f == nil {
		return 100
	}
	switch f.Denominator {
	case typev3.FractionalPercent_TEN_THOUSAND:
		return float64(f.Numerator) / 100
	case typev3.FractionalPercent_MILLION:
		return float64(f.Numerator) / 10000
	}
	return float64(f.Numerator)
}

// apRouting is the routing statement of the access-policy case.
func (g *goldenCase) apRouting(t *testing.T) routing.Access {
	t.Helper()
	a, err := oracle.RoutingAccessPolicy(g.raw, g.oracleRegistry())
	if err != nil {
		t.Fatalf("the routing statement of %s: %v", g.name, err)
	}
	return a
}

// statedAllows is the statement's answer: does it allow r in cluster?
func statedAllows(a routing.Access, cluster string, r request) bool {
	allow, ok := a.Clusters[cluster]
	if !ok || !slices.Contains(allow.Principals, strings.TrimPrefix(r.principal, "spiffe://")) {
		return false
	}
	if allow.Rules == nil {
		return true
	}
	for _, rule := range allow.Rules {
		ports := make([]uint32, len(rule.Ports))
		for i, p := range rule.Ports {
			ports[i] = uint32(p)
		}
		if (apRule{Methods: rule.Methods, Paths: rule.Paths, Ports: ports}).matches(r) {
			return true
		}
	}
	return false
}

// checkStatedRoute compares Istio's route for a source cluster's requests
// with the statement's shift and mirror.
func checkStatedRoute(t *testing.T, g *goldenCase, source, host string, d tpDestination, st routing.Route, a *route.RouteAction) {
	t.Helper()
	if st.Shift != nil {
		if got, want := istioWeights(a), g.statedWeights(d, st.Shift); !sameShares(got, want) {
			t.Errorf("source %s: Istio sends requests for %s to %s; the routing statement (the plan) says %s", source, host, percents(got), percents(want))
		}
	}
	var mirrors []string
	for _, m := range a.GetRequestMirrorPolicies() {
		mirrors = append(mirrors, fmt.Sprintf("%s %.4g%%", m.Cluster, mirrorPercent(m)))
	}
	want := []string(nil)
	if st.Mirror != nil {
		want = []string{fmt.Sprintf("%s %.4g%%", g.shareCluster(d, st.Mirror.To), st.Mirror.Percent)}
	}
	if !slices.Equal(mirrors, want) {
		t.Errorf("source %s: Istio mirrors requests for %s to %v; the routing statement (the plan) mirrors them to %v", source, host, mirrors, want)
	}
}
