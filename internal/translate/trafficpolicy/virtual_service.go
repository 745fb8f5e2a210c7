package trafficpolicy

import (
	"maps"
	"slices"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"

	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"
)

// scope is what a feature function sees: the policy, its destination and
// the source cluster the settings are for (a "local" shift differs per
// cluster).
type scope struct {
	in      Intent
	target  target
	cluster string
	// routes: the cluster is a source, where the policy routes; otherwise
	// it only serves the policy's cluster subsets to other clusters.
	routes bool
	// clusterSubsets are the clusters whose subsets every cluster the
	// policy reaches defines (subsets).
	clusterSubsets []string
}

// setting is one setting of one policy: a fragment of an HTTPRoute or of
// a DestinationRule holding only that setting. Two policies may set the
// same key on the same requests only to the same value; fragments with
// different keys merge.
type setting struct {
	key  string         // e.g. "timeout", "fault.delay", "headers.request[x-mesh]"
	at   translate.Path // the attribute that set it
	frag proto.Message
}

// routeSettings lists the route settings of a policy, one feature
// function each, in a fixed order. Each touches one part of the HTTPRoute.
func routeSettings(s scope) []setting {
	var out []setting
	out = append(out, timeout(s)...)
	out = append(out, retries(s)...)
	out = append(out, fault(s)...)
	out = append(out, trafficShift(s)...)
	out = append(out, mirror(s)...)
	out = append(out, headers(s)...)
	out = append(out, cors(s)...)
	return out
}

// timeout sets the route timeout.
func timeout(s scope) []setting {
	if s.in.Timeout == "" {
		return nil
	}
	return []setting{{key: "timeout", at: translate.Root("timeout"),
		frag: &networkingapi.HTTPRoute{Timeout: durationProto(s.in.Timeout)}}}
}

// retries sets the retry policy; attempts 0 disables Istio's default
// retries.
func retries(s scope) []setting {
	r := s.in.Retries
	if r == nil {
		return nil
	}
	out := &networkingapi.HTTPRetry{Attempts: int32(r.Attempts)}
	if r.PerTryTimeout != "" {
		out.PerTryTimeout = durationProto(r.PerTryTimeout)
	}
	out.RetryOn = strings.Join(unique(r.RetryOn), ",")
	return []setting{{key: "retries", at: translate.Root("retries"), frag: &networkingapi.HTTPRoute{Retries: out}}}
}

// fault injects a delay and/or an abort. They are separate settings, so
// one policy may delay and another abort the same requests.
func fault(s scope) []setting {
	f := s.in.Fault
	if f == nil {
		return nil
	}
	var out []setting
	if d := f.Delay; d != nil {
		out = append(out, setting{key: "fault.delay", at: translate.Root("fault").Attr("delay"),
			frag: &networkingapi.HTTPRoute{Fault: &networkingapi.HTTPFaultInjection{Delay: &networkingapi.HTTPFaultInjection_Delay{
				Percentage:    &networkingapi.Percent{Value: d.Percent},
				HttpDelayType: &networkingapi.HTTPFaultInjection_Delay_FixedDelay{FixedDelay: durationProto(d.FixedDelay)},
			}}}})
	}
	if a := f.Abort; a != nil {
		out = append(out, setting{key: "fault.abort", at: translate.Root("fault").Attr("abort"),
			frag: &networkingapi.HTTPRoute{Fault: &networkingapi.HTTPFaultInjection{Abort: &networkingapi.HTTPFaultInjection_Abort{
				Percentage: &networkingapi.Percent{Value: a.Percent},
				ErrorType:  &networkingapi.HTTPFaultInjection_Abort_HttpStatus{HttpStatus: int32(a.HTTPStatus)},
			}}}})
	}
	return out
}

