package translate

import (
	"fmt"
	"sort"
	"strings"
)

// unknownPrefix starts every placeholder for a value Terraform does not know
// yet. It contains characters no valid Istio field value can hold, so it can
// never be mistaken for real output.
const unknownPrefix = "\x00unknown:"

// Unknown returns a placeholder for a topology fact that is known only after
// apply, for example the east-west gateway address of a cluster created in
// the same run. what names the fact, for debugging.
func Unknown(what string) string { return unknownPrefix + what }

// IsUnknown reports whether s is, or contains, an Unknown placeholder.
func IsUnknown(s string) bool { return strings.Contains(s, unknownPrefix) }

// Cluster is what the translator knows about one registered cluster: its
// topology, never its credentials. String fields may hold Unknown values.
type Cluster struct {
	Name        string
	Network     string
	Region      string
	Zone        string
	TrustDomain string
	// IstioVersion is the cluster's Istio minor version ("1.31"); empty
	// means DefaultIstioVersion.
	IstioVersion string
	Labels       map[string]string
	// LabelsUnknown is set when the labels are not known until apply; any
	// placement by selector over this cluster is then unknown too.
	LabelsUnknown bool
	// EastWestGateway is nil when the cluster has none.
	EastWestGateway *Gateway
}

// Topology defaults, for clusters whose registry entry leaves them empty.
const (
	// DefaultIstioNS is Istio's root namespace in a default install.
	DefaultIstioNS = "istio-system"
	// DefaultEastWestPort is the port of the east-west gateway's TLS
	// passthrough server in Istio's multi-network install.
	DefaultEastWestPort = 15443
	// DefaultTrustDomain is Istio's meshConfig.trustDomain when none is set.
	DefaultTrustDomain = "cluster.local"
)

// DefaultEastWestHosts are passed through the east-west gateway when the
// intent names none: the global mesh hostnames. Cluster-local services
// (*.local) are left to the Gateway that Istio's multi-network install
// creates (cross-network-gateway, hosts *.local, the same port): Istio
// merges the Gateways of one port and skips a whole server whose hosts
// repeat one already seen (pilot/pkg/model/gateway.go, CheckDuplicates),
// so a second *.local would drop either Istio's server or ours, *.global
// with it.
var DefaultEastWestHosts = []string{"*.global"}

// Gateway is a cluster's east-west gateway as seen from other networks.
type Gateway struct {
	Address string // IP or hostname; may be Unknown
	Port    uint32
	// PortUnknown is set when the port is known only after apply; objects
	// that use it are then planned as unknown.
	PortUnknown bool
	// TargetPort is the port the gateway pods listen on, which the Gateway
	// server names; 0 means Port (Istio's install uses 15443 for both,
	// a load balancer in front may not).
	TargetPort uint32
	// Hosts are the hosts the gateway passes through; nil means
	// DefaultEastWestHosts. HostsUnknown is set when they are known only
	// after apply (nothing is then checked against them).
	Hosts        []string
	HostsUnknown bool
}

// PassedHosts are the hosts the gateway passes through.
func (g *Gateway) PassedHosts() []string {
	if g == nil || g.Hosts == nil {
		return DefaultEastWestHosts
	}
	return g.Hosts
}

// HostCovered reports whether host matches one of patterns, with Istio's
// wildcard rule: "*" matches everything, "*.example" any name ending in
// ".example", anything else only itself.
func HostCovered(host string, patterns []string) bool {
	for _, p := range patterns {
		switch {
		case p == "*" || p == host:
			return true
		case strings.HasPrefix(p, "*.") && strings.HasSuffix(host, p[1:]):
			return true
		}
	}
	return false
}

// Locality is the Istio locality string region/zone of the cluster, empty
// when the region is not set.
func (c *Cluster) Locality() string {
	switch {
	case c.Region == "":
		return ""
	case c.Zone == "":
		return c.Region
	default:
		return c.Region + "/" + c.Zone
	}
}

// Registry is the index of registered clusters, built once and queried by
// every translator.
type Registry struct {
	byName map[string]*Cluster
	names  []string
}

// NewRegistry indexes clusters by name.
func NewRegistry(clusters ...Cluster) *Registry {
	r := &Registry{byName: make(map[string]*Cluster, len(clusters))}
	for i := range clusters {
		c := clusters[i]
		r.byName[c.Name] = &c
		r.names = append(r.names, c.Name)
	}
	sort.Strings(r.names)
	return r
}

// Names returns the registered cluster names, sorted.
func (r *Registry) Names() []string { return append([]string(nil), r.names...) }

// Cluster returns the named cluster, or nil.
func (r *Registry) Cluster(name string) *Cluster { return r.byName[name] }

// Placement selects clusters: by name, by labels (all must match), or, when
// both are empty, every registered cluster.
type Placement struct {
	Clusters        []string
	ClusterSelector map[string]string
}

// IsZero reports whether the placement selects every cluster.
func (p Placement) IsZero() bool { return len(p.Clusters) == 0 && len(p.ClusterSelector) == 0 }

// Select resolves a placement into sorted cluster names. at is the attribute
// path of the placement, used in errors. It fails when a named cluster is not
// registered, and returns ErrUnknownPlacement when a selector must look at
// labels that are not known yet.
func (r *Registry) Select(p Placement, at Path) ([]string, error) {
	var out []string
	if len(p.Clusters) > 0 {
		seen := map[string]bool{}
		for i, name := range p.Clusters {
			if r.byName[name] == nil {
				return nil, Errorf(at.Attr("clusters").Index(i), "Unknown cluster", "%s Add it to the provider block or fix the name.", r.UnknownCluster(name))
			}
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	} else {
		out = append(out, r.names...)
	}
	if len(p.ClusterSelector) > 0 {
		var kept []string
		for _, name := range out {
			c := r.byName[name]
			if c.LabelsUnknown {
				return nil, ErrUnknownPlacement
			}
			if SelectorMatches(c.Labels, p.ClusterSelector) {
				kept = append(kept, name)
			}
		}
		out = kept
	}
	sort.Strings(out)
	return out, nil
}

// UnknownCluster says that a cluster name is not registered: the
// registered names, and the closest of them when name looks like a typo of
// it. The caller adds the fix.
func (r *Registry) UnknownCluster(name string) string {
	return fmt.Sprintf("Cluster %q is not registered in the provider's clusters (registered: %s).%s",
		name, r.NamesForError(), r.didYouMean(name))
}

// didYouMean is ` Did you mean "x"?` for the registered name closest to
// name, when it differs only in case or by at most a third of its letters
// (two at least); "" otherwise. Ties go to the first name in order.
func (r *Registry) didYouMean(name string) string {
	best, bestDist := "", -1
	for _, n := range r.names {
		d := editDistance(strings.ToLower(name), strings.ToLower(n))
		if bestDist < 0 || d < bestDist {
			best, bestDist = n, d
		}
	}
	limit := max(2, len(name)/3)
	if best == "" || bestDist > limit {
		return ""
	}
	return fmt.Sprintf(" Did you mean %q?", best)
}

// editDistance is the Levenshtein distance of a and b, in bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func (r *Registry) NamesForError() string {
	if len(r.names) == 0 {
		return "none"
	}
	return strings.Join(r.names, ", ")
}

func SelectorMatches(labels, selector map[string]string) bool {
	for k, v := range selector {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// ErrUnknownPlacement means a placement cannot be resolved until apply,
// because it selects by labels that are not known yet. The engine then plans
// the whole object list as unknown.
var ErrUnknownPlacement = fmt.Errorf("placement depends on cluster labels known only after apply")
