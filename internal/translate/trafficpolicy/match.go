package trafficpolicy

import (
	"maps"
	"slices"

	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	networkingapi "istio.io/api/networking/v1alpha3"
)

// cond is one conjunction of request conditions: a request matches when
// every set field matches. A policy selects the union of its conditions:
// one per source namespace and match entry. The zero cond matches every
// request.
type cond struct {
	Namespace string            `json:"ns,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	URIKind   string            `json:"uriKind,omitempty"` // "prefix", "exact", "regex"
	URI       string            `json:"uri,omitempty"`
	Method    string            `json:"method,omitempty"`
	Headers   map[string]string `json:"headers,omitempty"`
}

// conditions turns sources and match into conditions: the cross product
// of the source namespaces (or any) and the match entries (or any), each
// with the workload labels.
func conditions(in Intent) []cond {
	namespaces := in.Sources.Namespaces
	if len(namespaces) == 0 {
		namespaces = []string{""}
	}
	matches := in.Match
	if len(matches) == 0 {
		matches = []Match{{}}
	}
	var out []cond
	seen := map[string]bool{}
	for _, ns := range namespaces {
		for _, m := range matches {
			c := cond{Namespace: ns, Labels: maps.Clone(in.Sources.WorkloadLabels), Method: m.Method, Headers: maps.Clone(m.Headers)}
			switch {
			case m.URIExact != "":
				c.URIKind, c.URI = "exact", m.URIExact
			case m.URIPrefix != "":
				c.URIKind, c.URI = "prefix", m.URIPrefix
			case m.URIRegex != "":
				c.URIKind, c.URI = "regex", m.URIRegex
			}
			if k := c.key(); !seen[k] {
				seen[k] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// key is a canonical form of c (JSON sorts map keys).
func (c cond) key() string {
	b, _ := json.Marshal(c)
	return string(b)
}

// all reports whether c matches every request.
func (c cond) all() bool {
	return c.Namespace == "" && len(c.Labels) == 0 && c.URIKind == "" && c.Method == "" && len(c.Headers) == 0
}

// match renders c as an Istio match request; nil when it matches all.
func (c cond) match() *networkingapi.HTTPMatchRequest {
	if c.all() {
		return nil
	}
	m := &networkingapi.HTTPMatchRequest{SourceNamespace: c.Namespace, SourceLabels: maps.Clone(c.Labels)}
	switch c.URIKind {
	case "exact":
		m.Uri = &networkingapi.StringMatch{MatchType: &networkingapi.StringMatch_Exact{Exact: c.URI}}
	case "prefix":
		m.Uri = &networkingapi.StringMatch{MatchType: &networkingapi.StringMatch_Prefix{Prefix: c.URI}}
	case "regex":
		m.Uri = &networkingapi.StringMatch{MatchType: &networkingapi.StringMatch_Regex{Regex: c.URI}}
	}
	if c.Method != "" {
		m.Method = &networkingapi.StringMatch{MatchType: &networkingapi.StringMatch_Exact{Exact: c.Method}}
	}
	for _, name := range slices.Sorted(maps.Keys(c.Headers)) {
		if m.Headers == nil {
			m.Headers = map[string]*networkingapi.StringMatch{}
		}
		m.Headers[name] = &networkingapi.StringMatch{MatchType: &networkingapi.StringMatch_Exact{Exact: c.Headers[name]}}
	}
	return m
}

// describe renders c for error messages.
func (c cond) describe() string {
	if c.all() {
		return "every request"
	}
	var parts []string
	if c.Namespace != "" {
		parts = append(parts, "namespace "+c.Namespace)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Labels)) {
		parts = append(parts, fmt.Sprintf("workload label %s=%s", k, c.Labels[k]))
	}
	if c.URIKind != "" {
		parts = append(parts, fmt.Sprintf("uri_%s %q", c.URIKind, c.URI))
	}
	if c.Method != "" {
		parts = append(parts, "method "+c.Method)
	}
	for _, k := range slices.Sorted(maps.Keys(c.Headers)) {
		parts = append(parts, fmt.Sprintf("header %s=%s", k, c.Headers[k]))
	}
	return strings.Join(parts, ", ")
}

// overlap is what the translator knows about two conditions together.
type overlap int

const (
	disjoint  overlap = iota // no request matches both
	overlaps                 // the returned condition is exactly the requests matching both
	undecided                // the translator cannot tell (two regexes, a regex and a prefix)
)

// intersect returns the condition matching exactly the requests both a
// and b match. Each field is either unset, equal, or one implies the other;
// otherwise the two are disjoint or, for regular expressions, undecided.
func intersect(a, b cond) (cond, overlap) {
	out := cond{}
	var ok bool
	if out.Namespace, ok = sameOrEither(a.Namespace, b.Namespace); !ok {
		return cond{}, disjoint
	}
	if out.Method, ok = sameOrEither(a.Method, b.Method); !ok {
		return cond{}, disjoint
	}
	if out.Labels, ok = union(a.Labels, b.Labels); !ok {
		return cond{}, disjoint
	}
	if out.Headers, ok = union(a.Headers, b.Headers); !ok {
		return cond{}, disjoint
	}
	kind, uri, overlap := intersectURI(a.URIKind, a.URI, b.URIKind, b.URI)
	if overlap != overlaps {
		return cond{}, overlap
	}
	out.URIKind, out.URI = kind, uri
	return out, overlaps
}

// intersectURI intersects two URI conditions. Envoy matches a regex
// against the whole path (RE2, as Go's regexp), so a regex against an exact
// path is decidable; a regex against a prefix or another regex is not.
func intersectURI(ak, a, bk, b string) (string, string, overlap) {
	switch {
	case ak == "":
		return bk, b, overlaps
	case bk == "":
		return ak, a, overlaps
	case ak == bk && a == b:
		return ak, a, overlaps
	case ak == "regex" && bk == "exact":
		return intersectURI(bk, b, ak, a)
	case ak == "regex" && bk == "prefix":
		return intersectURI(bk, b, ak, a)
	}
	switch ak + "/" + bk {
	case "exact/exact":
		return "", "", disjoint
	case "exact/prefix":
		if strings.HasPrefix(a, b) {
			return ak, a, overlaps
		}
		return "", "", disjoint
	case "prefix/exact":
		return intersectURI(bk, b, ak, a)
	case "prefix/prefix":
		switch {
		case strings.HasPrefix(a, b):
			return ak, a, overlaps
		case strings.HasPrefix(b, a):
			return bk, b, overlaps
		}
		return "", "", disjoint
	case "exact/regex":
		re, err := regexp.Compile(`^(?:` + b + `)$`)
		if err != nil {
			return "", "", undecided
		}
		if re.MatchString(a) {
			return ak, a, overlaps
		}
		return "", "", disjoint
	}
	// prefix/regex, regex/regex (different expressions)
	return "", "", undecided
}

func sameOrEither(a, b string) (string, bool) {
	switch {
	case a == "":
		return b, true
	case b == "" || a == b:
		return a, true
	}
	return "", false
}

// union merges two exact-match maps; a key with two values matches
// nothing.
func union(a, b map[string]string) (map[string]string, bool) {
	if len(a) == 0 && len(b) == 0 {
		return nil, true
	}
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if prev, ok := out[k]; ok && prev != v {
			return nil, false
		}
		out[k] = v
	}
	return out, true
}
