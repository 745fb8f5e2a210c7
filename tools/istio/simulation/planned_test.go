package simulation

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/tools/istio/internal/oracle"
)

// An example's case carries the routing statement its plan showed: the
// lines a user reads (routing.Statement). TestExamplesAgree judges those
// words by Istio's answer for the objects the plan writes, not by a
// statement computed again from the same intent: a policy's lines are
// read back into the statement's structured form here (plannedTraffic,
// plannedAccess) and take the place of the computed statement in the
// simulation's comparisons with Istio (shift, mirror, timeout, retries,
// fault and source clusters of a traffic policy; enforcing clusters and
// every caller's and request's verdict of an access policy).
// TestPlannedStatementsReadBack checks that reading a line back gives the
// statement that wrote it, for every golden case.

// plannedTraffic reads a traffic policy's statement, one line per source
// cluster ("[conditions: ]action; action...").
func plannedTraffic(t *testing.T, planned routing.Statement) routing.Traffic {
	t.Helper()
	out := routing.Traffic{Sources: map[string]routing.Route{}}
	for c, line := range planned {
		r, err := plannedRoute(line)
		if err != nil {
			t.Fatalf("source %s: the plan's routing line %q: %v", c, line, err)
		}
		out.Sources[c] = r
	}
	return out
}

// plannedRoute reads one line of routing.Route's String.
func plannedRoute(line string) (routing.Route, error) {
	var r routing.Route
	if when, acts, ok := strings.Cut(line, ": "); ok {
		r.When, line = when, acts
	}
	for _, act := range strings.Split(line, "; ") {
		switch {
		case act == "no routing change":
		case strings.HasPrefix(act, "mirror "):
			f := strings.Fields(act)
			if len(f) != 3 {
				return r, fmt.Errorf("mirror %q: want \"mirror <target> <percent>%%\"", act)
			}
			p, err := strconv.ParseFloat(strings.TrimSuffix(f[2], "%"), 64)
			if err != nil {
				return r, fmt.Errorf("mirror %q: %v", act, err)
			}
			r.Mirror = &routing.Mirror{To: f[1], Percent: p}
		case strings.HasPrefix(act, "timeout "):
			r.Timeout = strings.TrimPrefix(act, "timeout ")
		case strings.HasPrefix(act, "retries ") || act == "no retries":
			r.Retries = act
		case strings.HasPrefix(act, "delay ") || strings.HasPrefix(act, "abort "):
			r.Fault = act
		default:
			for _, s := range strings.Split(act, ", ") {
				to, pct, ok := strings.Cut(s, " ")
				w, err := strconv.ParseInt(strings.TrimSuffix(pct, "%"), 10, 64)
				if !ok || !strings.HasSuffix(pct, "%") || err != nil {
					return r, fmt.Errorf("shift %q: want \"<target> <percent>%%, ...\"", act)
				}
				r.Shift = append(r.Shift, routing.Share{To: to, Weight: w})
			}
		}
	}
	return r, nil
}

// plannedAccess reads an access policy's statement, one line per
// enforcing cluster ("allow <ns>/<sa> from <clusters>[; ...]: <rules>", or
// "allow nobody"); each caller's principals are its clusters' trust
// domains in the case's registry.
func plannedAccess(t *testing.T, g *goldenCase, planned routing.Statement) routing.Access {
	t.Helper()
	out := routing.Access{Clusters: map[string]routing.Allow{}}
	for c, line := range planned {
		a, err := plannedAllow(line, func(cluster string) string { return g.cluster(cluster).trustDomain() })
		if err != nil {
			t.Fatalf("cluster %s: the plan's routing line %q: %v", c, line, err)
		}
		out.Clusters[c] = a
	}
	return out
}

// plannedAllow reads one line of routing.Allow's String.
func plannedAllow(line string, trustDomain func(cluster string) string) (routing.Allow, error) {
	var a routing.Allow
	if line == "allow nobody" {
		return a, nil
	}
	rest, ok := strings.CutPrefix(line, "allow ")
	who, what, ok2 := strings.Cut(rest, ": ")
	if !ok || !ok2 {
		return a, fmt.Errorf("want \"allow <callers>: <rules>\" or \"allow nobody\"")
	}
	for _, caller := range strings.Split(who, "; ") {
		id, from, ok := strings.Cut(caller, " from ")
		ns, sa, ok2 := strings.Cut(id, "/")
		if !ok || !ok2 {
			return a, fmt.Errorf("caller %q: want \"<namespace>/<service account> from <clusters>\"", caller)
		}
		c := routing.Caller{Namespace: ns, ServiceAccount: sa, Clusters: strings.Split(from, ", ")}
		a.Callers = append(a.Callers, c)
		for _, cl := range c.Clusters {
			a.Principals = append(a.Principals, trustDomain(cl)+"/ns/"+ns+"/sa/"+sa)
		}
	}
	sort.Strings(a.Principals)
	a.Principals = slices.Compact(a.Principals)
	if what == "any request" {
		return a, nil
	}
	for _, rule := range strings.Split(what, " | ") {
		var r accesspolicy.Rule
		f := strings.Fields(rule)
		for i := 0; i < len(f); i++ {
			switch {
			case f[i] == "port" && i+1 < len(f):
				i++
				for _, p := range strings.Split(f[i], ",") {
					n, err := strconv.Atoi(p)
					if err != nil {
						return a, fmt.Errorf("rule %q: port %q: %v", rule, p, err)
					}
					r.Ports = append(r.Ports, n)
				}
			case strings.HasPrefix(f[i], "/") || strings.HasPrefix(f[i], "*"):
				r.Paths = strings.Split(f[i], ",")
			default:
				r.Methods = strings.Split(f[i], ",")
			}
		}
		a.Rules = append(a.Rules, r)
	}
	return a, nil
}

