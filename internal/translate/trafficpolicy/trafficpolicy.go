package trafficpolicy

import (
	"errors"
	"maps"
	"slices"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"

	"fmt"
	"sort"
	"strings"
)

// Intent is mesh_traffic_policy: how requests from some sources
// to one destination behave. Istio applies routing at the client, so it
// translates into a VirtualService (routing, resilience, fault injection,
// headers, CORS) and DestinationRule settings (connection pool, outlier
// detection, load balancing, TLS) in the source clusters only. The
// destination is passed apart, as a Destination the provider
// has resolved.
//
// Several policies may target one destination; how they combine is
// Compose's business (see docs/design/traffic-policy.md).
type Intent struct {
	// Name identifies the policy: it names its route in the VirtualService
	// and every conflict error.
	Name    string  `json:"name"`
	Sources Sources `json:"sources"`
	// Match narrows the policy to some requests; a request must match one
	// entry. Empty means every request.
	Match []Match `json:"match,omitempty"`
	// Timeout is the whole-request timeout, a Go duration ("2s").
	Timeout      string   `json:"timeout,omitempty"`
	Retries      *Retries `json:"retries,omitempty"`
	Fault        *Fault   `json:"fault,omitempty"`
	TrafficShift []Shift  `json:"trafficShift,omitempty"`
	Mirror       *Mirror  `json:"mirror,omitempty"`
	Headers      *Headers `json:"headers,omitempty"`
	CORS         *CORS    `json:"cors,omitempty"`
	// The settings below go to the destination's DestinationRule and hold
	// for every caller in the source clusters.
	ConnectionPool   *ConnectionPool   `json:"connectionPool,omitempty"`
	OutlierDetection *OutlierDetection `json:"outlierDetection,omitempty"`
	// LoadBalancer is a simple Istio algorithm: ROUND_ROBIN, LEAST_REQUEST,
	// RANDOM or (services only) PASSTHROUGH.
	LoadBalancer string `json:"loadBalancer,omitempty"`
	// TLSMode is the client TLS mode: ISTIO_MUTUAL, or for services also
	// DISABLE or SIMPLE.
	TLSMode string `json:"tlsMode,omitempty"`
}

// Sources is the sources attribute: which callers the policy
// applies to. The placement (clusters, cluster_selector) picks the source
// clusters, the only clusters that receive objects. Namespaces and
// WorkloadLabels become match conditions (sourceNamespace, sourceLabels),
// so other callers of the destination in those clusters are unaffected.
type Sources struct {
	translate.Placement
	Namespaces     []string          `json:"namespaces,omitempty"`
	WorkloadLabels map[string]string `json:"workloadLabels,omitempty"`
}

// Match is one entry of match. At most one of the URI fields
// is set; header values match exactly.
type Match struct {
	URIPrefix string            `json:"uriPrefix,omitempty"`
	URIExact  string            `json:"uriExact,omitempty"`
	URIRegex  string            `json:"uriRegex,omitempty"`
	Method    string            `json:"method,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// Retries is the retries attribute. Attempts 0 turns Istio's
// default retries off.
type Retries struct {
	Attempts      int      `json:"attempts"`
	PerTryTimeout string   `json:"perTryTimeout,omitempty"`
	RetryOn       []string `json:"retryOn,omitempty"`
}

// Fault is the fault attribute: client-side fault injection.
type Fault struct {
	Delay *Delay `json:"delay,omitempty"`
	Abort *Abort `json:"abort,omitempty"`
}

// Delay delays Percent percent of the requests by FixedDelay.
type Delay struct {
	Percent    float64 `json:"percent"`
	FixedDelay string  `json:"fixedDelay"`
}

// Abort answers Percent percent of the requests with
// HTTPStatus without forwarding them.
type Abort struct {
	Percent    float64 `json:"percent"`
	HTTPStatus int     `json:"httpStatus"`
}

// Shift is one entry of traffic_shift: a share of the requests
// (Weight percent; the weights sum to 100) and where it goes. Exactly one of
// Cluster, Local and Subset is set:
//   - Cluster: the backends in that cluster (a backend cluster of the
//     virtual destination, or for a service the endpoints Istio labels
//     topology.istio.io/cluster=<cluster>);
//   - Local: the backends in the source cluster itself, so one entry means
//     "stay in the caller's cluster" in every source cluster;
//   - Subset (services only): the endpoints carrying Labels, e.g. a version.
type Shift struct {
	Cluster string            `json:"cluster,omitempty"`
	Local   bool              `json:"local,omitempty"`
	Subset  string            `json:"subset,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Weight  int               `json:"weight"`
}

