package simulation

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
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
	if when, acts, ok := cutUnquoted(line, ": "); ok {
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

// plannedConditions are the requests a traffic policy's plan says it
// takes: the conditions part of its lines (the same on every source
// cluster), read back into the intent's fields they state.
type plannedConditions struct {
	Namespaces []string
	Labels     map[string]string
	Match      []tpMatch
}

// withPlannedConditions puts the conditions the plan states in place of
// p's own, so that the simulation's checks of source namespaces,
// workload labels and match entries judge the plan's words.
func withPlannedConditions(t *testing.T, p tpPolicy, planned routing.Statement) tpPolicy {
	t.Helper()
	var when string
	for i, c := range sortedKeys(planned) {
		w, _, found := cutUnquoted(planned[c], ": ")
		if !found {
			w = ""
		}
		if i > 0 && w != when {
			t.Fatalf("the plan's routing lines state different conditions per source cluster: %q and %q", when, w)
		}
		when = w
	}
	pc, err := readConditions(when)
	if err != nil {
		t.Fatalf("the conditions %q of the plan's routing lines: %v", when, err)
	}
	p.Sources.Namespaces, p.Sources.WorkloadLabels, p.Match = pc.Namespaces, pc.Labels, pc.Match
	return p
}

// readConditions reads routing's conditions grammar:
// "[ns a,b] [k=v,...] [match | match ...]", a match being its method,
// its path (`/p*` prefix, `/p` exact, `~re` regex), `headers k=v,...`,
// or `any`; values may be Go-quoted.
func readConditions(when string) (plannedConditions, error) {
	var pc plannedConditions
	words, err := splitUnquoted(when)
	if err != nil {
		return pc, err
	}
	if len(words) >= 2 && words[0] == "ns" {
		pc.Namespaces = strings.Split(words[1], ",")
		words = words[2:]
	}
	isMatchWord := func(w string) bool {
		return w == "|" || w == "any" || w == "headers" || strings.HasPrefix(w, "/") || strings.HasPrefix(w, "~") || strings.HasPrefix(w, `"`) || !strings.Contains(w, "=")
	}
	if len(words) > 0 && !isMatchWord(words[0]) {
		if pc.Labels, err = readPairs(words[0]); err != nil {
			return pc, fmt.Errorf("workload labels %q: %v", words[0], err)
		}
		words = words[1:]
	}
	if len(words) == 0 {
		return pc, nil
	}
	m := tpMatch{}
	empty := true
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w == "|":
			if empty {
				return pc, fmt.Errorf("an empty match entry before word %d", i)
			}
			pc.Match = append(pc.Match, m)
			m, empty = tpMatch{}, true
			continue
		case w == "any":
		case w == "headers" && i+1 < len(words):
			i++
			if m.Headers, err = readPairs(words[i]); err != nil {
				return pc, fmt.Errorf("headers %q: %v", words[i], err)
			}
		case strings.HasPrefix(w, "~"):
			if m.URIRegex, err = readWord(w[1:]); err != nil {
				return pc, fmt.Errorf("regex %q: %v", w, err)
			}
		case strings.HasPrefix(w, "/") || strings.HasPrefix(w, `"`):
			prefix := strings.HasSuffix(w, "*") && (w[0] == '/' || strings.HasSuffix(w, `"*`))
			v, err := readWord(strings.TrimSuffix(w, "*"))
			if !prefix {
				v, err = readWord(w)
			}
			if err != nil {
				return pc, fmt.Errorf("path %q: %v", w, err)
			}
			if prefix {
				m.URIPrefix = v
			} else {
				m.URIExact = v
			}
		case strings.ToUpper(w) == w && !strings.ContainsAny(w, "=,"):
			m.Method = w
		default:
			return pc, fmt.Errorf("word %q is no method, path, headers or any", w)
		}
		empty = false
	}
	if empty {
		return pc, fmt.Errorf("an empty last match entry")
	}
	pc.Match = append(pc.Match, m)
	return pc, nil
}

// readPairs reads k=v,k=v with each value a word (plain, or Go-quoted).
func readPairs(s string) (map[string]string, error) {
	out := map[string]string{}
	for s != "" {
		k, rest, ok := strings.Cut(s, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("want k=v at %q", s)
		}
		var v string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				return nil, err
			}
			v, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			v, rest, _ = strings.Cut(rest, ",")
			rest = "," + rest
			if rest == "," {
				rest = ""
			}
		}
		out[k] = v
		if rest != "" && !strings.HasPrefix(rest, ",") {
			return nil, fmt.Errorf("want , after %s=%s, got %q", k, v, rest)
		}
		s = strings.TrimPrefix(rest, ",")
	}
	return out, nil
}

