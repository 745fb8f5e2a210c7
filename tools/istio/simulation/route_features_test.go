package simulation

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	cors "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/cors/v3"
	fault "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/fault/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
)

// What a route does to a request besides choosing where it goes: the
// fault it injects, the CORS policy it answers with and the headers it
// sets, adds and removes. Envoy reads the first two from the route's
// per-filter configuration (envoy.filters.http.fault, .cors), the
// headers from the route itself; the table shows all of them, and
// checkFeatures compares them with the policy's intent.

// tpFeatures is the part of a traffic policy's intent these checks read.
type tpFeatures struct {
	Fault *struct {
		Delay *struct {
			Percent    float64 `json:"percent"`
			FixedDelay string  `json:"fixedDelay"`
		} `json:"delay"`
		Abort *struct {
			Percent    float64 `json:"percent"`
			HTTPStatus uint32  `json:"httpStatus"`
		} `json:"abort"`
	} `json:"fault"`
	Headers *struct {
		Request  *headerOps `json:"request"`
		Response *headerOps `json:"response"`
	} `json:"headers"`
	CORS *struct {
		AllowOrigins     []string `json:"allowOrigins"`
		AllowMethods     []string `json:"allowMethods"`
		AllowHeaders     []string `json:"allowHeaders"`
		ExposeHeaders    []string `json:"exposeHeaders"`
		MaxAge           string   `json:"maxAge"`
		AllowCredentials *bool    `json:"allowCredentials"`
	} `json:"cors"`
}

type headerOps struct {
	Set    map[string]string `json:"set"`
	Add    map[string]string `json:"add"`
	Remove []string          `json:"remove"`
}

// routeFault is the fault the route injects (nil: none).
func routeFault(t *testing.T, r *route.Route) *fault.HTTPFault {
	a, ok := r.GetTypedPerFilterConfig()["envoy.filters.http.fault"]
	if !ok {
		return nil
	}
	f := &fault.HTTPFault{}
	if err := a.UnmarshalTo(f); err != nil {
		t.Fatalf("route %s: the fault filter's configuration: %v", r.Name, err)
	}
	return f
}

// routeCORS is the route's CORS policy (nil: none).
func routeCORS(t *testing.T, r *route.Route) *cors.CorsPolicy {
	a, ok := r.GetTypedPerFilterConfig()["envoy.filters.http.cors"]
	if !ok {
		return nil
	}
	c := &cors.CorsPolicy{}
	if err := a.UnmarshalTo(c); err != nil {
		t.Fatalf("route %s: the CORS filter's configuration: %v", r.Name, err)
	}
	return c
}

// percent is a fractional percentage in percent.
func percent(p *typev3.FractionalPercent) float64 {
	if p == nil {
		return 0
	}
	per := map[typev3.FractionalPercent_DenominatorType]float64{
		typev3.FractionalPercent_HUNDRED: 100, typev3.FractionalPercent_TEN_THOUSAND: 10000, typev3.FractionalPercent_MILLION: 1000000,
	}[p.Denominator]
	return float64(p.Numerator) * 100 / per
}

// describeFeatures is the table's account of a route's fault, CORS policy
// and header operations ("" when it has none).
func describeFeatures(t *testing.T, r *route.Route) string {
	var parts []string
	if f := routeFault(t, r); f != nil {
		if d := f.GetDelay(); d != nil {
			parts = append(parts, fmt.Sprintf("fault delay %s to %g%%", d.GetFixedDelay().AsDuration(), percent(d.GetPercentage())))
		}
		if a := f.GetAbort(); a != nil {
			parts = append(parts, fmt.Sprintf("fault abort HTTP %d to %g%%", a.GetHttpStatus(), percent(a.GetPercentage())))
		}
	}
	if c := routeCORS(t, r); c != nil {
		var origins []string
		for _, m := range c.GetAllowOriginStringMatch() {
			origins = append(origins, m.GetExact()+m.GetPrefix()+m.GetSafeRegex().GetRegex())
		}
		parts = append(parts, fmt.Sprintf("cors origins %s methods %s headers %s expose %s max-age %ss credentials %v",
			strings.Join(origins, ","), c.GetAllowMethods(), c.GetAllowHeaders(), c.GetExposeHeaders(), c.GetMaxAge(), c.GetAllowCredentials().GetValue()))
	}
	if ops := headerOpsOf(r.GetRequestHeadersToAdd(), r.GetRequestHeadersToRemove()); ops != "" {
		parts = append(parts, "request headers "+ops)
	}
	if ops := headerOpsOf(r.GetResponseHeadersToAdd(), r.GetResponseHeadersToRemove()); ops != "" {
		parts = append(parts, "response headers "+ops)
	}
	return strings.Join(parts, ", ")
}