// Mirror is the mirror attribute: a copy of Percent percent of
// the requests (all when nil) goes to the target, fire and forget. Exactly
// one of Cluster and Subset is set, as in traffic_shift.
type Mirror struct {
	Cluster string            `json:"cluster,omitempty"`
	Subset  string            `json:"subset,omitempty"`
	Labels  map[string]string `json:"labels,omitempty"`
	Percent *float64          `json:"percent,omitempty"`
}

// Headers is the headers attribute.
type Headers struct {
	Request  *HeaderOps `json:"request,omitempty"`
	Response *HeaderOps `json:"response,omitempty"`
}

// HeaderOps sets (overwrites), adds (appends) and removes
// headers.
type HeaderOps struct {
	Set    map[string]string `json:"set,omitempty"`
	Add    map[string]string `json:"add,omitempty"`
	Remove []string          `json:"remove,omitempty"`
}

// CORS is the cors attribute. An origin "*" allows any origin;
// others match exactly.
type CORS struct {
	AllowOrigins     []string `json:"allowOrigins"`
	AllowMethods     []string `json:"allowMethods,omitempty"`
	AllowHeaders     []string `json:"allowHeaders,omitempty"`
	ExposeHeaders    []string `json:"exposeHeaders,omitempty"`
	MaxAge           string   `json:"maxAge,omitempty"`
	AllowCredentials *bool    `json:"allowCredentials,omitempty"`
}

// ConnectionPool is the connection_pool attribute. Zero values
// keep Istio's defaults.
type ConnectionPool struct {
	TCP  *TCPPool  `json:"tcp,omitempty"`
	HTTP *HTTPPool `json:"http,omitempty"`
}

// TCPPool holds the TCP settings of connection_pool.
type TCPPool struct {
	MaxConnections        int        `json:"maxConnections,omitempty"`
	ConnectTimeout        string     `json:"connectTimeout,omitempty"`
	IdleTimeout           string     `json:"idleTimeout,omitempty"`
	MaxConnectionDuration string     `json:"maxConnectionDuration,omitempty"`
	Keepalive             *Keepalive `json:"keepalive,omitempty"`
}

// Keepalive turns SO_KEEPALIVE on for upstream connections:
// idle Time before the first probe, Interval between probes, and Probes
// unanswered before the connection is dead. Zero values keep the OS's.
type Keepalive struct {
	Time     string `json:"time,omitempty"`
	Interval string `json:"interval,omitempty"`
	Probes   int    `json:"probes,omitempty"`
}

// HTTPPool holds the HTTP settings of connection_pool.
type HTTPPool struct {
	HTTP1MaxPendingRequests  int    `json:"http1MaxPendingRequests,omitempty"`
	HTTP2MaxRequests         int    `json:"http2MaxRequests,omitempty"`
	MaxRequestsPerConnection int    `json:"maxRequestsPerConnection,omitempty"`
	MaxRetries               int    `json:"maxRetries,omitempty"`
	IdleTimeout              string `json:"idleTimeout,omitempty"`
}

// OutlierDetection is the outlier_detection attribute.
type OutlierDetection struct {
	Consecutive5xxErrors     *int   `json:"consecutive5xxErrors,omitempty"`
	ConsecutiveGatewayErrors *int   `json:"consecutiveGatewayErrors,omitempty"`
	Interval                 string `json:"interval,omitempty"`
	BaseEjectionTime         string `json:"baseEjectionTime,omitempty"`
	MaxEjectionPercent       int    `json:"maxEjectionPercent,omitempty"`
	MinHealthPercent         int    `json:"minHealthPercent,omitempty"`
}

