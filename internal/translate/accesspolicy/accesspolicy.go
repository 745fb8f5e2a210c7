package accesspolicy

import (
	"maps"
	"slices"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"

	"errors"
	"sort"
	"strconv"
	"strings"

	securityapi "istio.io/api/security/v1beta1"
	typeapi "istio.io/api/type/v1beta1"
	security "istio.io/client-go/pkg/apis/security/v1"
)

// Intent is mesh_access_policy: which workloads, in which
// clusters, may call a destination, and with which requests. It translates
// into ALLOW AuthorizationPolicies enforced where the destination's
// workloads run (Istio authorizes on the server side). The destination is
// passed apart, as a Destination the provider has resolved.
//
// A policy only ever allows: it emits no object in a cluster where none of
// its sources may call, and never a rule without principals. Denying what no
// policy allows is mesh_cluster.default_deny's job.
type Intent struct {
	// Name derives the object names (NamePrefix + Name).
	Name    string   `json:"name"`
	Sources []Source `json:"sources"`
	// Rules restrict the requests the sources may make; a request must
	// match one rule. Empty means any request.
	Rules []Rule `json:"rules,omitempty"`
}

// Source is one entry of sources: a Kubernetes service account in a
// namespace, in the clusters its placement selects (every registered
// cluster when the placement is empty). Its principal in a destination
// cluster is <trust domain of the source cluster>/ns/<namespace>/sa/<service
// account>, one per selected cluster.
type Source struct {
	// Placement (clusters, cluster_selector) selects the clusters the
	// callers run in.
	translate.Placement
	Namespace      string `json:"namespace"`
	ServiceAccount string `json:"serviceAccount"`
	// DestinationClusters (destination_clusters) restricts the destination
	// clusters this source may call, within those the destination covers;
	// empty means all of them. It is what lets one intent allow a caller in
	// some backend clusters of a virtual destination and not in others.
	DestinationClusters translate.Placement `json:"destinationClusters"`
}

// Rule is one entry of rules. A request matches when its method is
// one of Methods, its path matches one of Paths and its port is one of
// Ports; an empty field matches any value, and a rule with no field set
// matches every request.
type Rule struct {
	// Methods are HTTP methods, upper case.
	Methods []string `json:"methods,omitempty"`
	// Paths use Istio's matching: exact, "/prefix*", "*suffix", "*" (any
	// path), or a path template with {*} and {**}.
	Paths []string `json:"paths,omitempty"`
	// Ports are the ports the destination workloads receive the connection
	// on (the container ports, not the Service ports).
	Ports []int `json:"ports,omitempty"`
}

// Destination is the destination attribute of mesh_access_policy.
// Exactly one of VirtualDestination and Service is set.
type Destination struct {
	// VirtualDestination is the hostname of a mesh_virtual_destination; the
	// provider resolves it and passes its Backends.
	VirtualDestination string    `json:"virtualDestination,omitempty"`
	Backends           []Backend `json:"backends,omitempty"`
	// Service and Namespace name a plain Kubernetes service, enforced in
	// every cluster the placement selects.
	Service   string `json:"service,omitempty"`
	Namespace string `json:"namespace,omitempty"`
	// Placement (clusters, cluster_selector) restricts which clusters the
	// policy covers: the backend clusters of a virtual destination, or the
	// clusters a service runs in. Empty means all of them.
	translate.Placement
	// WorkloadLabels (workload_labels) select the destination pods; empty
	// means app: <service of each backend>, the convention of Istio's
	// samples and of most charts.
	WorkloadLabels map[string]string `json:"workloadLabels,omitempty"`
}

// Backend is one backend of a virtual destination, as the provider
// passes it: the service, its namespace and the cluster it runs in.
type Backend struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
}

// NamePrefix starts the name of every AuthorizationPolicy a
// mesh_access_policy owns.
const NamePrefix = "ap-"

// plan is an access policy resolved against the registry.
type plan struct {
	// backends are the enforcement points, deduplicated and sorted by
	// cluster, namespace, service.
	backends []Backend
	sources  []source
}

// source is a source with its placements resolved.
type source struct {
	index    int
	in       Source
	clusters []string        // where its callers run, sorted
	to       map[string]bool // destination clusters it may call
}

