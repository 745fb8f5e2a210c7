package accesspolicy

import (
	"maps"
	"slices"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"

	"fmt"
	"sort"
	"strings"
)

// The trust-domain rule of mesh_access_policy.
//
// A principal <td>/ns/<ns>/sa/<sa> admits the service account ns/sa of every
// cluster whose trust domain is td: the trust domain is the only part of a
// workload's identity that says which cluster it runs in. In the policy for
// a destination cluster B, the sources that may call B allow ns/sa from a
// set of clusters A. If a cluster outside A shares a trust domain with a
// cluster in A, the principal admits it too, and the intent (allow A, not
// the others) cannot be enforced: plan fails and says so.
//
// Only registered clusters are considered; a source whose placement
// selects every cluster has nothing to tell apart. A second case fails the
// same way: Istio reads the trust domain "cluster.local" in a policy as the
// enforcing cluster's own trust domain (and its aliases), so a source
// cluster on "cluster.local" cannot be named in a cluster with another trust
// domain. Checks that depend on a trust domain known only after apply are
// skipped at plan; apply translates again with the known values.

// checkTrustDomains returns one error per source and trust domain that
// cannot be told apart, and one per source cluster whose "cluster.local"
// would be read as another cluster's trust domain.
func checkTrustDomains(in Intent, plan plan, reg *translate.Registry) translate.Errors {
	type collisionKey struct {
		source int
		td     string
	}
	type collision struct {
		allowed, excluded, in map[string]bool
	}
	collisions := map[collisionKey]*collision{}
	type rewriteKey struct {
		source  int
		cluster string
	}
	rewrites := map[rewriteKey]map[string]bool{} // enforcing clusters
	// The registered clusters by trust domain, in name order.
	byTD := map[string][]string{}
	shared := false // two clusters on one trust domain, or one on "cluster.local"
	for _, x := range reg.Names() {
		td := trustDomain(reg.Cluster(x))
		byTD[td] = append(byTD[td], x)
		shared = shared || len(byTD[td]) > 1 || td == translate.DefaultTrustDomain
	}
	if !shared {
		return nil // every cluster has a trust domain of its own: nothing to tell apart
	}

	for _, b := range enforcingClusters(plan) {
		tdB := trustDomain(reg.Cluster(b))
		// Clusters whose ns/sa the policy in b allows, per ns/sa.
		allowed := map[[2]string]map[string]bool{}
		for _, s := range plan.sources {
			if !s.to[b] {
				continue
			}
			key := [2]string{s.in.Namespace, s.in.ServiceAccount}
			if allowed[key] == nil {
				allowed[key] = map[string]bool{}
			}
			for _, c := range s.clusters {
				allowed[key][c] = true
			}
		}
		for _, s := range plan.sources {
			if !s.to[b] {
				continue
			}
			allowedHere := allowed[[2]string{s.in.Namespace, s.in.ServiceAccount}]
			for _, c := range s.clusters {
				td := trustDomain(reg.Cluster(c))
				if translate.IsUnknown(td) {
					continue
				}
				if td == translate.DefaultTrustDomain && tdB != translate.DefaultTrustDomain && !translate.IsUnknown(tdB) {
					k := rewriteKey{s.index, c}
					if rewrites[k] == nil {
						rewrites[k] = map[string]bool{}
					}
					rewrites[k][b] = true
					continue
				}
				for _, x := range byTD[td] {
					if allowedHere[x] {
						continue
					}
					k := collisionKey{s.index, td}
					if collisions[k] == nil {
						collisions[k] = &collision{map[string]bool{}, map[string]bool{}, map[string]bool{}}
					}
					collisions[k].allowed[c] = true
					collisions[k].excluded[x] = true
					collisions[k].in[b] = true
				}
			}
		}
	}

	var errs translate.Errors
	for i, s := range in.Sources {
		at := placementPath(translate.Root("sources").Index(i), s.Placement)
		principal := func(td string) string { return principal(td, s.Namespace, s.ServiceAccount) }
		var tds []string
		for k := range collisions {
			if k.source == i {
				tds = append(tds, k.td)
			}
		}
		sort.Strings(tds)
		for _, td := range tds {
			c := collisions[collisionKey{i, td}]
			errs = append(errs, translate.Errorf(at, "Access policy cannot be enforced",
				"The source allows %s/%s from %s but not from %s, and they share the trust domain %q%s. "+
					"The principal %q in the AuthorizationPolicy for %s would admit all of them: "+
					"a principal tells clusters apart only by their trust domain. "+
					"Give each cluster a distinct trust_domain in the provider's clusters (the meshConfig.trustDomain its Istio installation uses), "+
					"or widen the source's placement to include %s.",
				s.Namespace, s.ServiceAccount, clusterList(c.allowed), clusterList(c.excluded), td, defaultNote(td),
				principal(td), clusterList(c.in), join(c.excluded)))
		}
		var rewritten []string
		for k := range rewrites {
			if k.source == i {
				rewritten = append(rewritten, k.cluster)
			}
		}
		sort.Strings(rewritten)
		for _, c := range rewritten {
			in := rewrites[rewriteKey{i, c}]
			var where []string
			for _, b := range slices.Sorted(maps.Keys(in)) {
				where = append(where, fmt.Sprintf("%s (trust domain %q)", b, trustDomain(reg.Cluster(b))))
			}
			errs = append(errs, translate.Errorf(at, "Access policy cannot be enforced",
				"The source allows %s/%s from cluster %s, whose trust domain is %q%s. "+
					"Istio reads that trust domain in an AuthorizationPolicy as the enforcing cluster's own, "+
					"so the principal %q in the policy for %s would name that cluster's workloads instead of those in %s. "+
					"Give %s a distinct trust_domain in the provider's clusters (the meshConfig.trustDomain its Istio installation uses).",
				s.Namespace, s.ServiceAccount, c, translate.DefaultTrustDomain, defaultNote(translate.DefaultTrustDomain),
				principal(translate.DefaultTrustDomain), strings.Join(where, ", "), c, c))
		}
	}
	return errs
}

// enforcingClusters lists the clusters with a destination backend, sorted.
func enforcingClusters(plan plan) []string {
	var out []string
	for _, b := range plan.backends {
		if len(out) == 0 || out[len(out)-1] != b.Cluster {
			out = append(out, b.Cluster)
		}
	}
	return out
}

// placementPath is the attribute that chose a placement's clusters.
func placementPath(at translate.Path, p translate.Placement) translate.Path {
	switch {
	case p.IsZero():
		return at
	case len(p.Clusters) > 0:
		return at.Attr("clusters")
	default:
		return at.Attr("cluster_selector")
	}
}

func defaultNote(td string) string {
	if td == translate.DefaultTrustDomain {
		return " (Istio's default, also used for clusters without trust_domain)"
	}
	return ""
}

func clusterList(set map[string]bool) string {
	if len(set) == 1 {
		return "cluster " + join(set)
	}
	return "clusters " + join(set)
}