// checkStatedSettings compares a policy's own route in Istio with the
// statement's timeout, retries and fault: the words the plan shows.
func checkStatedSettings(t *testing.T, source, host string, st routing.Route, r *route.Route) {
	t.Helper()
	a := r.GetRoute()
	if d, err := time.ParseDuration(st.Timeout); err == nil || st.Timeout == "" {
		if got := a.GetTimeout().AsDuration(); got != d {
			t.Errorf("source %s: Istio times requests for %s out after %s; the routing statement (the plan) says %q", source, host, got, "timeout "+st.Timeout)
		}
	}
	if st.Retries != "" {
		got := istioRetries(a.GetRetryPolicy())
		if !strings.Contains(st.Retries, " on ") {
			// No conditions stated: Istio's default ones apply.
			got, _, _ = strings.Cut(got, " on ")
		}
		if got != normalRetries(st.Retries) {
			t.Errorf("source %s: Istio's retries for %s: %q; the routing statement (the plan) says %q", source, host, got, st.Retries)
		}
	}
	if got := istioFault(t, r); got != st.Fault {
		t.Errorf("source %s: Istio injects %q into requests for %s; the routing statement (the plan) says %q", source, host, got, st.Fault)
	}
}

// istioRetries writes Envoy's retry policy in the statement's words
// ("retries 3 per 500ms on 5xx,503", "no retries"), the retriable status
// codes among the conditions, every condition sorted.
func istioRetries(rp *route.RetryPolicy) string {
	n := rp.GetNumRetries().GetValue()
	if rp == nil || n == 0 {
		return "no retries"
	}
	s := fmt.Sprintf("retries %d", n)
	if d := rp.GetPerTryTimeout(); d != nil && d.AsDuration() != 0 {
		s += " per " + d.AsDuration().String()
	}
	var on []string
	for _, c := range strings.Split(rp.GetRetryOn(), ",") {
		if c != "" && c != "retriable-status-codes" {
			on = append(on, c)
		}
	}
	for _, code := range rp.GetRetriableStatusCodes() {
		on = append(on, strconv.Itoa(int(code)))
	}
	if len(on) > 0 {
		s += " on " + strings.Join(slices.Compact(slices.Sorted(slices.Values(on))), ",")
	}
	return s
}

// normalRetries sorts a statement's retry conditions as istioRetries does
// (the statement sorts them as strings already; this keeps the two
// comparable whatever order that is).
func normalRetries(s string) string {
	head, on, ok := strings.Cut(s, " on ")
	if !ok {
		return s
	}
	return head + " on " + strings.Join(slices.Compact(slices.Sorted(slices.Values(strings.Split(on, ",")))), ",")
}

// istioFault writes the route's fault in the statement's words ("delay 5%
// 2s, abort 1% 503"; "" for none).
func istioFault(t *testing.T, r *route.Route) string {
	f := routeFault(t, r)
	if f == nil {
		return ""
	}
	var parts []string
	pct := func(p float64) string { return strconv.FormatFloat(p, 'f', -1, 64) + "%" }
	if d := f.GetDelay(); d != nil {
		parts = append(parts, "delay "+pct(percent(d.GetPercentage()))+" "+d.GetFixedDelay().AsDuration().String())
	}
	if a := f.GetAbort(); a != nil {
		parts = append(parts, fmt.Sprintf("abort %s %d", pct(percent(a.GetPercentage())), a.GetHttpStatus()))
	}
	return strings.Join(parts, ", ")
}

// TestPlannedStatementsReadBack reads every golden case's traffic and
// access statement back as TestExamplesAgree reads a plan's, and writes it
// again: the same lines, or the examples' comparisons would judge words
// the plan never showed.
func TestPlannedStatementsReadBack(t *testing.T) {
	n := 0
	for _, dir := range []string{"traffic-policy", "access-policy"} {
		cases, err := loadCases(t, dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range cases {
			if g.failed != "" {
				continue
			}
			var want routing.Statement
			var got routing.Statement
			switch dir {
			case "traffic-policy":
				var tc tpCase
				if err := yaml.Unmarshal(g.raw, &tc); err != nil {
					t.Fatalf("%s: %v", g.name, err)
				}
				if len(tc.Compose) > 0 {
					continue
				}
				want = g.tpRoutings(t, []pd{{tc.Policy, tc.Destination.withBackends(g)}})[0].Statement()
				got = plannedTraffic(t, want).Statement()
			case "access-policy":
				want = g.apRouting(t).Statement()
				a := plannedAccess(t, g, want)
				got = a.Statement()
				stated := g.apRouting(t)
				for c, allow := range stated.Clusters {
					if !slices.Equal(a.Clusters[c].Principals, allow.Principals) {
						t.Errorf("%s/%s: cluster %s: principals read back %v; the statement's %v", dir, g.name, c, a.Clusters[c].Principals, allow.Principals)
					}
				}
			}
			n++
			if !maps.Equal(got, want) {
				t.Errorf("%s/%s: read back and written again: %v; the statement: %v", dir, g.name, got, want)
			}
		}
	}
	if n == 0 {
		t.Fatalf("no golden case read back (%s)", oracle.GoldenDir("traffic-policy"))
	}
	t.Logf("%d statements read back", n)
}