// Destination is the destination attribute, as the provider
// resolves it. Exactly one of VirtualDestination and Service is set.
type Destination struct {
	// VirtualDestination is the hostname of a mesh_virtual_destination.
	VirtualDestination string `json:"virtualDestination,omitempty"`
	// VirtualDestinationName and VirtualDestinationNamespace are the name
	// and namespace (translate.DefaultIstioNS when empty) of that
	// mesh_virtual_destination. The VirtualService goes to that namespace,
	// and destination settings (connection_pool, load_balancer) are written
	// into its DestinationRule virtualdestination.ObjectName(name) there, as
	// fields of their own: Istio would ignore the traffic policy of a
	// second DestinationRule for the host.
	VirtualDestinationName      string `json:"virtualDestinationName,omitempty"`
	VirtualDestinationNamespace string `json:"virtualDestinationNamespace,omitempty"`
	// BackendClusters are the clusters that back the virtual destination;
	// nil when not known at plan, which skips the checks that need them.
	BackendClusters []string `json:"backendClusters,omitempty"`
	// ClientBackends, when known, maps each client cluster of the virtual
	// destination to the backend clusters it can reach (its exclusions
	// applied); it refines BackendClusters. Source clusters that are no
	// client get nothing: the hostname does not exist there.
	ClientBackends map[string][]string `json:"clientBackends,omitempty"`
	// ClientNamespaces are the namespaces the virtual destination is
	// exported to (its clients.namespaces); empty means every namespace.
	// The VirtualService is exported to the same ones: Istio resolves, and
	// `istioctl analyze` checks, its destination hosts in the namespaces it
	// is exported to, where the virtual destination's hosts are visible.
	ClientNamespaces []string `json:"clientNamespaces,omitempty"`

	// Service and Namespace name a Kubernetes service; its host is
	// <service>.<namespace>.svc.cluster.local.
	Service   string `json:"service,omitempty"`
	Namespace string `json:"namespace,omitempty"`
}

// DestinationOf resolves a traffic policy's destination from
// the mesh_virtual_destination it names, with the virtual destination's own
// planning: its name and namespace, its backend clusters and, when its
// placements resolve, which backends each client cluster reaches
// (exclusions applied). When the virtual destination cannot be planned
// (invalid, or placements known only after apply) ClientBackends stays nil
// and the checks that need it are skipped.
func DestinationOf(vd virtualdestination.Intent, reg *translate.Registry) Destination {
	d := Destination{
		VirtualDestination:          vd.Hostname,
		VirtualDestinationName:      vd.Name,
		VirtualDestinationNamespace: vd.Namespace,
		BackendClusters:             []string{},
	}
	for _, b := range vd.Backends {
		d.BackendClusters = append(d.BackendClusters, b.Cluster)
	}
	sort.Strings(d.BackendClusters)
	reach, err := virtualdestination.PlanReach(vd, reg)
	if err != nil {
		return d
	}
	d.ClientNamespaces = reach.ClientNamespaces
	d.ClientBackends = reach.ClientBackends
	return d
}

// Named is one policy with its destination, as
// Compose takes them.
type Named struct {
	Policy      Intent      `json:"policy"`
	Destination Destination `json:"destination"`
}

// NamePrefix starts the name of the VirtualService (and, for a
// service, the DestinationRule) of a destination's traffic policies:
// tp-<host>. Objects are named after the destination, not the policy,
// because Istio honours one VirtualService per host for sidecars: two
// policies on one host must meet in one object, never in two.
const NamePrefix = "tp-"

const (
	// clusterLabel is the label Istio puts on every endpoint with the ID
	// of the cluster it runs in; per-cluster subsets of a service select it.
	clusterLabel = "topology.istio.io/cluster"
	// defaultRoute names the catch-all route that keeps requests no policy
	// selects as they would be without a VirtualService.
	defaultRoute = "default"
)

// target is a destination resolved: its host and where its objects live.
type target struct {
	host    string
	virtual bool
	// backends are the backend clusters of a virtual destination; nil when
	// not known.
	backends map[string]bool
	// clients maps a client cluster of a virtual destination to the
	// backend clusters it reaches; nil when not known.
	clients map[string]map[string]bool
	// The VirtualService of the destination's policies.
	vsNamespace, vsName string
	// The DestinationRule the policies' destination settings go to: the
	// virtual destination's own, or one of ours for a service.
	drNamespace, drName string
	// ownDR is set for services: the DestinationRule is ours, exported to
	// every namespace and holding the subsets the routes use.
	ownDR bool
	// exportTo is where the VirtualService is visible: a virtual
	// destination's client namespaces, else every namespace.
	exportTo []string
}