// readWord reads one whole word: as it is, or Go-quoted.
func readWord(s string) (string, error) {
	if !strings.HasPrefix(s, `"`) {
		return s, nil
	}
	return strconv.Unquote(s)
}

// splitUnquoted splits s at spaces outside Go-quoted strings.
func splitUnquoted(s string) ([]string, error) {
	var out []string
	start, quoted := -1, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case quoted && c == '\\':
			i++
		case c == '"':
			quoted = !quoted
		case c == ' ' && !quoted:
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		if start < 0 {
			start = i
		}
	}
	if quoted {
		return nil, fmt.Errorf("an unterminated quoted value in %q", s)
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out, nil
}

// cutUnquoted is strings.Cut at the first sep outside Go-quoted strings.
func cutUnquoted(s, sep string) (before, after string, found bool) {
	quoted := false
	for i := 0; i < len(s); i++ {
		switch {
		case quoted && s[i] == '\\':
			i++
		case s[i] == '"':
			quoted = !quoted
		case !quoted && strings.HasPrefix(s[i:], sep):
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
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
				if len(want) > 0 {
					// The conditions read back are the intent's.
					read := withPlannedConditions(t, tc.Policy, want)
					ns := slices.Sorted(slices.Values(tc.Policy.Sources.Namespaces))
					if !slices.Equal(read.Sources.Namespaces, ns) || !maps.Equal(read.Sources.WorkloadLabels, tc.Policy.Sources.WorkloadLabels) ||
						!reflect.DeepEqual(read.Match, tc.Policy.Match) {
						t.Errorf("%s/%s: conditions read back: ns %v labels %v match %+v; the intent's: ns %v labels %v match %+v", dir, g.name,
							read.Sources.Namespaces, read.Sources.WorkloadLabels, read.Match, ns, tc.Policy.Sources.WorkloadLabels, tc.Policy.Match)
					}
				}
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

// TestConditionsReadBackWhatRoutingWrites: conditions with values that
// hold the grammar's own characters (a regex, an exact path ending in *,
// a header value with spaces and a comma, a prefix with a colon) are
// written by routing and read back as the intent's; a word the grammar
// does not know is an error, not a guess.
func TestConditionsReadBackWhatRoutingWrites(t *testing.T) {
	reg := translate.NewRegistry(translate.Cluster{Name: "east", Region: "r", Zone: "z", TrustDomain: "east.mesh"})
	cases := []struct {
		ns     []string
		labels map[string]string
		match  []trafficpolicy.Match
	}{
		{ns: []string{"b", "a"}},
		{labels: map[string]string{"app": "web", "version": "v2"}},
		{match: []trafficpolicy.Match{{}}},
		{ns: []string{"accounts"}, labels: map[string]string{"app": "account"}, match: []trafficpolicy.Match{
			{Method: "GET", URIPrefix: "/v2", Headers: map[string]string{"x-canary": "true"}},
			{URIExact: "/health"},
		}},
		{match: []trafficpolicy.Match{
			{Headers: map[string]string{"x-user": "a b, c", "x-team": "=|:"}},
			{URIRegex: `/img/.*\.png`},
			{URIExact: "/literal*"},
			{Method: "POST", URIPrefix: "/a: b"},
			{URIExact: `/quote"d`},
		}},
	}
	for i, c := range cases {
		in := trafficpolicy.Intent{Name: "p", Match: c.match,
			Sources: trafficpolicy.Sources{Placement: translate.Placement{Clusters: []string{"east"}}, Namespaces: c.ns, WorkloadLabels: c.labels}}
		tr, err := routing.TrafficPolicy(in, nil, reg)
		if err != nil {
			t.Fatal(err)
		}
		st := tr.Statement()
		read := withPlannedConditions(t, tpPolicy{}, st)
		var want []tpMatch
		for _, m := range c.match {
			want = append(want, tpMatch{URIPrefix: m.URIPrefix, URIExact: m.URIExact, URIRegex: m.URIRegex, Method: m.Method, Headers: m.Headers})
		}
		ns := slices.Sorted(slices.Values(c.ns))
		if !slices.Equal(read.Sources.Namespaces, ns) || !maps.Equal(read.Sources.WorkloadLabels, c.labels) || !reflect.DeepEqual(read.Match, want) {
			t.Errorf("case %d: %q read back as ns %v labels %v match %+v; want ns %v labels %v match %+v", i, st["east"],
				read.Sources.Namespaces, read.Sources.WorkloadLabels, read.Match, ns, c.labels, want)
		}
	}
	for _, bad := range []string{`GET "/open`, "GET | | /x", "get"} {
		if _, err := readConditions(bad); err == nil {
			t.Errorf("conditions %q read without an error", bad)
		}
	}
}
