package engine

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// What a hand-written VirtualService or DestinationRule says that the
// intent's objects on its host would not (issue 38): adopting deletes it,
// so each such field would be lost without a word. Compared by meaning,
// not byte for byte: a route of the hand-written VirtualService is paired
// with the intent's route of the same match (Istio takes the first route
// that matches), and each field the hand-written route sets (retries,
// timeout, fault, mirror, headers, rewrite, CORS, its destinations and
// weights) must be set to the same value there; a DestinationRule's
// trafficPolicy fields and its subsets' labels and policies must be those
// of the intent's DestinationRule on the host. Durations compare as
// durations ("0.5s" is "500ms"), numbers as numbers, retryOn and lists of
// values as sets, except the lists whose order is their meaning in Istio's
// networking v1 API (orderedLists), compared in order. A destination's
// port is not compared; its headers are.

// lostContent lists, as "<field> = <value> (<what the intent says>; <the
// fix>)", what the hand-written object obj says that ours (the intent's
// objects, or its parts of composed ones, of obj's kind on the same host
// and cluster) do not say alike.
func lostContent(obj map[string]any, ours []map[string]any) []string {
	spec, _ := obj["spec"].(map[string]any)
	var specs []map[string]any
	for _, o := range ours {
		if s, ok := o["spec"].(map[string]any); ok {
			specs = append(specs, s)
		}
	}
	var lost []string
	switch obj["kind"] {
	case "VirtualService":
		for _, proto := range []string{"http", "tcp", "tls"} {
			var theirs []map[string]any
			for _, s := range specs {
				theirs = append(theirs, mapsOf(s[proto])...)
			}
			for i, r := range mapsOf(spec[proto]) {
				lost = append(lost, lostInRoute(fmt.Sprintf("%s[%d]", proto, i), r, theirs)...)
			}
		}
	case "DestinationRule":
		mine := map[string]any{}
		var subsets []map[string]any
		for _, s := range specs {
			flatten("trafficPolicy", s["trafficPolicy"], mine)
			subsets = append(subsets, mapsOf(s["subsets"])...)
		}
		theirs := map[string]any{}
		flatten("trafficPolicy", spec["trafficPolicy"], theirs)
		lost = append(lost, lostLeaves(theirs, mine)...)
		for _, sub := range mapsOf(spec["subsets"]) {
			name, _ := sub["name"].(string)
			var match map[string]any
			for _, o := range subsets {
				if o["name"] == name {
					match = o
					break
				}
			}
			if match == nil {
				continue // a subset the intent does not define: whyNotAdoptable
			}
			theirs, mine := map[string]any{}, map[string]any{}
			for _, f := range []string{"labels", "trafficPolicy"} {
				flatten(fmt.Sprintf("subsets[%s].%s", name, f), sub[f], theirs)
				flatten(fmt.Sprintf("subsets[%s].%s", name, f), match[f], mine)
			}
			lost = append(lost, lostLeaves(theirs, mine)...)
		}
	}
	return lost
}

// lostInRoute compares one hand-written route (at, e.g. "http[0]") with
// the intent's route of the same match among theirs.
func lostInRoute(at string, route map[string]any, theirs []map[string]any) []string {
	key := matchKey(route["match"])
	var pair map[string]any
	for _, t := range theirs {
		if matchKey(t["match"]) == key {
			pair = t
			break
		}
	}
	if pair == nil {
		what := "every request"
		if key != "null" {
			what = "requests matching " + key
		}
		return []string{fmt.Sprintf("%s, the route of %s (no route of the intent's matches them alike; %s)", at, what, fixFor("match"))}
	}
	theirsLeaves, mine := map[string]any{}, map[string]any{}
	for k, v := range route {
		switch k {
		case "name", "match", "route", "delegate":
			continue
		}
		flatten(at+"."+k, v, theirsLeaves)
		flatten(at+"."+k, pair[k], mine)
	}
	lost := lostLeaves(theirsLeaves, mine)
	if want, got := destinationsKey(route), destinationsKey(pair); want != got {
		lost = append(lost, fmt.Sprintf("%s.route = %s (the intent's: %s; %s)", at, want, got, fixFor("route")))
	}
	return lost
}

// matchKey is a route's match conditions as canonical JSON, without the
// conditions' names (labels in Istio's metrics, no part of what matches).
func matchKey(match any) string {
	var out []any
	for _, m := range mapsOf(match) {
		c := map[string]any{}
		for k, v := range m {
			if k != "name" {
				c[k] = v
			}
		}
		out = append(out, c)
	}
	return canonical(out)
}

// destinationsKey is a route's destinations as a sorted list of "host
// [subset] weight [headers]": one destination without a weight takes
// every request; headers are those a destination sets or removes on the
// requests and responses it carries.
func destinationsKey(route map[string]any) string {
	ds := mapsOf(route["route"])
	var out []string
	for _, d := range ds {
		dest, _ := d["destination"].(map[string]any)
		s := fmt.Sprint(dest["host"])
		if sub, ok := dest["subset"].(string); ok && sub != "" {
			s += " subset " + sub
		}
		w, _ := number(d["weight"])
		if len(ds) == 1 && w == 0 {
			w = 100
		}
		s = fmt.Sprintf("%s %g%%", s, w)
		if h, ok := d["headers"].(map[string]any); ok && len(h) > 0 {
			s += " headers " + canonical(h)
		}
		out = append(out, s)
	}
	sort.Strings(out)
	return "[" + strings.Join(out, ", ") + "]"
}