// trafficShift splits the requests across subsets by weight. Entries that
// land on the same subset in this cluster (local and the cluster itself)
// add up; zero weights are dropped; a single destination carries no weight.
// Without traffic_shift the route goes to the host as a whole (set when the
// route is assembled).
func trafficShift(s scope) []setting {
	if len(s.in.TrafficShift) == 0 {
		return nil
	}
	var order []string
	weights := map[string]int{}
	targets := map[string]*networkingapi.Destination{}
	for _, e := range s.in.TrafficShift {
		d := targetDestination(s, e.Cluster, e.Local, e.Subset)
		k := d.Host + "|" + d.Subset
		if _, ok := weights[k]; !ok {
			order = append(order, k)
			targets[k] = d
		}
		weights[k] += e.Weight
	}
	var dests []*networkingapi.HTTPRouteDestination
	for _, k := range order {
		if weights[k] == 0 {
			continue
		}
		dests = append(dests, &networkingapi.HTTPRouteDestination{Destination: targets[k], Weight: int32(weights[k])})
	}
	if len(dests) == 1 {
		dests[0].Weight = 0
	}
	return []setting{{key: "traffic_shift", at: translate.Root("traffic_shift"), frag: &networkingapi.HTTPRoute{Route: dests}}}
}

// mirror mirrors a share of the requests to a subset.
func mirror(s scope) []setting {
	m := s.in.Mirror
	if m == nil {
		return nil
	}
	frag := &networkingapi.HTTPRoute{Mirror: targetDestination(s, m.Cluster, false, m.Subset)}
	if m.Percent != nil {
		frag.MirrorPercentage = &networkingapi.Percent{Value: *m.Percent}
	}
	return []setting{{key: "mirror", at: translate.Root("mirror"), frag: frag}}
}

// headers manipulates request and response headers: one setting per
// header, so policies touching different headers combine.
func headers(s scope) []setting {
	h := s.in.Headers
	if h == nil {
		return nil
	}
	var out []setting
	for _, dir := range []struct {
		name string
		ops  *HeaderOps
		wrap func(*networkingapi.Headers_HeaderOperations) *networkingapi.Headers
	}{
		{"request", h.Request, func(o *networkingapi.Headers_HeaderOperations) *networkingapi.Headers {
			return &networkingapi.Headers{Request: o}
		}},
		{"response", h.Response, func(o *networkingapi.Headers_HeaderOperations) *networkingapi.Headers {
			return &networkingapi.Headers{Response: o}
		}},
	} {
		if dir.ops == nil {
			continue
		}
		at := translate.Root("headers").Attr(dir.name)
		key := func(name string) string { return "headers." + dir.name + "[" + strings.ToLower(name) + "]" }
		for _, name := range slices.Sorted(maps.Keys(dir.ops.Set)) {
			out = append(out, setting{key: key(name), at: at.Attr("set").Key(name), frag: &networkingapi.HTTPRoute{
				Headers: dir.wrap(&networkingapi.Headers_HeaderOperations{Set: map[string]string{name: dir.ops.Set[name]}})}})
		}
		for _, name := range slices.Sorted(maps.Keys(dir.ops.Add)) {
			out = append(out, setting{key: key(name), at: at.Attr("add").Key(name), frag: &networkingapi.HTTPRoute{
				Headers: dir.wrap(&networkingapi.Headers_HeaderOperations{Add: map[string]string{name: dir.ops.Add[name]}})}})
		}
		for i, name := range dir.ops.Remove {
			out = append(out, setting{key: key(name), at: at.Attr("remove").Index(i), frag: &networkingapi.HTTPRoute{
				Headers: dir.wrap(&networkingapi.Headers_HeaderOperations{Remove: []string{name}})}})
		}
	}
	return out
}

// cors sets the CORS policy. "*" allows any origin (a regex, since Istio
// refuses an empty match); other origins match exactly.
func cors(s scope) []setting {
	c := s.in.CORS
	if c == nil {
		return nil
	}
	out := &networkingapi.CorsPolicy{
		AllowMethods:  append([]string(nil), c.AllowMethods...),
		AllowHeaders:  append([]string(nil), c.AllowHeaders...),
		ExposeHeaders: append([]string(nil), c.ExposeHeaders...),
	}
	for _, o := range c.AllowOrigins {
		if o == "*" {
			out.AllowOrigins = append(out.AllowOrigins, &networkingapi.StringMatch{MatchType: &networkingapi.StringMatch_Regex{Regex: ".*"}})
			continue
		}
		out.AllowOrigins = append(out.AllowOrigins, &networkingapi.StringMatch{MatchType: &networkingapi.StringMatch_Exact{Exact: o}})
	}
	if c.MaxAge != "" {
		out.MaxAge = durationProto(c.MaxAge)
	}
	if c.AllowCredentials != nil {
		out.AllowCredentials = wrapperspb.Bool(*c.AllowCredentials)
	}
	return []setting{{key: "cors", at: translate.Root("cors"), frag: &networkingapi.HTTPRoute{CorsPolicy: out}}}
}

