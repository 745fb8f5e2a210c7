package virtualdestination

import (
	"errors"
	"maps"
	"slices"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"

	networkingapi "istio.io/api/networking/v1alpha3"

	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Intent is mesh_virtual_destination: one global hostname
// whose backends run in several clusters. Client clusters get a ServiceEntry
// and a DestinationRule for the hostname; backend clusters that remote
// clients reach get what their east-west gateway needs to route the hostname
// to the local service. docs/design/virtual-destination.md describes the
// output.
type Intent struct {
	// Name names the owned objects (vd-<name>); a DNS-1123 label.
	Name string `json:"name"`
	// Hostname is the global name clients call, e.g. user.global.
	Hostname string `json:"hostname"`
	// Namespace holds the client-side objects in every client cluster and
	// must be the namespace of the east-west gateway (mesh_cluster's
	// istio_namespace). Empty means translate.DefaultIstioNS.
	Namespace string    `json:"namespace,omitempty"`
	Ports     []Port    `json:"ports"`
	Backends  []Backend `json:"backends"`
	// Failover nil means priority failover with the default outlier
	// detection.
	Failover *Failover `json:"failover,omitempty"`
	Clients  Clients   `json:"clients,omitempty"`
	// VIP is the hostname's virtual IP in every client cluster; empty
	// means VIP(Hostname).
	VIP string `json:"vip,omitempty"`
}

// Port is one port of the hostname.
type Port struct {
	// Number is the port clients call on the hostname.
	Number int64 `json:"number"`
	// Protocol is one of VirtualDestinationProtocols.
	Protocol string `json:"protocol"`
	// TargetPort is the port of the backend Kubernetes Service; nil means
	// Number.
	TargetPort *int64 `json:"targetPort,omitempty"`
}

// Backend is one Kubernetes Service that serves the
// hostname. A cluster appears at most once among the backends.
type Backend struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Service   string `json:"service"`
	// Priority orders failover: lower first. Clients use the backends of
	// the lowest priority they can see while any is healthy.
	Priority int64 `json:"priority"`
	// Weight shares traffic between backends of the same priority; nil
	// means 1.
	Weight *int64 `json:"weight,omitempty"`
	// ExcludeFor selects the client clusters that never send traffic to
	// this backend. Unlike other placements, an empty ExcludeFor selects
	// no cluster.
	ExcludeFor translate.Placement `json:"excludeFor,omitempty"`
	// ServiceAccount is the backend pods' service account. Set on every
	// backend, it lets clients verify whom they reach: the client
	// ServiceEntries list each backend's SPIFFE identity as
	// subjectAltNames, and a sidecar then refuses a peer with another
	// identity (without it, any workload of the mesh's trust bundle passes).
	ServiceAccount string `json:"serviceAccount,omitempty"`
}

// Failover chooses how clients order the backends.
type Failover struct {
	// Mode is FailoverModePriority (default) or FailoverModeLocality.
	Mode string `json:"mode,omitempty"`
	// OutlierDetection ejects failing backends; unset fields take
	// DefaultOutlierDetection.
	OutlierDetection *OutlierDetection `json:"outlierDetection,omitempty"`
}

// OutlierDetection is the subset of Istio's
// OutlierDetection that failover needs.
type OutlierDetection struct {
	Consecutive5xxErrors *int64 `json:"consecutive5xxErrors,omitempty"`
	Interval             string `json:"interval,omitempty"`
	BaseEjectionTime     string `json:"baseEjectionTime,omitempty"`
	MaxEjectionPercent   *int64 `json:"maxEjectionPercent,omitempty"`
}

// Clients selects the client clusters (omitted: every
// registered cluster) and the namespaces that may see the hostname (empty:
// all).
type Clients struct {
	translate.Placement
	Namespaces []string `json:"namespaces,omitempty"`
}

// Failover modes.
const (
	FailoverModePriority = "priority"
	FailoverModeLocality = "locality"
)

// FailoverModes are the failover.mode values, the default first.
var FailoverModes = []string{FailoverModePriority, FailoverModeLocality}