// lostLeaves lists the leaves of theirs that mine does not hold alike.
func lostLeaves(theirs, mine map[string]any) []string {
	var lost []string
	for p, v := range theirs {
		m, ok := mine[p]
		if ok && sameValue(p, v, m) {
			continue
		}
		was := "not set"
		if ok {
			was = canonical(m)
		}
		lost = append(lost, fmt.Sprintf("%s = %s (the intent's: %s; %s)", p, canonical(v), was, fixFor(p)))
	}
	sort.Strings(lost)
	return lost
}

// flatten adds the leaves of v under at to out: a map's fields one by
// one, a list (compared as a set) or a scalar as one leaf. Nothing is added
// for an absent value.
func flatten(at string, v any, out map[string]any) {
	switch x := v.(type) {
	case nil:
	case map[string]any:
		for k, y := range x {
			flatten(at+"."+k, y, out)
		}
	default:
		out[at] = x
	}
}

// sameValue compares two leaves by meaning.
func sameValue(at string, a, b any) bool {
	if strings.HasSuffix(at, ".retryOn") {
		return setOf(strings.Split(fmt.Sprint(a), ",")) == setOf(strings.Split(fmt.Sprint(b), ","))
	}
	if x, ok := number(a); ok {
		y, ok := number(b)
		return ok && x == y
	}
	if s, ok := a.(string); ok {
		t, ok := b.(string)
		if !ok {
			return false
		}
		if d, err := time.ParseDuration(s); err == nil {
			e, err := time.ParseDuration(t)
			return err == nil && d == e
		}
		return s == t
	}
	la, aok := a.([]any)
	lb, bok := b.([]any)
	if aok && bok && orderedList(at) {
		return canonical(la) == canonical(lb)
	}
	if aok && bok {
		var sa, sb []string
		for _, x := range la {
			sa = append(sa, canonical(x))
		}
		for _, x := range lb {
			sb = append(sb, canonical(x))
		}
		return setOf(sa) == setOf(sb)
	}
	return canonical(a) == canonical(b)
}

// orderedLists are the fields whose list is ordered in Istio's networking
// v1 API: localityLbSetting.failoverPriority ranks labels (the first
// matters most), and failover is read in order. Every other list an
// adoption compares (match conditions, retryOn, CORS origins, headers'
// remove) is a set.
var orderedLists = []string{".failoverPriority", ".failover"}

func orderedList(at string) bool {
	for _, f := range orderedLists {
		if strings.HasSuffix(at, f) {
			return true
		}
	}
	return false
}

func setOf(xs []string) string {
	var out []string
	for _, x := range xs {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	sort.Strings(out)
	return strings.Join(out, "\x00")
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case int:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// canonical is v as compact JSON with sorted keys ("null" for nil).
func canonical(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func mapsOf(v any) []map[string]any {
	l, _ := v.([]any)
	var out []map[string]any
	for _, x := range l {
		if m, ok := x.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

// policyAfter completes the fix for a traffic policy's field of a virtual
// destination's DestinationRule: the virtual destination's plan compares
// its own DestinationRule alone, before any policy on it is planned.
const policyAfter = " (a virtual destination's DestinationRule: after the adoption, with a policy on it)"

// fixFor says how to keep a field of a hand-written object: the intent's
// attribute that writes it, or that none does.
func fixFor(field string) string {
	for _, f := range []struct{ part, fix string }{
		{".retries", "set mesh_traffic_policy retries"},
		{".timeout", "set mesh_traffic_policy timeout"},
		{".fault", "set mesh_traffic_policy fault"},
		{".mirror", "set mesh_traffic_policy mirror"},
		{".headers", "set mesh_traffic_policy headers"},
		{".corsPolicy", "set mesh_traffic_policy cors"},
		{"match", "set mesh_traffic_policy match and sources"},
		{"route", "set mesh_traffic_policy traffic_shift"},
		{"connectionPool", "set mesh_traffic_policy connection_pool" + policyAfter},
		{"outlierDetection", "set mesh_virtual_destination failover.outlier_detection (mesh_traffic_policy outlier_detection on a service destination)"},
		{"localityLbSetting", "set mesh_virtual_destination failover"},
		{"loadBalancer", "set mesh_traffic_policy load_balancer" + policyAfter},
		{".tls", "set mesh_traffic_policy tls_mode" + policyAfter},
	} {
		if strings.Contains(field, f.part) {
			return f.fix + ", or remove it from the hand-written object first"
		}
	}
	return "no attribute of the intent writes it: remove it from the hand-written object first, or keep the object (adopt_existing = false)"
}
