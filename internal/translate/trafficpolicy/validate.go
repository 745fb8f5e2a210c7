package trafficpolicy

import (
	"maps"
	"slices"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"

	"math"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks what a traffic policy can be checked for
// without the cluster registry: names, the destination's shape, sources,
// match rules, durations, percentages, status codes, weights, header names
// and enum values. It returns every problem, each with the Terraform
// attribute path that caused it, and skips values not known yet (Unknown
// placeholders). Translate calls it and adds the checks that
// need the registry (clusters exist, back the destination).
func Validate(in Intent, dest Destination) translate.Errors {
	var errs translate.Errors
	errs.Add(translate.CheckIntentName(translate.Root("name"), in.Name, "", "it identifies the policy in routes, annotations and conflict errors"))
	errs = append(errs, validateDestination(dest)...)
	errs = append(errs, validateSources(in.Sources)...)
	for i, m := range in.Match {
		errs = append(errs, validateMatch(translate.Root("match").Index(i), m)...)
	}
	errs.Add(translate.CheckDuration(translate.Root("timeout"), in.Timeout))
	errs = append(errs, validateRetries(in.Retries)...)
	errs = append(errs, validateFault(in.Fault)...)
	errs = append(errs, validateShift(in.TrafficShift, dest)...)
	errs = append(errs, validateMirror(in.Mirror, dest)...)
	errs = append(errs, validateHeaders(in.Headers)...)
	errs = append(errs, validateCORS(in.CORS)...)
	errs = append(errs, validateConnectionPool(in.ConnectionPool)...)
	errs = append(errs, validateOutlierDetection(in.OutlierDetection)...)
	errs.Add(enum(translate.Root("load_balancer"), "load balancer", in.LoadBalancer, loadBalancers(dest)))
	errs.Add(enum(translate.Root("tls_mode"), "TLS mode", in.TLSMode, tlsModes(dest)))
	errs.Add(validateCrossClusterTLS(in, dest))
	errs = append(errs, validateScope(in, dest)...)
	return errs
}

// validateDestination checks the destination: a virtual destination or a
// service with its namespace.
func validateDestination(dest Destination) translate.Errors {
	at := translate.Root("destination")
	errs := translate.CheckDestinationChoice(at, dest.VirtualDestination, dest.Service, dest.Namespace)
	if dest.VirtualDestination == "" || dest.Service != "" {
		return errs
	}
	errs.Add(hostname(at.Attr("virtual_destination"), dest.VirtualDestination))
	if !strings.Contains(dest.VirtualDestination, ".") && !translate.IsUnknown(dest.VirtualDestination) {
		// Istio completes a host without a dot with the namespace of the
		// VirtualService (user -> user.istio-system.svc.cluster.local).
		errs.Add(translate.Errorf(at.Attr("virtual_destination"), "Invalid hostname",
			"%q has no dot; Istio would read it as a short Kubernetes service name. Use the virtual destination's full hostname (for example user.global).",
			dest.VirtualDestination))
	}
	errs.Add(translate.OptionalKubeName(at.Attr("virtual_destination"), "namespace", dest.VirtualDestinationNamespace, validation.IsDNS1123Label))
	// The virtual destination's name names the DestinationRule its
	// destination settings go to.
	errs.Add(translate.OptionalKubeName(at.Attr("virtual_destination"), "virtual destination name", dest.VirtualDestinationName, validation.IsDNS1123Label))
	return errs
}

func validateSources(s Sources) translate.Errors {
	var errs translate.Errors
	at := translate.Root("sources")
	seen := map[string]bool{}
	for i, ns := range s.Namespaces {
		errs.Add(translate.RequiredKubeName(at.Attr("namespaces").Index(i), "namespace", ns, validation.IsDNS1123Label))
		if seen[ns] {
			errs.Add(translate.Errorf(at.Attr("namespaces").Index(i), "Duplicate namespace", "Namespace %q is listed twice.", ns))
		}
		seen[ns] = true
	}
	errs = append(errs, checkLabels(at.Attr("workload_labels"), "workload label", s.WorkloadLabels, false)...)
	return errs
}

// validateMatch checks one match entry.
func validateMatch(at translate.Path, m Match) translate.Errors {
	var errs translate.Errors
	set := 0
	for _, u := range []struct {
		attr, v string
	}{{"uri_prefix", m.URIPrefix}, {"uri_exact", m.URIExact}, {"uri_regex", m.URIRegex}} {
		if u.v == "" {
			continue
		}
		set++
		if set > 1 {
			errs.Add(translate.Errorf(at.Attr(u.attr), "Conflicting URI match",
				"Set one of uri_prefix, uri_exact and uri_regex in a match entry; use several entries to match several URIs."))
			continue
		}
		switch {
		case translate.IsUnknown(u.v):
		case u.attr == "uri_regex":
			if _, err := regexp.Compile(u.v); err != nil {
				errs.Add(translate.Errorf(at.Attr(u.attr), "Invalid regular expression",
					"%q is not a valid RE2 regular expression: %v.", u.v, err))
			}
		case !strings.HasPrefix(u.v, "/"):
			errs.Add(translate.Errorf(at.Attr(u.attr), "Invalid URI", "%q must start with \"/\": it is matched against the request path.", u.v))
		}
	}
	if m.Method != "" {
		errs.Add(translate.CheckHTTPMethod(at.Attr("method"), m.Method))
	}
	for _, name := range slices.Sorted(maps.Keys(m.Headers)) {
		hat := at.Attr("headers").Key(name)
		errs.Add(headerName(hat, name, false))
		if name != strings.ToLower(name) && !translate.IsUnknown(name) {
			errs.Add(translate.Errorf(hat, "Invalid header name",
				"Header %q must be written in lower case: Envoy matches header names in lower case.", name))
		}
		if v := m.Headers[name]; v == "" {
			errs.Add(translate.Errorf(hat, "Empty header value", "Header %q needs a value to match exactly.", name))
		}
	}
	if set == 0 && m.Method == "" && len(m.Headers) == 0 {
		errs.Add(translate.Errorf(at, "Empty match", "A match entry without conditions matches every request; remove the entry, or remove match altogether."))
	}
	return errs
}

// RetryOn are the retry_on conditions Envoy (and Istio's validation)
// accept besides HTTP status codes.
var RetryOn = []string{
	"5xx", "cancelled", "connect-failure", "deadline-exceeded", "envoy-ratelimited", "gateway-error",
	"http3-post-connect-failure", "internal", "refused-stream", "reset", "reset-before-request",
	"resource-exhausted", "retriable-4xx", "retriable-headers", "retriable-status-codes", "unavailable",
}

func validateRetries(r *Retries) translate.Errors {
	if r == nil {
		return nil
	}
	var errs translate.Errors
	at := translate.Root("retries")
	switch {
	case r.Attempts < 0 || r.Attempts > math.MaxInt32:
		errs.Add(translate.Errorf(at.Attr("attempts"), "Invalid attempts", "attempts is %d; it must be 0 (no retries) or more.", r.Attempts))
	case r.Attempts == 0 && (r.PerTryTimeout != "" || len(r.RetryOn) > 0):
		errs.Add(translate.Errorf(at.Attr("attempts"), "Retries disabled",
			"attempts = 0 turns retries off, so per_try_timeout and retry_on would do nothing. Set attempts to 1 or more, or remove them."))
	}
	errs.Add(translate.CheckDuration(at.Attr("per_try_timeout"), r.PerTryTimeout))
	for i, p := range r.RetryOn {
		if translate.IsUnknown(p) || slices.Contains(RetryOn, p) {
			continue
		}
		if code, err := strconv.Atoi(p); err == nil && http.StatusText(code) != "" {
			continue
		}
		errs.Add(translate.Errorf(at.Attr("retry_on").Index(i), "Invalid retry condition",
			"%q is not a retry condition Envoy knows: use an HTTP status code or one of %s.", p, strings.Join(RetryOn, ", ")))
	}
	return errs
}

func validateFault(f *Fault) translate.Errors {
	if f == nil {
		return nil
	}
	var errs translate.Errors
	at := translate.Root("fault")
	if f.Delay == nil && f.Abort == nil {
		errs.Add(translate.Errorf(at, "Empty fault", "Set delay, abort or both."))
	}
	if d := f.Delay; d != nil {
		errs.Add(percent(at.Attr("delay").Attr("percent"), d.Percent))
		errs.Add(required(at.Attr("delay").Attr("fixed_delay"), "fixed_delay", d.FixedDelay))
		errs.Add(translate.CheckDuration(at.Attr("delay").Attr("fixed_delay"), d.FixedDelay))
	}
	if a := f.Abort; a != nil {
		errs.Add(percent(at.Attr("abort").Attr("percent"), a.Percent))
		if a.HTTPStatus < 200 || a.HTTPStatus > 599 {
			errs.Add(translate.Errorf(at.Attr("abort").Attr("http_status"), "Invalid HTTP status",
				"http_status is %d; an aborted request is answered with a status from 200 to 599.", a.HTTPStatus))
		}
	}
	return errs
}

// validateShift checks traffic_shift on its own: one target per entry,
// weights in range and summing to 100, no target twice.
func validateShift(shift []Shift, dest Destination) translate.Errors {
	if len(shift) == 0 {
		return nil
	}
	var errs translate.Errors
	weights := make([]int, len(shift))
	seen := map[string]int{}
	for i, e := range shift {
		at := translate.Root("traffic_shift").Index(i)
		errs = append(errs, validateTarget(at, e.Cluster, e.Local, e.Subset, e.Labels, dest, true)...)
		weights[i] = e.Weight
		id := "local"
		switch {
		case e.Cluster != "":
			id = "cluster " + e.Cluster
		case e.Subset != "":
			id = "subset " + e.Subset
		}
		if j, ok := seen[id]; ok {
			errs.Add(translate.Errorf(at, "Duplicate shift target", "traffic_shift[%d] already sends requests to %s; give it the sum of both weights.", j, id))
		} else {
			seen[id] = i
		}
	}
	return append(errs, ValidateWeights(weights)...)
}

// ValidateWeights checks the weights of traffic_shift, in order: each from
// 0 to 100, and their sum 100. They need nothing else of the policy, so
// terraform validate checks them even where other attributes are not known
// yet.
func ValidateWeights(weights []int) translate.Errors {
	if len(weights) == 0 {
		return nil
	}
	var errs translate.Errors
	total := 0
	for i, w := range weights {
		if w < 0 || w > 100 {
			errs.Add(translate.Errorf(translate.Root("traffic_shift").Index(i).Attr("weight"), "Invalid weight", "weight is %d; it must be from 0 to 100 (percent of the requests).", w))
		}
		total += w
	}
	if total != 100 {
		errs.Add(translate.Errorf(translate.Root("traffic_shift"), "Weights do not sum to 100",
			"The weights of traffic_shift sum to %d; they are percentages of the requests and must sum to 100.", total))
	}
	return errs
}

func validateMirror(m *Mirror, dest Destination) translate.Errors {
	if m == nil {
		return nil
	}
	var errs translate.Errors
	at := translate.Root("mirror")
	errs = append(errs, validateTarget(at, m.Cluster, false, m.Subset, m.Labels, dest, false)...)
	if m.Percent != nil {
		errs.Add(percent(at.Attr("percent"), *m.Percent))
	}
	return errs
}

// validateTarget checks the target of a shift entry or of the mirror:
// exactly one of cluster, local (shift only) and subset; subsets only for
// services, with labels.
func validateTarget(at translate.Path, cluster string, local bool, subset string, labels map[string]string, dest Destination, allowLocal bool) translate.Errors {
	var errs translate.Errors
	n := 0
	for _, set := range []bool{cluster != "", local, subset != ""} {
		if set {
			n++
		}
	}
	kinds := "cluster or subset"
	if allowLocal {
		kinds = "cluster, local or subset"
	}
	switch {
	case n == 0:
		errs.Add(translate.Errorf(at, "Missing target", "Set one of %s.", kinds))
	case n > 1:
		errs.Add(translate.Errorf(at, "Conflicting target", "Set only one of %s.", kinds))
	}
	if subset != "" {
		errs.Add(translate.OptionalKubeName(at.Attr("subset"), "subset", subset, validation.IsDNS1123Label))
		if dest.VirtualDestination != "" {
			errs.Add(translate.Errorf(at.Attr("subset"), "Subset of a virtual destination",
				"A virtual destination is split by cluster (cluster or local); subsets by labels apply to a service destination."))
		} else if len(labels) == 0 {
			errs.Add(translate.Errorf(at.Attr("labels"), "Missing subset labels",
				"Set labels to the pod labels that select subset %q (for example version = \"v2\").", subset))
		}
	}
	if len(labels) > 0 && subset == "" {
		errs.Add(translate.Errorf(at.Attr("labels"), "Labels without subset", "labels select the endpoints of a subset; set subset, or remove labels."))
	}
	errs = append(errs, checkLabels(at.Attr("labels"), "subset label", labels, true)...)
	return errs
}

func validateHeaders(h *Headers) translate.Errors {
	if h == nil {
		return nil
	}
	var errs translate.Errors
	for _, dir := range []struct {
		name string
		ops  *HeaderOps
	}{{"request", h.Request}, {"response", h.Response}} {
		if dir.ops == nil {
			continue
		}
		at := translate.Root("headers").Attr(dir.name)
		touched := map[string]string{}
		note := func(name, op string, p translate.Path) {
			lower := strings.ToLower(name)
			if prev, ok := touched[lower]; ok {
				errs.Add(translate.Errorf(p, "Header changed twice", "Header %q is already in %s; change each header once.", name, prev))
			}
			touched[lower] = op
		}
		for _, op := range []struct {
			name string
			m    map[string]string
		}{{"set", dir.ops.Set}, {"add", dir.ops.Add}} {
			for _, name := range slices.Sorted(maps.Keys(op.m)) {
				p := at.Attr(op.name).Key(name)
				errs.Add(headerName(p, name, true))
				errs.Add(headerValue(p, op.m[name]))
				note(name, op.name, p)
			}
		}
		for i, name := range dir.ops.Remove {
			p := at.Attr("remove").Index(i)
			errs.Add(headerName(p, name, true))
			note(name, "remove", p)
		}
	}
	return errs
}

// CORSMethods are the methods Istio accepts in cors.allow_methods.
var CORSMethods = []string{"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE", "*"}

func validateCORS(c *CORS) translate.Errors {
	if c == nil {
		return nil
	}
	var errs translate.Errors
	at := translate.Root("cors")
	if len(c.AllowOrigins) == 0 {
		errs.Add(translate.Errorf(at.Attr("allow_origins"), "Missing origins", "Set allow_origins: the origins (\"https://example.com\", or \"*\") allowed to call."))
	}
	for i, o := range c.AllowOrigins {
		if o == "" {
			errs.Add(translate.Errorf(at.Attr("allow_origins").Index(i), "Empty origin", "An origin cannot be empty; use \"*\" to allow any."))
		}
	}
	for i, m := range c.AllowMethods {
		errs.Add(enum(at.Attr("allow_methods").Index(i), "method", m, CORSMethods))
	}
	if c.AllowCredentials != nil && *c.AllowCredentials {
		for i, o := range c.AllowOrigins {
			if o == "*" {
				// Browsers refuse credentials with a wildcard origin, and
				// Istio would answer with the caller's origin instead:
				// every site could then make credentialed calls.
				errs.Add(translate.Errorf(at.Attr("allow_origins").Index(i), "Wildcard origin with credentials",
					"allow_credentials = true with the origin \"*\" would let any web site make credentialed calls (Envoy echoes the caller's origin). List the origins that may send credentials, or set allow_credentials = false."))
			}
		}
	}
	for _, list := range []struct {
		attr  string
		names []string
	}{{"allow_headers", c.AllowHeaders}, {"expose_headers", c.ExposeHeaders}} {
		for i, name := range list.names {
			if name != "*" {
				errs.Add(headerName(at.Attr(list.attr).Index(i), name, false))
			}
		}
	}
	if err := translate.CheckDuration(at.Attr("max_age"), c.MaxAge); err != nil {
		errs.Add(err)
	} else if d, _ := time.ParseDuration(c.MaxAge); d%time.Second != 0 {
		errs.Add(translate.Errorf(at.Attr("max_age"), "Invalid duration", "max_age %q must be whole seconds: browsers cache preflights by the second.", c.MaxAge))
	}
	return errs
}

func validateConnectionPool(cp *ConnectionPool) translate.Errors {
	if cp == nil {
		return nil
	}
	var errs translate.Errors
	at := translate.Root("connection_pool")
	if cp.TCP == nil && cp.HTTP == nil {
		errs.Add(translate.Errorf(at, "Empty connection pool", "Set tcp, http or both."))
	}
	if t := cp.TCP; t != nil {
		tat := at.Attr("tcp")
		errs.Add(count(tat.Attr("max_connections"), t.MaxConnections))
		errs.Add(translate.CheckDuration(tat.Attr("connect_timeout"), t.ConnectTimeout))
		errs.Add(translate.CheckDuration(tat.Attr("idle_timeout"), t.IdleTimeout))
		errs.Add(translate.CheckDuration(tat.Attr("max_connection_duration"), t.MaxConnectionDuration))
		if k := t.Keepalive; k != nil {
			errs.Add(translate.CheckDuration(tat.Attr("keepalive").Attr("time"), k.Time))
			errs.Add(translate.CheckDuration(tat.Attr("keepalive").Attr("interval"), k.Interval))
			errs.Add(count(tat.Attr("keepalive").Attr("probes"), k.Probes))
		}
	}
	if h := cp.HTTP; h != nil {
		hat := at.Attr("http")
		errs.Add(count(hat.Attr("http1_max_pending_requests"), h.HTTP1MaxPendingRequests))
		errs.Add(count(hat.Attr("http2_max_requests"), h.HTTP2MaxRequests))
		errs.Add(count(hat.Attr("max_requests_per_connection"), h.MaxRequestsPerConnection))
		errs.Add(count(hat.Attr("max_retries"), h.MaxRetries))
		errs.Add(translate.CheckDuration(hat.Attr("idle_timeout"), h.IdleTimeout))
	}
	return errs
}

func validateOutlierDetection(o *OutlierDetection) translate.Errors {
	if o == nil {
		return nil
	}
	var errs translate.Errors
	at := translate.Root("outlier_detection")
	if o.Consecutive5xxErrors != nil {
		errs.Add(count(at.Attr("consecutive_5xx_errors"), *o.Consecutive5xxErrors))
	}
	if o.ConsecutiveGatewayErrors != nil {
		errs.Add(count(at.Attr("consecutive_gateway_errors"), *o.ConsecutiveGatewayErrors))
	}
	errs.Add(translate.CheckDuration(at.Attr("interval"), o.Interval))
	errs.Add(translate.CheckDuration(at.Attr("base_ejection_time"), o.BaseEjectionTime))
	for _, p := range []struct {
		attr string
		v    int
	}{{"max_ejection_percent", o.MaxEjectionPercent}, {"min_health_percent", o.MinHealthPercent}} {
		if p.v < 0 || p.v > 100 {
			errs.Add(translate.Errorf(at.Attr(p.attr), "Invalid percentage", "%s is %d; it must be from 0 to 100.", p.attr, p.v))
		}
	}
	return errs
}

// LoadBalancers are the load_balancer values the translator accepts for
// a service; a virtual destination takes all but PASSTHROUGH.
var LoadBalancers = []string{"LEAST_REQUEST", "PASSTHROUGH", "RANDOM", "ROUND_ROBIN"}

func loadBalancers(dest Destination) []string {
	if dest.VirtualDestination != "" {
		// PASSTHROUGH would send requests to the virtual IP itself.
		return slices.DeleteFunc(slices.Clone(LoadBalancers), func(s string) bool { return s == "PASSTHROUGH" })
	}
	return LoadBalancers
}

// validateCrossClusterTLS refuses a TLS mode other than Istio mutual TLS
// on a service whose traffic the policy sends to other clusters: their
// east-west gateways route by the SNI of Istio's mTLS (AUTO_PASSTHROUGH)
// and Istio drops plaintext endpoints on other networks, so the traffic
// would fail at the gateway or never leave.
func validateCrossClusterTLS(in Intent, dest Destination) error {
	if dest.VirtualDestination != "" || in.TLSMode == "" || in.TLSMode == "ISTIO_MUTUAL" {
		return nil
	}
	cross := in.Mirror != nil && in.Mirror.Cluster != ""
	for _, e := range in.TrafficShift {
		cross = cross || e.Cluster != ""
	}
	if !cross {
		return nil
	}
	return translate.Errorf(translate.Root("tls_mode"), "TLS mode breaks cross-cluster routing",
		"tls_mode %q with traffic_shift or mirror to another cluster: east-west gateways route only Istio mutual TLS (by its SNI), so requests to another cluster would fail. Use tls_mode = \"ISTIO_MUTUAL\" (or leave it unset), or keep the traffic in its cluster.", in.TLSMode)
}

// TLSModes are the tls_mode values the translator accepts for a service;
// a virtual destination takes ISTIO_MUTUAL only. MUTUAL (client
// certificates of your own) is not offered: the policy has no attributes
// for the certificates.
var TLSModes = []string{"DISABLE", "ISTIO_MUTUAL", "SIMPLE"}

func tlsModes(dest Destination) []string {
	if dest.VirtualDestination != "" {
		// Remote backends are reached through east-west gateways that route
		// by the SNI of Istio mutual TLS (AUTO_PASSTHROUGH).
		return []string{"ISTIO_MUTUAL"}
	}
	return TLSModes
}

// destinationAttrs are the attributes that are written to a
// DestinationRule, in the order they are reported. For a virtual
// destination, tls_mode is its own already and outlier_detection refused.
func destinationAttrs(in Intent, dest Destination) []string {
	var out []string
	if in.ConnectionPool != nil {
		out = append(out, "connection_pool")
	}
	if in.OutlierDetection != nil && dest.VirtualDestination == "" {
		out = append(out, "outlier_detection")
	}
	if in.LoadBalancer != "" {
		out = append(out, "load_balancer")
	}
	if in.TLSMode != "" && dest.VirtualDestination == "" {
		out = append(out, "tls_mode")
	}
	return out
}

// validateScope checks that the policy does something, and that its
// DestinationRule settings are not meant for only some callers: a
// DestinationRule holds for every caller of the host in a cluster, and
// narrowing it with a second rule would replace the destination's own rule
// (subsets, failover) for those callers.
func validateScope(in Intent, dest Destination) translate.Errors {
	var errs translate.Errors
	destAttrs := destinationAttrs(in, dest)
	set := in.Timeout != "" || in.Retries != nil || in.Fault != nil || len(in.TrafficShift) > 0 ||
		in.Mirror != nil || in.Headers != nil || in.CORS != nil ||
		in.ConnectionPool != nil || in.OutlierDetection != nil || in.LoadBalancer != "" || in.TLSMode != ""
	if !set {
		errs.Add(translate.Errorf(nil, "Traffic policy does nothing",
			"Set at least one of timeout, retries, fault, traffic_shift, mirror, headers, cors, connection_pool, outlier_detection, load_balancer or tls_mode."))
	}
	var narrowing []string
	if len(in.Sources.Namespaces) > 0 {
		narrowing = append(narrowing, "sources.namespaces")
	}
	if len(in.Sources.WorkloadLabels) > 0 {
		narrowing = append(narrowing, "sources.workload_labels")
	}
	if len(in.Match) > 0 {
		narrowing = append(narrowing, "match")
	}
	if len(narrowing) > 0 {
		for _, attr := range destAttrs {
			errs.Add(translate.Errorf(translate.Root(attr), "Destination setting for some callers only",
				"%s is a DestinationRule setting: it holds for every caller of the destination in the source clusters, so it cannot be limited by %s. "+
					"Move it to a policy whose sources select clusters only, without match.", attr, or(narrowing)))
		}
	}
	if dest.VirtualDestination != "" {
		if in.OutlierDetection != nil {
			errs.Add(translate.Errorf(translate.Root("outlier_detection"), "Outlier detection of a virtual destination",
				"A virtual destination (here %s) ejects failing backends with its own outlier detection, which drives its failover. Set it in the mesh_virtual_destination's failover.outlier_detection.",
				hostnameForMessage(dest.VirtualDestination)))
		}
		written := in.ConnectionPool != nil || in.LoadBalancer != ""
		if written && dest.VirtualDestinationName == "" && !translate.IsUnknown(dest.VirtualDestination) {
			errs.Add(translate.Errorf(translate.Root("destination").Attr("virtual_destination"), "Virtual destination not resolved",
				"The mesh_virtual_destination of %q is not known, so its DestinationRule cannot receive connection_pool or load_balancer. This is a provider error: the destination must be resolved from its mesh_virtual_destination.",
				dest.VirtualDestination))
		}
	}
	return errs
}

// validateClusters checks what needs the registry and the source
// clusters: shift and mirror clusters exist and back the destination where
// the policy applies, and a local shift has a backend in every source
// cluster.
func validateClusters(in Intent, t target, sources []string, reg *translate.Registry) translate.Errors {
	var errs translate.Errors
	// unreached lists the source clusters that cannot reach backend cluster
	// target (target "" means their own).
	unreached := func(target string) []string {
		var out []string
		for _, src := range sources {
			want := target
			if want == "" {
				want = src
			}
			if set, known := t.reachable(src); known && !set[want] {
				out = append(out, src)
			}
		}
		return out
	}
	backends := "unknown"
	if t.backends != nil {
		backends = setList(t.backends)
	}
	check := func(at translate.Path, cluster string, local bool, subset string) {
		switch {
		case cluster != "" && !translate.IsUnknown(cluster):
			if reg.Cluster(cluster) == nil {
				errs.Add(translate.Errorf(at.Attr("cluster"), "Unknown cluster",
					"%s Add it to the provider block or fix the name.", reg.UnknownCluster(cluster)))
			} else if missing := unreached(cluster); len(missing) > 0 {
				errs.Add(translate.Errorf(at.Attr("cluster"), "Not a backend cluster",
					"Cluster %q is not a backend of virtual destination %s that source cluster(s) %s can reach (backends: %s); requests sent there would fail. Pick a backend cluster, or add or un-exclude the backend.",
					cluster, t.host, strings.Join(missing, ", "), backends))
			}
		case local:
			if missing := unreached(""); len(missing) > 0 {
				errs.Add(translate.Errorf(at.Attr("local"), "No local backend",
					"local sends requests to the backend in the caller's own cluster, but virtual destination %s has none that source cluster(s) %s can reach (backends: %s). Narrow sources to backend clusters or name the cluster.",
					t.host, strings.Join(missing, ", "), backends))
			}
		case subset != "" && !translate.IsUnknown(subset):
			for _, c := range reg.Names() {
				if virtualdestination.SubsetName(c) == subset {
					errs.Add(translate.Errorf(at.Attr("subset"), "Subset named after a cluster",
						"Subset %q is the name of cluster %s's subset. Choose another name (for example a version).", subset, c))
				}
			}
		}
	}
	for i, e := range in.TrafficShift {
		check(translate.Root("traffic_shift").Index(i), e.Cluster, e.Local, e.Subset)
	}
	if m := in.Mirror; m != nil {
		check(translate.Root("mirror"), m.Cluster, false, m.Subset)
	}
	return errs
}

// hostname checks a mesh hostname: a lower-case DNS name, no wildcard.
func hostname(at translate.Path, h string) error {
	if translate.IsUnknown(h) {
		return nil
	}
	if msgs := validation.IsDNS1123Subdomain(h); len(msgs) > 0 {
		return translate.Errorf(at, "Invalid hostname", "%q is not a valid hostname: %s.", h, strings.Join(msgs, "; "))
	}
	return nil
}

func required(at translate.Path, what, v string) error {
	if v == "" {
		return translate.Errorf(at, "Missing "+what, "Set %s.", what)
	}
	return nil
}

// percent checks a percentage of requests: above 0 (0 would do nothing),
// at most 100, and not below Istio's resolution of 0.0001.
func percent(at translate.Path, v float64) error {
	if v <= 0 || v > 100 || v < 0.0001 || math.IsNaN(v) {
		return translate.Errorf(at, "Invalid percentage", "percent is %v; it must be above 0 (at least 0.0001) and at most 100.", v)
	}
	return nil
}

// count checks a non-negative count that fits Istio's int32 fields.
func count(at translate.Path, v int) error {
	if v < 0 || v > math.MaxInt32 {
		return translate.Errorf(at, "Invalid value", "%d is out of range: it must be from 0 to %d.", v, math.MaxInt32)
	}
	return nil
}

func enum(at translate.Path, what, v string, allowed []string) error {
	if v == "" || translate.IsUnknown(v) {
		return nil
	}
	for _, a := range allowed {
		if v == a {
			return nil
		}
	}
	return translate.Errorf(at, "Invalid "+what, "%q is not a valid %s here; use one of %s.", v, what, strings.Join(allowed, ", "))
}

// headerToken is an RFC 9110 token, the characters of a header name.
var headerToken = regexp.MustCompile("^[!#$%&'*+\\-.^_`|~0-9A-Za-z]+$")

// headerName checks a header name. modify is set for names a policy
// changes: pseudo-headers and Host cannot be changed.
func headerName(at translate.Path, name string, modify bool) error {
	if translate.IsUnknown(name) {
		return nil
	}
	if !headerToken.MatchString(name) {
		return translate.Errorf(at, "Invalid header name", "%q is not a valid HTTP header name.", name)
	}
	if modify && strings.EqualFold(name, "host") {
		return translate.Errorf(at, "Invalid header name", "The Host header cannot be changed by a header operation.")
	}
	return nil
}

// headerValue checks a header value: no control characters, and "%"
// doubled (Envoy reads %...% as a variable).
func headerValue(at translate.Path, v string) error {
	if translate.IsUnknown(v) {
		return nil
	}
	for _, r := range v {
		if (r < 0x20 && r != '\t') || r == 0x7f {
			return translate.Errorf(at, "Invalid header value", "The value %q holds a control character.", v)
		}
	}
	if strings.Count(v, "%")%2 != 0 {
		return translate.Errorf(at, "Invalid header value", "The value %q has an unpaired %%: Envoy reads %%NAME%% as a variable; write a literal %% as %%%%.", v)
	}
	return nil
}

// checkLabels checks label keys and values. required means an empty value is
// refused.
func checkLabels(at translate.Path, what string, labels map[string]string, required bool) translate.Errors {
	var errs translate.Errors
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		v := labels[k]
		kat := at.Key(k)
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 && !translate.IsUnknown(k) {
			errs.Add(translate.Errorf(kat, "Invalid "+what, "The label key %q is not a valid Kubernetes label key: %s.", k, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 && !translate.IsUnknown(v) {
			errs.Add(translate.Errorf(kat, "Invalid "+what, "The value %q of label %q is not a valid Kubernetes label value: %s.", v, k, strings.Join(msgs, "; ")))
		} else if required && v == "" {
			errs.Add(translate.Errorf(kat, "Invalid "+what, "Label %q needs a value.", k))
		}
	}
	return errs
}

// or joins words as "a, b or c".
func or(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

func setList(set map[string]bool) string {
	var out []string
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	if len(out) == 0 {
		return "none"
	}
	return strings.Join(out, ", ")
}

// hostnameForMessage names a virtual destination's hostname in a message,
// or, before plan resolves a reference to it, says so.
func hostnameForMessage(hostname string) string {
	if translate.IsUnknown(hostname) {
		return "the hostname destination.virtual_destination gives"
	}
	return strconv.Quote(hostname)
}