// headerOpsOf writes header operations as "set k=v add k=v remove k".
func headerOpsOf(add []*core.HeaderValueOption, remove []string) string {
	var parts []string
	for _, h := range add {
		verb := "add"
		if h.GetAppendAction() == core.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD {
			verb = "set"
		}
		parts = append(parts, fmt.Sprintf("%s %s=%s", verb, h.GetHeader().GetKey(), h.GetHeader().GetValue()))
	}
	sort.Strings(parts)
	for _, h := range remove {
		parts = append(parts, "remove "+h)
	}
	return strings.Join(parts, " ")
}

// checkFeatures compares the fault, CORS policy and header operations of
// the policy's route with the intent: what Envoy will do to the source's
// requests (and their responses) must be what the policy says.
func (p tpFeatures) checkFeatures(t *testing.T, row string, r *route.Route) {
	t.Helper()
	f := routeFault(t, r)
	switch {
	case p.Fault == nil && f != nil:
		t.Errorf("%s: Istio injects a fault (%v); the policy sets none", row, f)
	case p.Fault != nil && f == nil:
		t.Errorf("%s: Istio injects no fault; the policy delays or aborts requests", row)
	case p.Fault != nil:
		if d := p.Fault.Delay; (d == nil) != (f.GetDelay() == nil) {
			t.Errorf("%s: Istio's delay %v, the policy's %v", row, f.GetDelay(), d)
		} else if d != nil {
			want, err := time.ParseDuration(d.FixedDelay)
			if err != nil {
				t.Fatalf("%s: the policy's delay %q: %v", row, d.FixedDelay, err)
			}
			if got := f.GetDelay().GetFixedDelay().AsDuration(); got != want || percent(f.GetDelay().GetPercentage()) != d.Percent {
				t.Errorf("%s: Istio delays %g%% of the requests by %s; the policy delays %g%% by %s", row, percent(f.GetDelay().GetPercentage()), got, d.Percent, want)
			}
		}
		if a := p.Fault.Abort; (a == nil) != (f.GetAbort() == nil) {
			t.Errorf("%s: Istio's abort %v, the policy's %v", row, f.GetAbort(), a)
		} else if a != nil && (f.GetAbort().GetHttpStatus() != a.HTTPStatus || percent(f.GetAbort().GetPercentage()) != a.Percent) {
			t.Errorf("%s: Istio answers %g%% of the requests with HTTP %d; the policy aborts %g%% with %d", row, percent(f.GetAbort().GetPercentage()), f.GetAbort().GetHttpStatus(), a.Percent, a.HTTPStatus)
		}
	}
	c := routeCORS(t, r)
	switch {
	case (p.CORS == nil) != (c == nil):
		t.Errorf("%s: Istio's CORS policy %v; the policy's %v", row, c, p.CORS)
	case c != nil:
		// An origin matches exactly; "*" in the intent is any origin,
		// which only a regex matching everything gives (an exact "*"
		// matches no browser's Origin header).
		var origins, want []string
		for _, m := range c.GetAllowOriginStringMatch() {
			if r := m.GetSafeRegex(); r != nil {
				origins = append(origins, "regex "+r.GetRegex())
				continue
			}
			origins = append(origins, "exact "+m.GetExact())
		}
		for _, o := range p.CORS.AllowOrigins {
			if o == "*" {
				want = append(want, "regex .*")
				continue
			}
			want = append(want, "exact "+o)
		}
		if !slices.Equal(origins, want) {
			t.Errorf("%s: Istio allows origins %v; the policy allows %v", row, origins, want)
		}
		for _, x := range []struct {
			what, got string
			want      []string
		}{
			{"methods", c.GetAllowMethods(), p.CORS.AllowMethods},
			{"headers", c.GetAllowHeaders(), p.CORS.AllowHeaders},
			{"exposed headers", c.GetExposeHeaders(), p.CORS.ExposeHeaders},
		} {
			if x.got != strings.Join(x.want, ",") {
				t.Errorf("%s: Istio's CORS %s are %q; the policy's %v", row, x.what, x.got, x.want)
			}
		}
		if p.CORS.MaxAge != "" {
			want, err := time.ParseDuration(p.CORS.MaxAge)
			if err != nil {
				t.Fatalf("%s: the policy's max age %q: %v", row, p.CORS.MaxAge, err)
			}
			if c.GetMaxAge() != fmt.Sprint(int64(want.Seconds())) {
				t.Errorf("%s: Istio's CORS max age is %qs; the policy's %s", row, c.GetMaxAge(), want)
			}
		}
		if want := p.CORS.AllowCredentials != nil && *p.CORS.AllowCredentials; c.GetAllowCredentials().GetValue() != want {
			t.Errorf("%s: Istio allows credentials = %v; the policy %v", row, c.GetAllowCredentials().GetValue(), want)
		}
	}
	var req, resp *headerOps
	if p.Headers != nil {
		req, resp = p.Headers.Request, p.Headers.Response
	}
	checkHeaderOps(t, row, "request", req, r.GetRequestHeadersToAdd(), r.GetRequestHeadersToRemove())
	checkHeaderOps(t, row, "response", resp, r.GetResponseHeadersToAdd(), r.GetResponseHeadersToRemove())
}

