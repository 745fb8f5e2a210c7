package routing

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
)

// Access is who an access policy allows, per enforcing cluster (a cluster
// where the destination's workloads run and the policy covers).
type Access struct {
	Clusters map[string]Allow
}

// Allow is what one access policy allows in one enforcing cluster. An
// Allow with no Callers allows nobody: the policy writes nothing there.
// Whatever no access policy allows is denied once any allows something
// for the workload (Istio's ALLOW semantics), and everywhere with
// mesh_cluster.default_deny.
type Allow struct {
	// Callers are the sources allowed here, sorted by namespace and
	// service account, each with the clusters it may call from.
	Callers []Caller
	// Principals are the callers' Istio principals,
	// <trust domain>/ns/<namespace>/sa/<service account>, sorted, without
	// duplicates. A trust domain known only after apply is an Unknown
	// placeholder.
	Principals []string
	// Rules are the requests allowed; nil means any request.
	Rules []accesspolicy.Rule
}

// Caller is one service account allowed to call, and where it runs.
type Caller struct {
	Namespace, ServiceAccount string
	Clusters                  []string
}

// AccessPolicy states whom an access policy allows in each enforcing
// cluster, from the intent's documented meaning
// (docs/design/access-policy.md): the enforcing clusters are the backend
// clusters of the virtual destination (dest.Backends) or, for a service,
// the registered clusters, in both cases within destination's placement;
// a source may call an enforcing cluster that its destination_clusters
// selects (omitted: all); its callers are its service account in every
// cluster its placement selects, identified by that cluster's trust
// domain (Istio's cluster.local when unset). It returns
// translate.ErrUnknownPlacement when a placement selects by labels not
// known yet.
func AccessPolicy(in accesspolicy.Intent, dest accesspolicy.Destination, reg *translate.Registry) (Access, error) {
	placed, err := selectClusters(reg, dest.Placement, translate.Root("destination"))
	if err != nil {
		return Access{}, err
	}
	enforcing := map[string]bool{}
	if dest.VirtualDestination != "" {
		inPlacement := map[string]bool{}
		for _, c := range placed {
			inPlacement[c] = true
		}
		for _, b := range dest.Backends {
			if reg.Cluster(b.Cluster) == nil {
				return Access{}, fmt.Errorf("routing: backend cluster %q is not registered", b.Cluster)
			}
			if inPlacement[b.Cluster] {
				enforcing[b.Cluster] = true
			}
		}
	} else {
		for _, c := range placed {
			enforcing[c] = true
		}
	}
	a := Access{Clusters: make(map[string]Allow, len(enforcing))}
	rules := effectiveRules(in.Rules)
	for c := range enforcing {
		a.Clusters[c] = Allow{Rules: rules}
	}
	for i, s := range in.Sources {
		at := translate.Root("sources").Index(i)
		from, err := selectClusters(reg, s.Placement, at)
		if err != nil {
			return Access{}, err
		}
		to, err := selectClusters(reg, s.DestinationClusters, at.Attr("destination_clusters"))
		if err != nil {
			return Access{}, err
		}
		for _, c := range to {
			allow, ok := a.Clusters[c]
			if !ok || len(from) == 0 {
				continue
			}
			allow.Callers = addCaller(allow.Callers, s.Namespace, s.ServiceAccount, from)
			for _, f := range from {
				allow.Principals = append(allow.Principals, trustDomain(reg.Cluster(f))+"/ns/"+s.Namespace+"/sa/"+s.ServiceAccount)
			}
			a.Clusters[c] = allow
		}
	}
	for c, allow := range a.Clusters {
		sort.Strings(allow.Principals)
		allow.Principals = slices.Compact(allow.Principals)
		sort.Slice(allow.Callers, func(i, j int) bool {
			x, y := allow.Callers[i], allow.Callers[j]
			if x.Namespace != y.Namespace {
				return x.Namespace < y.Namespace
			}
			return x.ServiceAccount < y.ServiceAccount
		})
		a.Clusters[c] = allow
	}
	return a, nil
}

// addCaller adds clusters to the caller ns/sa, merging with an entry
// already there.
func addCaller(callers []Caller, ns, sa string, clusters []string) []Caller {
	for i := range callers {
		if callers[i].Namespace == ns && callers[i].ServiceAccount == sa {
			merged := append(append([]string(nil), callers[i].Clusters...), clusters...)
			sort.Strings(merged)
			callers[i].Clusters = slices.Compact(merged)
			return callers
		}
	}
	return append(callers, Caller{Namespace: ns, ServiceAccount: sa, Clusters: append([]string(nil), clusters...)})
}

// effectiveRules is nil (any request) when there are no rules or one rule
// matches every request.
func effectiveRules(rules []accesspolicy.Rule) []accesspolicy.Rule {
	for _, r := range rules {
		if len(r.Methods) == 0 && len(r.Paths) == 0 && len(r.Ports) == 0 {
			return nil
		}
	}
	return rules
}

func trustDomain(c *translate.Cluster) string {
	if c.TrustDomain == "" {
		return translate.DefaultTrustDomain
	}
	return c.TrustDomain
}

// String renders "allow accounts/account from east, west: GET /users/*
// port 8080 | POST /admin", or "allow nobody".
func (a Allow) String() string {
	if len(a.Callers) == 0 {
		return "allow nobody"
	}
	who := make([]string, len(a.Callers))
	for i, c := range a.Callers {
		who[i] = c.Namespace + "/" + c.ServiceAccount + " from " + strings.Join(c.Clusters, ", ")
	}
	what := "any request"
	if len(a.Rules) > 0 {
		rs := make([]string, len(a.Rules))
		for i, r := range a.Rules {
			var parts []string
			if len(r.Methods) > 0 {
				parts = append(parts, strings.Join(r.Methods, ","))
			}
			if len(r.Paths) > 0 {
				parts = append(parts, strings.Join(r.Paths, ","))
			}
			if len(r.Ports) > 0 {
				ports := make([]string, len(r.Ports))
				for j, p := range r.Ports {
					ports[j] = strconv.Itoa(p)
				}
				parts = append(parts, "port "+strings.Join(ports, ","))
			}
			rs[i] = strings.Join(parts, " ")
		}
		what = strings.Join(rs, " | ")
	}
	return "allow " + strings.Join(who, "; ") + ": " + what
}

// Statement renders one line per enforcing cluster.
func (a Access) Statement() Statement {
	out := make(Statement, len(a.Clusters))
	for c, allow := range a.Clusters {
		out[c] = allow.String()
	}
	return out
}