// Translate returns the AuthorizationPolicies of one access
// policy: in each cluster the destination covers, one ALLOW policy per
// destination backend, selecting the backend's workloads in its namespace
// and allowing the principals of the sources that may call that cluster.
//
// Errors are Errors with attribute paths. A placement that depends on
// labels not known yet yields ErrUnknownPlacement; a trust domain not known
// yet is carried as an Unknown placeholder inside the principals.
func Translate(in Intent, dest Destination, reg *translate.Registry) ([]translate.Object, error) {
	errs := Validate(in, dest)
	plan, unknown, resolveErrs := resolve(in, dest, reg)
	errs = append(errs, resolveErrs...)
	if len(errs) > 0 {
		return nil, errs
	}
	if unknown {
		return nil, translate.ErrUnknownPlacement
	}
	if err := checkTrustDomains(in, plan, reg).Err(); err != nil {
		return nil, err
	}

	// Two backends in the same cluster and namespace need two objects; the
	// service then tells their names apart.
	perNamespace := map[[2]string]int{}
	for _, b := range plan.backends {
		perNamespace[[2]string{b.Cluster, b.Namespace}]++
	}
	var out []translate.Object
	for _, b := range plan.backends {
		principals := principals(plan, b.Cluster, reg)
		if len(principals) == 0 {
			continue
		}
		name := NamePrefix + in.Name
		if perNamespace[[2]string{b.Cluster, b.Namespace}] > 1 {
			name += "-" + b.Service
		}
		out = append(out, translate.Object{
			Cluster:  b.Cluster,
			Resource: accessPolicyAuthorizationPolicy(name, b, dest.WorkloadLabels, principals, in.Rules),
		})
	}
	translate.Sort(out)
	return out, nil
}

// accessPolicyAuthorizationPolicy is the ALLOW policy of one backend.
func accessPolicyAuthorizationPolicy(name string, b Backend, workloadLabels map[string]string,
	principals []string, rules []Rule) *security.AuthorizationPolicy {
	return &security.AuthorizationPolicy{
		TypeMeta:   translate.TypeMeta(translate.SecurityV1, "AuthorizationPolicy"),
		ObjectMeta: translate.ObjectMeta(b.Namespace, name),
		Spec: securityapi.AuthorizationPolicy{
			Selector: selector(b, workloadLabels),
			Action:   securityapi.AuthorizationPolicy_ALLOW,
			Rules: []*securityapi.Rule{{
				From: from(principals),
				To:   to(rules),
			}},
		},
	}
}

// selector selects the backend's pods: the destination's workload_labels,
// or app: <service>.
func selector(b Backend, workloadLabels map[string]string) *typeapi.WorkloadSelector {
	labels := maps.Clone(workloadLabels)
	if len(labels) == 0 {
		labels = map[string]string{"app": b.Service}
	}
	return &typeapi.WorkloadSelector{MatchLabels: labels}
}

// from is the rule's single source: every principal allowed in the
// cluster. principals is never empty: a rule without `from` would allow
// every caller.
func from(principals []string) []*securityapi.Rule_From {
	return []*securityapi.Rule_From{{Source: &securityapi.Source{Principals: principals}}}
}

// to is one operation per intent rule (Istio ORs them; the fields of one
// operation are ANDed). Nil, meaning any operation, when there are no rules
// or one rule matches every request; Istio rejects an empty operation.
func to(rules []Rule) []*securityapi.Rule_To {
	var to []*securityapi.Rule_To
	for _, r := range rules {
		if len(r.Methods) == 0 && len(r.Paths) == 0 && len(r.Ports) == 0 {
			return nil
		}
		op := &securityapi.Operation{
			Methods: append([]string(nil), r.Methods...),
			Paths:   append([]string(nil), r.Paths...),
		}
		for _, p := range r.Ports {
			op.Ports = append(op.Ports, strconv.Itoa(p))
		}
		to = append(to, &securityapi.Rule_To{Operation: op})
	}
	return to
}