// checkHeaderOps compares a route's header operations with the intent's.
func checkHeaderOps(t *testing.T, row, which string, want *headerOps, add []*core.HeaderValueOption, remove []string) {
	t.Helper()
	if want == nil {
		want = &headerOps{}
	}
	set, appended := map[string]string{}, map[string]string{}
	for _, h := range add {
		if h.GetAppendAction() == core.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD {
			set[h.GetHeader().GetKey()] = h.GetHeader().GetValue()
		} else {
			appended[h.GetHeader().GetKey()] = h.GetHeader().GetValue()
		}
	}
	eq := func(a, b map[string]string) bool { return len(a) == len(b) && fmt.Sprint(a) == fmt.Sprint(b) }
	if !eq(set, want.Set) || !eq(appended, want.Add) {
		t.Errorf("%s: Istio sets %v and adds %v to the %s headers; the policy sets %v and adds %v", row, set, appended, which, want.Set, want.Add)
	}
	got := slices.Sorted(slices.Values(remove))
	if w := slices.Sorted(slices.Values(want.Remove)); !slices.Equal(got, w) {
		t.Errorf("%s: Istio removes %s headers %v; the policy removes %v", row, which, got, w)
	}
}

// tpRoute is the part of a traffic policy's intent that shapes its own
// route: which requests it takes (match), the timeout and the retries.
type tpRoute struct {
	Match   []tpMatch `json:"match"`
	Timeout string    `json:"timeout"`
	Retries *struct {
		Attempts      uint32   `json:"attempts"`
		PerTryTimeout string   `json:"perTryTimeout"`
		RetryOn       []string `json:"retryOn"`
	} `json:"retries"`
}

// tpMatch is one match entry of a traffic policy.
type tpMatch struct {
	URIPrefix string            `json:"uriPrefix"`
	URIExact  string            `json:"uriExact"`
	URIRegex  string            `json:"uriRegex"`
	Method    string            `json:"method"`
	Headers   map[string]string `json:"headers"`
}

