package routing

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// Traffic is what a traffic policy does to the requests it selects, per
// source cluster. Every source cluster gets the same Route but for a
// "local" shift entry, which names the source cluster itself.
type Traffic struct {
	Sources map[string]Route
}

// Route is a traffic policy's effect in one source cluster.
type Route struct {
	// When says which requests the policy takes: the sources' namespaces
	// and workload labels, then the match entries (any of them); empty
	// means every request from the cluster.
	When string
	// Shift splits the requests: targets (cluster or subset) with their
	// percentages, merged by target, zero weights dropped, in the order
	// first written. Nil: the destination's own routing.
	Shift []Share
	// Mirror copies Percent percent of the requests to To.
	Mirror *Mirror
	// Timeout, Retries and Fault, written compactly ("" when unset).
	Timeout, Retries, Fault string
}

// Mirror is a traffic policy's mirror.
type Mirror struct {
	To      string
	Percent float64
}

// TrafficPolicy states what a traffic policy does from each source
// cluster, from the intent's documented meaning
// (docs/design/traffic-policy.md): its sources' placement selects the
// source clusters and, when the destination is a virtual destination (vd,
// nil for a Kubernetes service), only the clusters that are its clients,
// since the hostname exists nowhere else. A "local" shift entry goes to
// the source cluster itself. It returns translate.ErrUnknownPlacement when
// a placement selects by labels not known yet.
func TrafficPolicy(in trafficpolicy.Intent, vd *virtualdestination.Intent, reg *translate.Registry) (Traffic, error) {
	sources, err := selectClusters(reg, in.Sources.Placement, translate.Root("sources"))
	if err != nil {
		return Traffic{}, err
	}
	if vd != nil {
		clients, err := selectClusters(reg, vd.Clients.Placement, translate.Root("clients"))
		if err != nil {
			return Traffic{}, err
		}
		isClient := map[string]bool{}
		for _, c := range clients {
			isClient[c] = true
		}
		kept := sources[:0:0]
		for _, c := range sources {
			if isClient[c] {
				kept = append(kept, c)
			}
		}
		sources = kept
	}
	t := Traffic{Sources: make(map[string]Route, len(sources))}
	when := conditions(in)
	for _, c := range sources {
		r := Route{When: when, Timeout: duration(in.Timeout), Retries: retries(in.Retries), Fault: fault(in.Fault)}
		r.Shift = shift(in.TrafficShift, c)
		if m := in.Mirror; m != nil {
			p := 100.0
			if m.Percent != nil {
				p = *m.Percent
			}
			to := m.Cluster
			if to == "" {
				to = m.Subset
			}
			r.Mirror = &Mirror{To: to, Percent: p}
		}
		t.Sources[c] = r
	}
	return t, nil
}

// shift merges the entries by target in source cluster c.
func shift(entries []trafficpolicy.Shift, c string) []Share {
	if len(entries) == 0 {
		return nil
	}
	var out []Share
	at := map[string]int{}
	for _, e := range entries {
		to := e.Cluster
		switch {
		case e.Local:
			to = c
		case e.Subset != "":
			to = e.Subset
		}
		if e.Weight == 0 {
			continue
		}
		if i, ok := at[to]; ok {
			out[i].Weight += int64(e.Weight)
			continue
		}
		at[to] = len(out)
		out = append(out, Share{To: to, Weight: int64(e.Weight)})
	}
	return out
}