// principals lists, sorted and without duplicates, the principals of
// every source allowed to call the given destination cluster.
func principals(plan plan, cluster string, reg *translate.Registry) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range plan.sources {
		if !s.to[cluster] {
			continue
		}
		for _, c := range s.clusters {
			p := principal(trustDomain(reg.Cluster(c)), s.in.Namespace, s.in.ServiceAccount)
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// principal is an Istio principal: the SPIFFE ID without spiffe://.
func principal(trustDomain, namespace, serviceAccount string) string {
	return trustDomain + "/ns/" + namespace + "/sa/" + serviceAccount
}

// trustDomain is the cluster's trust domain, Istio's default when unset.
func trustDomain(c *translate.Cluster) string {
	if c.TrustDomain == "" {
		return translate.DefaultTrustDomain
	}
	return c.TrustDomain
}

// resolve resolves the destination's enforcement points and every
// source's placements. unknown reports a placement that depends on values
// known only after apply; the returned errors are the registry-dependent
// ones (unknown clusters, clusters that are not backends).
func resolve(in Intent, dest Destination, reg *translate.Registry) (plan plan, unknown bool, errs translate.Errors) {
	destPath := translate.Root("destination")
	selected, err := reg.Select(dest.Placement, destPath)
	destKnown := err == nil
	switch {
	case errors.Is(err, translate.ErrUnknownPlacement):
		unknown = true
	case err != nil:
		errs.Add(err)
	}

	var candidates []Backend
	switch {
	case dest.VirtualDestination != "":
		if len(dest.Backends) == 0 {
			errs.Add(translate.Errorf(destPath.Attr("virtual_destination"), "Virtual destination without backends",
				"The virtual destination %q has no backends, so there is no cluster to enforce the policy in.",
				dest.VirtualDestination))
		}
		backendClusters := map[string]bool{}
		for _, b := range dest.Backends {
			switch {
			case translate.IsUnknown(b.Cluster):
				unknown = true
			case reg.Cluster(b.Cluster) == nil:
				errs.Add(translate.Errorf(destPath.Attr("virtual_destination"), "Unknown cluster",
					"Backend cluster %q of the virtual destination %q is not registered in the provider's clusters (registered: %s). Register it, or fix the virtual destination's backends.",
					b.Cluster, dest.VirtualDestination, reg.NamesForError()))
			default:
				backendClusters[b.Cluster] = true
				candidates = append(candidates, b)
			}
		}
		// Naming a cluster that runs no backend is a mistake; a selector
		// that matches none is not (a module reused across environments).
		for i, name := range dest.Clusters {
			if reg.Cluster(name) != nil && !backendClusters[name] && !unknown {
				errs.Add(translate.Errorf(destPath.Attr("clusters").Index(i), "Cluster is not a backend",
					"Cluster %q runs no backend of the virtual destination %q (backend clusters: %s). Remove it, or add the backend to the virtual destination.",
					name, dest.VirtualDestination, join(backendClusters)))
			}
		}
	case dest.Service != "":
		for _, c := range selected {
			candidates = append(candidates, Backend{Cluster: c, Namespace: dest.Namespace, Service: dest.Service})
		}
	}

	// The destination's clusters, when resolved without problems; checks
	// against them would otherwise only repeat the destination's errors.
	destKnown = destKnown && len(errs) == 0 && !unknown &&
		(dest.VirtualDestination == "") != (dest.Service == "")
	covered := map[string]bool{}
	if destKnown {
		inPlacement := map[string]bool{}
		for _, c := range selected {
			inPlacement[c] = true
		}
		seen := map[Backend]bool{}
		for _, b := range candidates {
			if inPlacement[b.Cluster] && !seen[b] {
				seen[b] = true
				covered[b.Cluster] = true
				plan.backends = append(plan.backends, b)
			}
		}
		sort.Slice(plan.backends, func(i, j int) bool {
			a, b := plan.backends[i], plan.backends[j]
			if a.Cluster != b.Cluster {
				return a.Cluster < b.Cluster
			}
			if a.Namespace != b.Namespace {
				return a.Namespace < b.Namespace
			}
			return a.Service < b.Service
		})
	}

	for i, src := range in.Sources {
		at := translate.Root("sources").Index(i)
		s := source{index: i, in: src, to: map[string]bool{}}
		clusters, err := reg.Select(src.Placement, at)
		switch {
		case errors.Is(err, translate.ErrUnknownPlacement):
			unknown = true
		case err != nil:
			errs.Add(err)
		}
		s.clusters = clusters
		to, err := reg.Select(src.DestinationClusters, at.Attr("destination_clusters"))
		switch {
		case errors.Is(err, translate.ErrUnknownPlacement):
			unknown = true
		case err != nil:
			errs.Add(err)
		}
		for j, name := range src.DestinationClusters.Clusters {
			if destKnown && reg.Cluster(name) != nil && !covered[name] {
				errs.Add(translate.Errorf(at.Attr("destination_clusters").Attr("clusters").Index(j), "Cluster is not covered by the destination",
					"Cluster %q is not one of the clusters the destination covers (%s), so the source cannot be allowed there. Remove it, or widen the destination.",
					name, join(covered)))
			}
		}
		for _, c := range to {
			if covered[c] {
				s.to[c] = true
			}
		}
		plan.sources = append(plan.sources, s)
	}
	return plan, unknown, errs
}

// join lists a set's members, sorted, for an error message.
func join(set map[string]bool) string {
	if len(set) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(set)), ", ")
}