// expectedMatches are the request conditions Envoy must match for the
// policy, as routeMatch writes them, from the intent's match entries (the
// source namespaces and workload labels Istio applies when it picks the
// sidecar's routes, not in Envoy's match). No entry: every request.
func (p tpRoute) expectedMatches() []string {
	if len(p.Match) == 0 {
		return []string{"prefix /"}
	}
	var out []string
	for _, m := range p.Match {
		var parts []string
		switch {
		case m.URIExact != "":
			parts = append(parts, "exact "+m.URIExact)
		case m.URIPrefix != "":
			parts = append(parts, "prefix "+m.URIPrefix)
		case m.URIRegex != "":
			parts = append(parts, "regex "+m.URIRegex)
		default:
			parts = append(parts, "prefix /")
		}
		if m.Method != "" {
			parts = append(parts, ":method="+m.Method)
		}
		for _, k := range sortedKeys(m.Headers) {
			parts = append(parts, k+"="+m.Headers[k])
		}
		out = append(out, strings.Join(parts, " "))
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// routeMatch is what an Envoy route matches: its path condition, then
// its header conditions (exact values), sorted; a condition of another
// kind is written as such, so it never equals an intent's.
func routeMatch(r *route.Route) string {
	m := r.GetMatch()
	var parts []string
	switch {
	case m.GetSafeRegex() != nil:
		parts = append(parts, "regex "+m.GetSafeRegex().GetRegex())
	case m.GetPath() != "":
		parts = append(parts, "exact "+m.GetPath())
	case m.GetPathSeparatedPrefix() != "":
		parts = append(parts, "path-separated-prefix "+m.GetPathSeparatedPrefix())
	default:
		parts = append(parts, "prefix "+m.GetPrefix())
	}
	var headers []string
	for _, h := range m.GetHeaders() {
		sm := h.GetStringMatch()
		if sm.GetExact() == "" || h.GetInvertMatch() {
			headers = append(headers, fmt.Sprintf("%s~%v", h.Name, h.GetHeaderMatchSpecifier()))
			continue
		}
		headers = append(headers, h.Name+"="+sm.GetExact())
	}
	sort.Strings(headers)
	return strings.Join(append(parts, headers...), " ")
}

// checkMatches compares the conditions of the Envoy routes named after
// the policy with the intent's match entries: every route must carry one
// of them and, when the policy is alone on its destination (no composed
// overlap takes a share of its requests), every entry must have its route.
func (p tpRoute) checkMatches(t *testing.T, row string, routes []*route.Route, alone bool) {
	t.Helper()
	want := p.expectedMatches()
	var got []string
	for _, r := range routes {
		m := routeMatch(r)
		got = append(got, m)
		if !slices.Contains(want, m) {
			t.Errorf("%s: Istio's route %s matches %q; the policy's match entries are %q", row, r.Name, m, want)
		}
	}
	sort.Strings(got)
	got = slices.Compact(got)
	if alone && !slices.Equal(got, want) {
		t.Errorf("%s: Istio's routes of the policy match %q; the policy's match entries are %q", row, got, want)
	}
}

// checkRoute compares the timeout and retries of the policy's own route
// (not an overlap of composed policies) with the intent: no timeout means
// none (Istio's 0s, not Envoy's 15 s); retries, when the policy sets them,
// with the attempts, per-try timeout and conditions it names (a status
// code becomes Envoy's retriable-status-codes with that code).
func (p tpRoute) checkRoute(t *testing.T, row string, a *route.RouteAction) {
	t.Helper()
	var want time.Duration
	if p.Timeout != "" {
		d, err := time.ParseDuration(p.Timeout)
		if err != nil {
			t.Fatalf("%s: the policy's timeout %q: %v", row, p.Timeout, err)
		}
		want = d
	}
	if got := a.GetTimeout().AsDuration(); got != want {
		t.Errorf("%s: Istio times requests out after %s; the policy's timeout is %s", row, got, want)
	}
	r := p.Retries
	if r == nil {
		return
	}
	rp := a.GetRetryPolicy()
	if r.Attempts == 0 {
		if rp != nil && rp.GetNumRetries().GetValue() != 0 {
			t.Errorf("%s: Istio retries %d times; the policy turns retries off (attempts 0)", row, rp.GetNumRetries().GetValue())
		}
		return
	}
	if got := rp.GetNumRetries().GetValue(); got != r.Attempts {
		t.Errorf("%s: Istio retries %d times; the policy %d", row, got, r.Attempts)
	}
	if r.PerTryTimeout != "" {
		d, err := time.ParseDuration(r.PerTryTimeout)
		if err != nil {
			t.Fatalf("%s: the policy's per-try timeout %q: %v", row, r.PerTryTimeout, err)
		}
		if got := rp.GetPerTryTimeout().AsDuration(); got != d {
			t.Errorf("%s: Istio's per-try timeout is %s; the policy's %s", row, got, d)
		}
	}
	if len(r.RetryOn) == 0 {
		return
	}
	var conds []string
	var codes []uint32
	for _, on := range r.RetryOn {
		var code uint32
		if _, err := fmt.Sscanf(on, "%d", &code); err == nil && fmt.Sprint(code) == on {
			codes = append(codes, code)
			conds = append(conds, "retriable-status-codes")
			continue
		}
		conds = append(conds, on)
	}
	sort.Strings(conds)
	conds = slices.Compact(conds)
	got := strings.Split(rp.GetRetryOn(), ",")
	sort.Strings(got)
	got = slices.Compact(got)
	if !slices.Equal(got, conds) {
		t.Errorf("%s: Istio retries on %v; the policy on %v", row, got, conds)
	}
	gotCodes := slices.Sorted(slices.Values(rp.GetRetriableStatusCodes()))
	slices.Sort(codes)
	if !slices.Equal(gotCodes, slices.Compact(codes)) {
		t.Errorf("%s: Istio retries the status codes %v; the policy %v", row, gotCodes, codes)
	}
}