func resolveTarget(d Destination) target {
	if d.VirtualDestination != "" {
		ns := d.VirtualDestinationNamespace
		if ns == "" {
			ns = translate.DefaultIstioNS
		}
		t := target{
			host:        d.VirtualDestination,
			virtual:     true,
			vsNamespace: ns,
			vsName:      objectName(d.VirtualDestination),
			drNamespace: ns,
		}
		if d.VirtualDestinationName != "" {
			t.drName = virtualdestination.ObjectName(d.VirtualDestinationName)
		}
		if len(d.ClientNamespaces) > 0 {
			t.exportTo = append([]string(nil), d.ClientNamespaces...)
			sort.Strings(t.exportTo)
		}
		if d.BackendClusters != nil {
			t.backends = set(d.BackendClusters)
		}
		if d.ClientBackends != nil {
			t.clients = map[string]map[string]bool{}
			for c, bs := range d.ClientBackends {
				t.clients[c] = set(bs)
			}
		}
		return t
	}
	host := d.Service + "." + d.Namespace + "." + virtualdestination.ClusterServiceDomain
	return target{
		host:        host,
		vsNamespace: d.Namespace,
		vsName:      objectName(host),
		drNamespace: d.Namespace,
		drName:      objectName(host),
		ownDR:       true,
	}
}

// reachable returns the backend clusters a source cluster reaches, and
// whether that is known (services: never).
func (t target) reachable(source string) (map[string]bool, bool) {
	switch {
	case t.clients != nil:
		return t.clients[source], true
	case t.backends != nil:
		return t.backends, true
	}
	return nil, false
}

// objectName is tp-<host>, a DNS-1123 subdomain for any valid host.
// Unknown hosts keep their placeholder, so the object shows as unknown.
func objectName(host string) string {
	return NamePrefix + strings.ToLower(host)
}

func set(list []string) map[string]bool {
	set := make(map[string]bool, len(list))
	for _, v := range list {
		set[v] = true
	}
	return set
}

// part is what one policy contributes in one source cluster: the requests
// it selects, its route settings and its destination settings.
type part struct {
	policy  string
	cluster string
	target  target
	conds   []cond
	route   []setting
	dest    []setting
}

// Translate returns the objects of one traffic policy: in each
// source cluster, the destination's VirtualService with this policy's route
// (when it sets route settings) and its DestinationRule settings (when it
// sets any). It is Compose of this policy alone.
//
// Errors are Errors with attribute paths. A placement that depends on
// labels not known yet yields ErrUnknownPlacement.
func Translate(in Intent, dest Destination, reg *translate.Registry) ([]translate.Object, error) {
	parts, err := plan(in, dest, reg, true)
	if err != nil {
		return nil, err
	}
	return build(parts)
}

// Compose translates several policies together: policies on
// the same destination in the same cluster share one VirtualService and
// one DestinationRule. Where they select disjoint requests their routes sit
// side by side; where they overlap the overlap gets a route of its own with
// the settings of both; the same setting with different values on
// overlapping requests is an error naming both policies, as is an overlap
// the translator cannot decide (two different uri_regex). The result does
// not depend on the order of policies.
//
// Errors of one policy's own are returned with its name in the detail.
func Compose(policies []Named, reg *translate.Registry) ([]translate.Object, error) {
	return compose(policies, reg, true, true)
}