// Labels set on ServiceEntry endpoints.
const (
	// EndpointClusterLabel carries SubsetName(<backend cluster>) on every
	// endpoint; the DestinationRule's subsets select on it. Istio
	// overwrites topology.istio.io/cluster on ServiceEntry endpoints with
	// the cluster that holds the ServiceEntry, so it cannot be used.
	EndpointClusterLabel = "mesh-intent.io/cluster"
	// FailoverRankLabelPrefix + t ("true") marks, in one client cluster's
	// ServiceEntry, the endpoints whose priority rank is at most t.
	FailoverRankLabelPrefix = "mesh-intent.io/rank-le-"
	// <subset>subsetRankLabelSuffix + t plays the same part inside the
	// subset of one backend cluster (subsetOrders).
	subsetRankLabelSuffix = ".subset.mesh-intent.io/rank-le-"
	// tlsModeLabel tells Istio the endpoint accepts Istio mTLS; the
	// east-west gateway only forwards to endpoints that do.
	tlsModeLabel  = "security.istio.io/tlsMode"
	tlsModeMutual = "istio"
)

// Naming and addressing.
const (
	// ObjectPrefix starts the name of every owned object.
	ObjectPrefix = "vd-"
	// virtualDestinationBackendSuffix ends the name of backend-side objects.
	virtualDestinationBackendSuffix = "-backend"
	// ClusterServiceDomain is the DNS suffix of Kubernetes Services.
	ClusterServiceDomain = "svc.cluster.local"
)

// DefaultOutlierDetection fills every field the intent
// leaves unset. MaxEjectionPercent is 100 because each endpoint stands for a
// whole backend: Envoy's default of 10% would let only one backend be
// ejected, and failover would stop at the second tier.
var DefaultOutlierDetection = OutlierDetection{
	Consecutive5xxErrors: ptr[int64](5),
	Interval:             "10s",
	BaseEjectionTime:     "30s",
	MaxEjectionPercent:   ptr[int64](100),
}

// Translate returns the objects of one virtual destination
// in every client and backend cluster. Errors are collected: a user sees
// every problem of the intent at once. A placement that depends on labels
// not known yet returns ErrUnknownPlacement.
func Translate(in Intent, reg *translate.Registry) ([]translate.Object, error) {
	p, err := planVirtualDestination(in, reg)
	if err != nil {
		return nil, err
	}
	var out []translate.Object
	for _, v := range p.views {
		if v.client {
			p.orderSubsets(v)
		}
		out = appendServiceEntries(out, p, v)
		out = appendDestinationRules(out, p, v)
	}
	translate.Sort(out)
	if err := translate.CheckIstioVersionShapes(out, reg); err != nil {
		return nil, err
	}
	return out, nil
}

// plan is the intent resolved against the registry: defaults applied and
// one view per cluster that receives objects.
type plan struct {
	in        Intent
	namespace string
	mode      string
	outlier   outlier
	vip       string
	exportTo  []string
	views     []*view // sorted by cluster name
	// Shared by the DestinationRules (applyMutualTLS).
	tls              *networkingapi.ClientTLSSettings
	outlierDetection *networkingapi.OutlierDetection
	// Names and labels every client cluster repeats, made once
	// (plan.clusterHost, plan.ranked).
	clusterHosts map[string]string
	rankStrings  map[rankKey][]string
	// Parts that depend only on a view's order of backends (view.order),
	// shared by every client cluster that sees the same order: most
	// clusters do (see plan.shared).
	shared map[string]*orderParts
}

// orderParts are what client clusters with one order of backends share.
type orderParts struct {
	subsets []subsetOrder
	// endpoints by backend, local or remote.
	endpoints map[endpointKey]*networkingapi.WorkloadEntry
	// policies: the client DestinationRule's, and each cluster host's by
	// cluster.
	clientPolicy *networkingapi.TrafficPolicy
	hostPolicies map[string]*networkingapi.TrafficPolicy
}

type endpointKey struct {
	backend *Backend
	local   bool
}