// conditions renders which requests the policy takes, in words a reader
// (and the simulation's read-back of a plan) parses one way only:
//
//	[ns a,b] [k=v,k=v] [match | match ...]
//
// the source namespaces, the source workload labels, then the match
// entries (any of them), each its method, its path (`/v2*` a prefix,
// `/v2` exact, `~re` a regular expression) and `headers k=v,k=v`; an
// entry with none of them is `any`. A value holding a character of this
// grammar (space, quote, `|`, `,`, `:`, `=`, `*`, `~`, backslash) or
// empty is written as a Go-quoted string.
func conditions(in trafficpolicy.Intent) string {
	var parts []string
	if ns := in.Sources.Namespaces; len(ns) > 0 {
		sorted := slices.Sorted(slices.Values(ns))
		parts = append(parts, "ns "+strings.Join(sorted, ","))
	}
	if l := in.Sources.WorkloadLabels; len(l) > 0 {
		parts = append(parts, labels(l))
	}
	var matches []string
	for _, m := range in.Match {
		var ms []string
		if m.Method != "" {
			ms = append(ms, word(m.Method))
		}
		switch {
		case m.URIPrefix != "":
			ms = append(ms, word(m.URIPrefix)+"*")
		case m.URIExact != "":
			ms = append(ms, word(m.URIExact))
		case m.URIRegex != "":
			ms = append(ms, "~"+word(m.URIRegex))
		}
		if len(m.Headers) > 0 {
			ms = append(ms, "headers "+labels(m.Headers))
		}
		if len(ms) == 0 {
			ms = append(ms, "any")
		}
		matches = append(matches, strings.Join(ms, " "))
	}
	if len(matches) > 0 {
		parts = append(parts, strings.Join(matches, " | "))
	}
	return strings.Join(parts, " ")
}

// word writes s as one word of the conditions grammar: as it is, or
// Go-quoted when empty or holding one of the grammar's characters.
func word(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\"|,:=*~\\") {
		return strconv.Quote(s)
	}
	return s
}

// labels renders a map as k=v,k=v, sorted by key, each value a word.
func labels(m map[string]string) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + word(m[k])
	}
	return strings.Join(parts, ",")
}

// duration normalises a Go duration ("2000ms" and "2s" read alike).
func duration(s string) string {
	if s == "" || translate.IsUnknown(s) {
		return s
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return s
	}
	return d.String()
}

func retries(r *trafficpolicy.Retries) string {
	if r == nil {
		return ""
	}
	if r.Attempts == 0 {
		return "no retries"
	}
	s := "retries " + strconv.Itoa(r.Attempts)
	if r.PerTryTimeout != "" {
		s += " per " + duration(r.PerTryTimeout)
	}
	if len(r.RetryOn) > 0 {
		on := slices.Compact(slices.Sorted(slices.Values(r.RetryOn)))
		s += " on " + strings.Join(on, ",")
	}
	return s
}

func fault(f *trafficpolicy.Fault) string {
	if f == nil {
		return ""
	}
	var parts []string
	if d := f.Delay; d != nil {
		parts = append(parts, "delay "+formatPercent(d.Percent)+" "+duration(d.FixedDelay))
	}
	if a := f.Abort; a != nil {
		parts = append(parts, "abort "+formatPercent(a.Percent)+" "+strconv.Itoa(a.HTTPStatus))
	}
	return strings.Join(parts, ", ")
}

// String renders a route: "[when: ]shift; mirror ..; timeout ..; retries
// ..; fault ..", or "no routing change" for a policy that only sets
// destination settings (connection pool, load balancer, TLS, headers,
// CORS).
func (r Route) String() string {
	var acts []string
	if len(r.Shift) > 0 {
		acts = append(acts, sharesString(r.Shift, true))
	}
	if r.Mirror != nil {
		acts = append(acts, "mirror "+r.Mirror.To+" "+formatPercent(r.Mirror.Percent))
	}
	if r.Timeout != "" {
		acts = append(acts, "timeout "+r.Timeout)
	}
	for _, s := range []string{r.Retries, r.Fault} {
		if s != "" {
			acts = append(acts, s)
		}
	}
	if len(acts) == 0 {
		acts = append(acts, "no routing change")
	}
	line := strings.Join(acts, "; ")
	if r.When != "" {
		line = r.When + ": " + line
	}
	return line
}

// Statement renders one line per source cluster.
func (t Traffic) Statement() Statement {
	out := make(Statement, len(t.Sources))
	for c, r := range t.Sources {
		out[c] = r.String()
	}
	return out
}