// compose is Compose; sameTargets requires every policy on a host to place
// its objects alike (checkTargets); validate checks each policy by this
// build's rules (Validate), which contributions found on objects are not
// (DecodeContribution says why).
func compose(policies []Named, reg *translate.Registry, sameTargets, validate bool) ([]translate.Object, error) {
	sorted := append([]Named(nil), policies...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Policy.Name < sorted[j].Policy.Name })
	var (
		parts   []part
		errs    translate.Errors
		unknown bool
	)
	for i, p := range sorted {
		if i > 0 && sorted[i-1].Policy.Name == p.Policy.Name {
			errs.Add(translate.Errorf(translate.Root("name"), "Duplicate traffic policy",
				"Two traffic policies are named %q; names identify policies in routes and errors, so they must be unique.", p.Policy.Name))
			continue
		}
		got, err := plan(p.Policy, p.Destination, reg, validate)
		switch {
		case errors.Is(err, translate.ErrUnknownPlacement):
			unknown = true
		case err != nil:
			errs = append(errs, inPolicy(p.Policy.Name, err)...)
		default:
			parts = append(parts, got...)
		}
	}
	if sameTargets {
		errs = append(errs, checkTargets(sorted)...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if unknown {
		return nil, translate.ErrUnknownPlacement
	}
	return build(parts)
}

// CheckConflicts reports whether a and b cannot both hold: it
// returns the conflicts Compose would find between them (each
// naming both policies), or nil. Problems of either policy alone are not
// its business and are ignored; ErrUnknownPlacement means the answer is
// known only at apply. The provider does not call it: conflicts surface
// where the policies meet, from Compose, at plan against the contributions
// the clusters hold (the provider's checkComposition) and at apply. Its
// tests show that Compose's conflicts are those of pairs.
func CheckConflicts(a, b Named, reg *translate.Registry) error {
	for _, p := range []Named{a, b} {
		if _, err := plan(p.Policy, p.Destination, reg, true); err != nil {
			if errors.Is(err, translate.ErrUnknownPlacement) {
				return err
			}
			return nil
		}
	}
	_, err := Compose([]Named{a, b}, reg)
	return err
}

// plan validates one policy, resolves its source clusters and computes
// its contribution in each of them.
func plan(in Intent, dest Destination, reg *translate.Registry, validate bool) ([]part, error) {
	var errs translate.Errors
	if validate {
		errs = Validate(in, dest)
	}
	clusters, err := reg.Select(in.Sources.Placement, translate.Root("sources"))
	if errors.Is(err, translate.ErrUnknownPlacement) {
		if len(errs) > 0 {
			return nil, errs
		}
		return nil, translate.ErrUnknownPlacement
	}
	errs.Add(err)
	target := resolveTarget(dest)
	clusters, err = clientClusters(target, clusters)
	errs.Add(err)
	errs = append(errs, validateClusters(in, target, clusters, reg)...)
	if len(errs) > 0 {
		return nil, errs
	}
	conds := conditions(in)
	parts := make([]part, 0, len(clusters))
	var subsetClusters []string
	if target.ownDR {
		subsetClusters = clusterSubsetClusters(in, clusters)
	}
	for _, c := range clusters {
		s := scope{in: in, target: target, cluster: c, routes: true, clusterSubsets: subsetClusters}
		parts = append(parts, part{
			policy: in.Name, cluster: c, target: target, conds: conds,
			route: routeSettings(s),
			dest:  destinationSettings(s),
		})
	}
	// A cluster that only receives traffic for its subset (a shift or
	// mirror target that is no source) needs the subsets too: see
	// subsets.
	sources := set(clusters)
	for _, c := range subsetClusters {
		if !sources[c] {
			s := scope{in: in, target: target, cluster: c, clusterSubsets: subsetClusters}
			parts = append(parts, part{policy: in.Name, cluster: c, target: target, conds: conds, dest: subsets(s)})
		}
	}
	return parts, nil
}

// clientClusters keeps the source clusters where the destination exists:
// for a virtual destination whose clients are known, its client clusters.
// Elsewhere the hostname is unknown to the sidecars and a policy would do
// nothing. A policy left with no cluster at all is an error.
func clientClusters(t target, sources []string) ([]string, error) {
	if t.clients == nil || len(sources) == 0 {
		return sources, nil
	}
	var kept []string
	for _, c := range sources {
		if _, ok := t.clients[c]; ok {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil, translate.Errorf(translate.Root("sources"), "No client cluster",
			"None of the source clusters (%s) is a client of virtual destination %s (clients: %s), so the policy would do nothing. Add them to the virtual destination's clients, or select client clusters.",
			strings.Join(sources, ", "), t.host, strings.Join(slices.Sorted(maps.Keys(t.clients)), ", "))
	}
	return kept, nil
}

// build composes the contributions into objects: one VirtualService per
// cluster and destination with route settings, one DestinationRule per
// cluster and destination with destination settings.
func build(parts []part) ([]translate.Object, error) {
	type key struct{ cluster, namespace, name string }
	routes := map[key][]part{}
	rules := map[key][]part{}
	var routeKeys, ruleKeys []key
	for _, p := range parts {
		if len(p.route) > 0 {
			k := key{p.cluster, p.target.vsNamespace, p.target.vsName}
			if routes[k] == nil {
				routeKeys = append(routeKeys, k)
			}
			routes[k] = append(routes[k], p)
		}
		if len(p.dest) > 0 {
			k := key{p.cluster, p.target.drNamespace, p.target.drName}
			if rules[k] == nil {
				ruleKeys = append(ruleKeys, k)
			}
			rules[k] = append(rules[k], p)
		}
	}
	var (
		out  []translate.Object
		errs clusterErrors
	)
	for _, k := range routeKeys {
		group := routes[k]
		http, es := composeRoutes(group)
		errs.add(k.cluster, es)
		if len(es) == 0 {
			out = append(out, translate.Object{Cluster: k.cluster, Resource: trafficPolicyVirtualService(group[0].target, http)})
		}
	}
	for _, k := range ruleKeys {
		group := rules[k]
		rule, es := composeDestinationRule(group)
		errs.add(k.cluster, es)
		if len(es) == 0 {
			out = append(out, translate.Object{Cluster: k.cluster, Resource: trafficPolicyDestinationRule(group[0].target, rule)})
		}
	}
	if err := errs.result(); err != nil {
		return nil, err
	}
	translate.Sort(out)
	return out, nil
}

// clusterErrors gathers composition errors found in several clusters:
// the same conflict is reported once, naming every cluster it holds in.
type clusterErrors struct {
	order    []string
	errs     map[string]*translate.Error
	clusters map[string][]string
}

func (c *clusterErrors) add(cluster string, es translate.Errors) {
	for _, e := range es {
		k := e.Error()
		if c.errs == nil {
			c.errs, c.clusters = map[string]*translate.Error{}, map[string][]string{}
		}
		if _, ok := c.errs[k]; !ok {
			c.order = append(c.order, k)
			c.errs[k] = e
		}
		c.clusters[k] = append(c.clusters[k], cluster)
	}
}

func (c *clusterErrors) result() error {
	var out translate.Errors
	for _, k := range c.order {
		e := *c.errs[k]
		clusters := unique(c.clusters[k])
		sort.Strings(clusters)
		word := "cluster"
		if len(clusters) > 1 {
			word = "clusters"
		}
		e.Detail = fmt.Sprintf("%s (Source %s: %s.)", e.Detail, word, strings.Join(clusters, ", "))
		out = append(out, &e)
	}
	return out.Err()
}

// checkTargets refuses policies that describe one host two ways (a
// virtual destination whose objects live in two namespaces): their objects
// would not meet, and Istio would silently pick one.
func checkTargets(policies []Named) translate.Errors {
	var errs translate.Errors
	seen := map[string]Named{}
	for _, p := range policies {
		t := resolveTarget(p.Destination)
		if t.host == "" {
			continue
		}
		prev, ok := seen[t.host]
		if !ok {
			seen[t.host] = p
			continue
		}
		pt := resolveTarget(prev.Destination)
		if pt.vsNamespace != t.vsNamespace || pt.drNamespace != t.drNamespace || pt.drName != t.drName {
			errs.Add(translate.Errorf(translate.Root("destination"), "Inconsistent destination",
				"Traffic policies %q and %q target %s but place its objects differently (%s/%s vs %s/%s); they must share one VirtualService and DestinationRule.",
				prev.Policy.Name, p.Policy.Name, t.host, pt.vsNamespace, pt.drName, t.vsNamespace, t.drName))
		}
	}
	return errs
}

// inPolicy names the policy in each of its errors, for messages about
// several policies.
func inPolicy(name string, err error) translate.Errors {
	var in translate.Errors
	in.Add(err)
	out := make(translate.Errors, len(in))
	for i, e := range in {
		c := *e
		c.Detail = fmt.Sprintf("In traffic policy %q: %s", name, e.Detail)
		out[i] = &c
	}
	return out
}
