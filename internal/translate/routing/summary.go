package routing

import (
	"sort"
	"strings"
)

// Aspects of a hostname's routing, in the order a summary lists them: the
// failover order of its virtual destination, the traffic policies'
// shifts and settings, the access policies' verdicts.
const (
	AspectFailover = "failover"
	AspectShift    = "shift"
	AspectAccess   = "access"
)

var aspectOrder = map[string]int{AspectFailover: 0, AspectShift: 1, AspectAccess: 2}

// Part is what one intent says about a host: the aspect, the intent that
// says it (a label such as `mesh_traffic_policy "user-shift"`), and its
// statement.
type Part struct {
	Host, Aspect, Intent string
	Statement            Statement
}

// Summarize gathers parts by host: for each host, one block per intent,
// failover first, then shifts, then access (by intent within an aspect),
// each a heading line "<aspect> <intent>:" and one line per distinct
// statement line, led by the clusters that state it ("east, west: east >
// onprem"), clusters with equal lines sharing one. A statement without
// clusters is "  no cluster". The text ends without a newline.
func Summarize(parts []Part) map[string]string {
	byHost := map[string][]Part{}
	for _, p := range parts {
		byHost[p.Host] = append(byHost[p.Host], p)
	}
	out := make(map[string]string, len(byHost))
	for host, ps := range byHost {
		sort.SliceStable(ps, func(i, j int) bool {
			if aspectOrder[ps[i].Aspect] != aspectOrder[ps[j].Aspect] {
				return aspectOrder[ps[i].Aspect] < aspectOrder[ps[j].Aspect]
			}
			return ps[i].Intent < ps[j].Intent
		})
		var lines []string
		for _, p := range ps {
			lines = append(lines, p.Aspect+" "+p.Intent+":")
			lines = append(lines, groupedLines(p.Statement)...)
		}
		out[host] = strings.Join(lines, "\n")
	}
	return out
}

// groupedLines renders a statement as "  <clusters>: <line>", clusters
// with the same line on one, in the order of their first cluster's name.
func groupedLines(st Statement) []string {
	if len(st) == 0 {
		return []string{"  no cluster"}
	}
	clusters := make([]string, 0, len(st))
	for c := range st {
		clusters = append(clusters, c)
	}
	sort.Strings(clusters)
	byLine := map[string][]string{}
	var order []string
	for _, c := range clusters {
		l := st[c]
		if byLine[l] == nil {
			order = append(order, l)
		}
		byLine[l] = append(byLine[l], c)
	}
	out := make([]string, len(order))
	for i, l := range order {
		out[i] = "  " + strings.Join(byLine[l], ", ") + ": " + l
	}
	return out
}