// targetDestination is where a shift or mirror target routes to in the
// scope's source cluster. One cluster of a virtual destination is its own
// host (virtualdestination.ClusterHost), whose failover starts in that
// cluster: Istio does not apply failoverPriority to the subsets of a DNS
// ServiceEntry, so a subset could not fail over. One cluster of a service
// is a subset of it, as is a version.
func targetDestination(s scope, cluster string, local bool, subset string) *networkingapi.Destination {
	if s.target.virtual && (cluster != "" || local) {
		c := cluster
		if local {
			c = s.cluster
		}
		return &networkingapi.Destination{Host: virtualdestination.ClusterHost(s.target.host, c)}
	}
	return &networkingapi.Destination{Host: s.target.host, Subset: targetSubset(s, cluster, local, subset)}
}

// targetSubset is the subset a shift or mirror target routes to in the
// scope's source cluster.
func targetSubset(s scope, cluster string, local bool, subset string) string {
	switch {
	case cluster != "":
		return virtualdestination.SubsetName(cluster)
	case local:
		return virtualdestination.SubsetName(s.cluster)
	default:
		return subset
	}
}

// assembleRoute builds one HTTPRoute from settings (already checked not
// to conflict), in key order so the result does not depend on the order
// policies were given in.
func assembleRoute(name string, host string, settings map[string]setting, conds []cond) *networkingapi.HTTPRoute {
	route := &networkingapi.HTTPRoute{Name: name}
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		proto.Merge(route, settings[k].frag)
	}
	if len(route.Route) == 0 {
		route.Route = []*networkingapi.HTTPRouteDestination{{Destination: &networkingapi.Destination{Host: host}}}
	}
	if h := route.Headers; h != nil {
		for _, ops := range []*networkingapi.Headers_HeaderOperations{h.Request, h.Response} {
			if ops != nil {
				sort.Strings(ops.Remove)
			}
		}
	}
	for _, c := range conds {
		if m := c.match(); m != nil {
			route.Match = append(route.Match, m)
		}
	}
	return route
}

// defaultHTTPRoute is the last route: requests no policy selects go to
// the host as they would without a VirtualService (a sidecar answers 404
// to a request no route of the host's VirtualService matches).
func defaultHTTPRoute(host string) *networkingapi.HTTPRoute {
	return &networkingapi.HTTPRoute{
		Name:  defaultRoute,
		Route: []*networkingapi.HTTPRouteDestination{{Destination: &networkingapi.Destination{Host: host}}},
	}
}

// trafficPolicyVirtualService is the destination's VirtualService in one
// source cluster. It binds to sidecars only (no gateways) and is exported
// explicitly, so a mesh-wide defaultVirtualServiceExportTo cannot hide it
// from callers: to a virtual destination's client namespaces (where its
// hosts are visible), else to every namespace.
func trafficPolicyVirtualService(t target, http []*networkingapi.HTTPRoute) *networking.VirtualService {
	exportTo := t.exportTo
	if len(exportTo) == 0 {
		exportTo = []string{"*"}
	}
	return &networking.VirtualService{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "VirtualService"),
		ObjectMeta: translate.ObjectMeta(t.vsNamespace, t.vsName),
		Spec: networkingapi.VirtualService{
			Hosts:    []string{t.host},
			ExportTo: append([]string(nil), exportTo...),
			Http:     http,
		},
	}
}

// durationProto converts a validated duration.
func durationProto(v string) *durationpb.Duration {
	d, _ := time.ParseDuration(v)
	return durationpb.New(d)
}

func unique(in []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