// parts returns what v shares with the client clusters that see the same
// order of backends.
func (p *plan) parts(v *view) *orderParts {
	op := p.shared[v.order]
	if op == nil {
		if p.shared == nil {
			p.shared = map[string]*orderParts{}
		}
		op = &orderParts{endpoints: map[endpointKey]*networkingapi.WorkloadEntry{}, hostPolicies: map[string]*networkingapi.TrafficPolicy{}}
		p.shared[v.order] = op
	}
	return op
}

// orderSubsets fills a client view's order and subsets (shared with the
// views of the same order). Only Translate needs them; PlanReach does not.
func (p *plan) orderSubsets(v *view) {
	v.order = orderOf(v)
	op := p.parts(v)
	if op.subsets == nil {
		op.subsets = subsetOrders(p, v)
	}
	v.subsets = op.subsets
}

// orderOf is a view's order of backends: each target's backend and rank,
// and the ranks' label value. Two client clusters with the same order get
// the same endpoints (but for which one is local), subsets and traffic
// policies.
func orderOf(v *view) string {
	var b strings.Builder
	b.WriteString(v.rankUnknown)
	for _, t := range v.targets {
		b.WriteByte('|')
		b.WriteString(t.backend.Cluster)
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(t.rank))
	}
	return b.String()
}

// clusterHost is ClusterHost of the hostname and cluster, made once.
func (p *plan) clusterHost(cluster string) string {
	h, ok := p.clusterHosts[cluster]
	if !ok {
		if p.clusterHosts == nil {
			p.clusterHosts = map[string]string{}
		}
		h = ClusterHost(p.in.Hostname, cluster)
		p.clusterHosts[cluster] = h
	}
	return h
}

// rankLabels returns the rank labels <prefix><t> for t in 0..n-1, made
// once per prefix.
func (p *plan) rankLabels(prefix string, n int) []string {
	return p.ranked(rankKey{prefix: prefix}, n)
}

// failoverPriority is the failoverPriority list of an order of tiers ranks
// whose labels start with prefix: <prefix><t>=<mark> for t from tiers-2
// down to 0 (see applyPriorityFailover). mark is the labels' value
// (rankMark).
func (p *plan) failoverPriority(prefix, mark string, tiers int) []string {
	entries := p.ranked(rankKey{prefix: prefix, mark: mark, entries: true}, tiers-1)
	out := make([]string, 0, len(entries))
	for t := len(entries) - 1; t >= 0; t-- {
		out = append(out, entries[t])
	}
	return out
}

// rankKey names a list of rank strings: the labels of a prefix, or its
// failoverPriority entries with a mark.
type rankKey struct {
	prefix, mark string
	entries      bool
}

// ranked returns the first n strings of k's list, extending it as needed.
func (p *plan) ranked(k rankKey, n int) []string {
	if n <= 0 {
		return nil
	}
	list := p.rankStrings[k]
	if len(list) < n {
		if p.rankStrings == nil {
			p.rankStrings = map[rankKey][]string{}
		}
		for t := len(list); t < n; t++ {
			s := k.prefix + strconv.Itoa(t)
			if k.entries {
				s += "=" + k.mark
			}
			list = append(list, s)
		}
		p.rankStrings[k] = list
	}
	return list[:n:n]
}

// outlier is the effective outlier detection.
type outlier struct {
	consecutive5xx     uint32
	interval, ejection time.Duration
	maxEjectionPercent int32
}

// view is what one cluster receives.
type view struct {
	cluster *translate.Cluster
	// client: the cluster gets the client-side objects, whose endpoints are
	// targets (ordered by rank, then cluster name).
	client  bool
	targets []target
	tiers   int // distinct priorities among targets
	// subsets: the failover order inside each backend cluster's subset
	// (subsetOrders), in target order.
	subsets []subsetOrder
	// rankUnknown, when set, is an Unknown placeholder that stands for the
	// rank labels' value "true": the ranks depend on a region or zone not
	// known before apply (locality mode), so these objects are planned as
	// known after apply.
	rankUnknown string
	// order identifies the order of targets (orderOf).
	order string
	// serves: the local backend that clients in other clusters reach; the
	// cluster then gets the backend-side objects.
	serves *Backend
}

// target is one backend as seen from one client cluster.
type target struct {
	backend *Backend
	cluster *translate.Cluster
	rank    int // position of its priority among the client's distinct priorities
	local   bool
}

func planVirtualDestination(in Intent, reg *translate.Registry) (*plan, error) {
	errs := Validate(in)
	unknown := false
	resolve := func(pl translate.Placement, at translate.Path) []string {
		names, err := reg.Select(pl, at)
		if errors.Is(err, translate.ErrUnknownPlacement) {
			unknown = true
			return nil
		}
		errs.Add(err)
		return names
	}

	for i, b := range in.Backends {
		if b.Cluster != "" && reg.Cluster(b.Cluster) == nil {
			errs.Add(translate.Errorf(translate.Root("backends").Index(i).Attr("cluster"), "Unknown cluster",
				"%s Add it to the provider block or fix the name.", reg.UnknownCluster(b.Cluster)))
		}
	}
	clients := resolve(in.Clients.Placement, translate.Root("clients"))
	excluded := make([]map[string]bool, len(in.Backends))
	for i, b := range in.Backends {
		excluded[i] = map[string]bool{}
		if b.ExcludeFor.IsZero() {
			continue
		}
		for _, name := range resolve(b.ExcludeFor, translate.Root("backends").Index(i).Attr("exclude_for")) {
			excluded[i][name] = true
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if unknown {
		return nil, translate.ErrUnknownPlacement
	}

	p := &plan{
		in:        in,
		namespace: in.Namespace,
		mode:      FailoverModePriority,
		outlier:   effectiveOutlier(in.Failover),
		vip:       in.VIP,
		exportTo:  []string{"*"},
	}
	if p.namespace == "" {
		p.namespace = translate.DefaultIstioNS
	}
	if p.vip == "" {
		p.vip = VIP(in.Hostname)
	}
	if in.Failover != nil && in.Failover.Mode != "" {
		p.mode = in.Failover.Mode
	}
	if len(in.Clients.Namespaces) > 0 && !(len(in.Clients.Namespaces) == 1 && in.Clients.Namespaces[0] == "*") {
		p.exportTo = append([]string(nil), in.Clients.Namespaces...)
		sort.Strings(p.exportTo)
	}

	views := map[string]*view{}
	view := func(name string) *view {
		if views[name] == nil {
			views[name] = &view{cluster: reg.Cluster(name)}
		}
		return views[name]
	}
	gatewayChecked := map[int]bool{}
	for _, c := range clients {
		v := view(c)
		v.client = true
		for i := range in.Backends {
			b := &in.Backends[i]
			if excluded[i][c] {
				continue
			}
			t := target{backend: b, cluster: reg.Cluster(b.Cluster), local: b.Cluster == c}
			v.targets = append(v.targets, t)
			if t.local {
				continue
			}
			// A remote backend is reached through its east-west gateway,
			// which then needs the backend-side objects.
			view(b.Cluster).serves = b
			if !gatewayChecked[i] {
				gatewayChecked[i] = true
				errs.Add(checkEastWestGateway(t.cluster, c, in.Hostname, translate.Root("backends").Index(i).Attr("cluster")))
			}
		}
		if len(v.targets) == 0 {
			errs.Add(translate.Errorf(translate.Root("clients"), "Client without backend",
				"Every backend is excluded for client cluster %q, so it could not reach %s. Remove the cluster from clients or narrow the backends' exclude_for.",
				c, in.Hostname))
		}
		rankTargets(v, p.mode)
	}
	for i, b := range in.Backends {
		at := translate.Root("backends").Index(i)
		if p.mode == FailoverModeLocality && reg.Cluster(b.Cluster).Region == "" {
			errs.Add(translate.Errorf(at.Attr("cluster"), "Missing region",
				"Locality failover orders backends by region, but cluster %q has no region. Set region (and zone) on the cluster in the provider block, or use mode \"priority\".",
				b.Cluster))
		}
		if v := views[b.Cluster]; v != nil && v.client && v.serves != nil && b.Namespace == p.namespace {
			errs.Add(translate.Errorf(at.Attr("namespace"), "Backend in the config namespace",
				"Cluster %q is both a client and a backend reached by other clusters, so it needs two ServiceEntries for %s: the client one in %q and the backend one in the backend's namespace. Istio keeps one service per hostname and namespace, so the backend service must not live in %q.",
				b.Cluster, in.Hostname, p.namespace, p.namespace))
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	for _, name := range slices.Sorted(maps.Keys(views)) {
		p.views = append(p.views, views[name])
	}
	return p, nil
}

// checkEastWestGateway reports a remote backend cluster that clients cannot
// reach: no east-west gateway, or an address that is neither an IP nor a
// hostname. A placeholder address is left for apply.
func checkEastWestGateway(c *translate.Cluster, client, hostname string, at translate.Path) error {
	gw := c.EastWestGateway
	if gw == nil {
		return translate.Errorf(at, "No east-west gateway",
			"Client cluster %q reaches backend cluster %q through its east-west gateway, but %q has none. Set east_west_gateway on the cluster in the provider block, or exclude the backend for that client with exclude_for.",
			client, c.Name, c.Name)
	}
	if !translate.IsUnknown(gw.Address) && !translate.ValidIPOrHostname(gw.Address) {
		return translate.Errorf(at, "Invalid east-west gateway address",
			"The east-west gateway address %q of cluster %q is neither an IP address nor a DNS name.", gw.Address, c.Name)
	}
	// The gateway's AUTO_PASSTHROUGH server has a filter chain only for the
	// services its Gateway's hosts cover; any other SNI is reset. The
	// per-cluster hosts end like the hostname, so they are covered alike.
	if !gw.HostsUnknown && !translate.IsUnknown(hostname) && !translate.HostCovered(hostname, gw.PassedHosts()) {
		return translate.Errorf(at, "Hostname not passed by the east-west gateway",
			"Client cluster %q reaches backend cluster %q through its east-west gateway, which passes only %s, so requests for %s would be reset there. Add the hostname (or a wildcard covering it) to east_west_gateway.hosts of %q in the provider block and to east_west_hosts of its mesh_cluster, or use a hostname they cover.",
			client, c.Name, strings.Join(gw.PassedHosts(), ", "), hostname, c.Name)
	}
	return nil
}

// rankTargets orders a client's targets by rank and numbers the distinct
// ranks 0, 1, ... . In priority mode a target's rank is its backend's
// priority; in locality mode, its distance from the client (localityTier).
// Within a rank, targets are ordered by priority, then cluster.
func rankTargets(v *view, mode string) {
	key := func(t target) int64 { return t.backend.Priority }
	if mode == FailoverModeLocality {
		for _, c := range append([]*translate.Cluster{v.cluster}, targetClusters(v)...) {
			if translate.IsUnknown(c.Region) || translate.IsUnknown(c.Zone) {
				v.rankUnknown = translate.Unknown(c.Name + ".locality")
			}
		}
		to := localityFailoverRegion(v)
		key = func(t target) int64 { return int64(localityTier(v.cluster, t.cluster, to)) }
	}
	sort.SliceStable(v.targets, func(i, j int) bool {
		a, b := v.targets[i], v.targets[j]
		if ka, kb := key(a), key(b); ka != kb {
			return ka < kb
		}
		if a.backend.Priority != b.backend.Priority {
			return a.backend.Priority < b.backend.Priority
		}
		return a.backend.Cluster < b.backend.Cluster
	})
	v.tiers = 0
	for i := range v.targets {
		if i > 0 && key(v.targets[i]) != key(v.targets[i-1]) {
			v.tiers++
		}
		v.targets[i].rank = v.tiers
	}
	if len(v.targets) > 0 {
		v.tiers++
	}
}

func targetClusters(v *view) []*translate.Cluster {
	out := make([]*translate.Cluster, 0, len(v.targets))
	for _, t := range v.targets {
		out = append(out, t.cluster)
	}
	return out
}

// rankMark is the value of the rank labels: "true", or a placeholder when
// the ranks are not known yet.
func (v *view) rankMark() string {
	if v.rankUnknown != "" {
		return v.rankUnknown
	}
	return "true"
}

// localityTier is how close a backend cluster is to a client cluster in
// locality mode, by the registry's region and zone: 0 same zone, 1 same
// region, 2 the region traffic leaves to (localityFailoverRegion), 3 any
// other. That is the order of Istio's locality load balancing with one
// failover entry (from the client's region to that region), written as
// failoverPriority ranks like priority mode: a client cluster is one
// locality, and ServiceEntry endpoints that span several localities are
// what istiod mishandles for DNS clusters (it applies failoverPriority to
// the first locality group only, pilot/pkg/networking/core/cluster.go, and
// istiod 1.30 crash-loops on it, istio/istio#61857), so no endpoint carries
// a locality.
func localityTier(client, backend *translate.Cluster, to string) int {
	switch {
	case backend.Region == client.Region && backend.Zone == client.Zone:
		return 0
	case backend.Region == client.Region:
		return 1
	case to != "" && backend.Region == to:
		return 2
	default:
		return 3
	}
}

// localityFailoverRegion is where traffic leaving a client's region goes
// first: the region of the lowest-priority visible backend outside it
// (ties: cluster name). Empty when there is none.
func localityFailoverRegion(v *view) string {
	var best *target
	for i := range v.targets {
		t := &v.targets[i]
		if t.cluster.Region == v.cluster.Region {
			continue
		}
		if best == nil || t.backend.Priority < best.backend.Priority ||
			t.backend.Priority == best.backend.Priority && t.backend.Cluster < best.backend.Cluster {
			best = t
		}
	}
	if best == nil {
		return ""
	}
	return best.cluster.Region
}

// effectiveOutlier fills unset fields from the defaults. The input is
// already validated.
func effectiveOutlier(f *Failover) outlier {
	d := DefaultOutlierDetection
	if f != nil && f.OutlierDetection != nil {
		o := f.OutlierDetection
		if o.Consecutive5xxErrors != nil {
			d.Consecutive5xxErrors = o.Consecutive5xxErrors
		}
		if o.Interval != "" {
			d.Interval = o.Interval
		}
		if o.BaseEjectionTime != "" {
			d.BaseEjectionTime = o.BaseEjectionTime
		}
		if o.MaxEjectionPercent != nil {
			d.MaxEjectionPercent = o.MaxEjectionPercent
		}
	}
	interval, _ := time.ParseDuration(d.Interval)
	ejection, _ := time.ParseDuration(d.BaseEjectionTime)
	return outlier{
		consecutive5xx:     uint32(*d.Consecutive5xxErrors),
		interval:           interval,
		ejection:           ejection,
		maxEjectionPercent: int32(*d.MaxEjectionPercent),
	}
}

// ObjectName is the name of the client-side ServiceEntry
// and DestinationRule of the intent named name, in its namespace.
func ObjectName(name string) string { return ObjectPrefix + name }

// ClusterHost is the host that reaches one backend
// cluster of a virtual destination first, and the others after it:
// <SubsetName(cluster)>.cluster.<hostname>, e.g. east.cluster.user.global.
// Traffic policies shift and mirror to it. It is a host of its own, not a
// subset of the hostname, because Istio applies failoverPriority only to the
// default cluster of a DNS ServiceEntry, never to its subsets
// (pilot/pkg/networking/core/cluster_builder.go, buildSubsetCluster): a
// subset could only pin one cluster, with nowhere to go when it fails.
// It ends like the hostname, so the east-west Gateway's hosts (*.global)
// cover it too.
func ClusterHost(hostname, cluster string) string {
	return SubsetName(cluster) + ".cluster." + hostname
}

// ClusterObjectName names the client-side objects of the
// per-cluster hosts: the ServiceEntry vd-<name>.clusters and the
// DestinationRule vd-<name>.<subset> of each. The dot keeps them apart
// from another virtual destination's objects (names are DNS labels).
func ClusterObjectName(name, part string) string {
	return ObjectPrefix + name + "." + part
}

// BackendObjectName is the name of the backend-side
// ServiceEntry and DestinationRule, in the backend's namespace.
func BackendObjectName(name string) string {
	return ObjectPrefix + name + virtualDestinationBackendSuffix
}

// portName names a ServiceEntry port: <protocol>-<number>, e.g. http-8080.
func portName(p Port) string {
	var buf [48]byte
	b := buf[:0]
	for i := 0; i < len(p.Protocol); i++ {
		c := p.Protocol[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	b = append(b, '-')
	b = strconv.AppendInt(b, p.Number, 10)
	return string(b)
}

// serviceFQDN is the cluster-local DNS name of a Kubernetes Service.
func serviceFQDN(service, namespace string) string {
	return service + "." + namespace + "." + ClusterServiceDomain
}

var nonDNSLabelChars = regexp.MustCompile(`[^a-z0-9-]+`)

// SubsetName is the DestinationRule subset, and the EndpointClusterLabel
// value, of the backend in a cluster. A cluster name that is already a
// DNS-1123 label is used as is; any other is lowercased, stripped to
// [a-z0-9-] and suffixed with a hash of the original name, so distinct
// clusters keep distinct subsets.
func SubsetName(cluster string) string {
	if translate.ValidDNSLabel(cluster) {
		return cluster
	}
	h := fnv.New32a()
	h.Write([]byte(cluster))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	base := strings.Trim(nonDNSLabelChars.ReplaceAllString(strings.ToLower(cluster), "-"), "-")
	if max := 63 - len(suffix); len(base) > max {
		base = strings.TrimRight(base[:max], "-")
	}
	if base == "" {
		base = "cluster"
	}
	return base + suffix
}

// VIP is the stable virtual IP of a hostname: an address
// of the reserved 240.0.0.0/4 block, never routed, taken from the SHA-256 of
// the hostname, with a first octet in 241..254 (Istio allocates ServiceEntry
// addresses itself from 240.240.0.0/16, and 255.255.255.255 is broadcast)
// and a last one in 1..254. The same hostname always gets the same address,
// in every plan and every state. Two hostnames collide with a chance of
// one in 233 million per pair (one in two only past about 18,000
// destinations); a sidecar tells TCP services apart by VIP alone, so the
// provider refuses, at plan, two virtual destinations with one VIP (and
// `vip` sets one by hand).
func VIP(hostname string) string {
	sum := sha256.Sum256([]byte(hostname))
	const perFirst = 256 * 256 * 254
	n := binary.BigEndian.Uint64(sum[:8]) % (14 * perFirst)
	first, rest := n/perFirst, n%perFirst
	return fmt.Sprintf("%d.%d.%d.%d", 241+first, rest/(256*254), rest/254%256, rest%254+1)
}

func ptr[T any](v T) *T { return &v }

// Reach is what other intents need of a virtual destination's plan.
type Reach struct {
	// ClientNamespaces are the namespaces the hostname is exported to; nil
	// means every namespace.
	ClientNamespaces []string
	// ClientBackends maps each client cluster to the backend clusters it
	// reaches, exclusions applied, sorted.
	ClientBackends map[string][]string
}

// PlanReach plans in as Translate would and returns its reach; an error
// when it cannot be planned (invalid, or placements known only after
// apply).
func PlanReach(in Intent, reg *translate.Registry) (Reach, error) {
	p, err := planVirtualDestination(in, reg)
	if err != nil {
		return Reach{}, err
	}
	var d Reach
	if !(len(p.exportTo) == 1 && p.exportTo[0] == "*") {
		d.ClientNamespaces = append([]string(nil), p.exportTo...)
	}
	d.ClientBackends = map[string][]string{}
	for _, v := range p.views {
		if !v.client {
			continue
		}
		reached := []string{}
		for _, t := range v.targets {
			reached = append(reached, t.backend.Cluster)
		}
		sort.Strings(reached)
		d.ClientBackends[v.cluster.Name] = reached
	}
	return d, nil
}
