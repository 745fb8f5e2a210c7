package routing

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Statement is what an intent does to requests, one line per cluster: the
// client cluster of a virtual destination, the source cluster of a
// traffic policy, the enforcing cluster of an access policy. A line that
// depends on a topology fact known only after apply holds an Unknown
// placeholder (translate.IsUnknown).
type Statement map[string]string

// Share is one destination of some requests and its weight among the
// shares it is listed with: a backend cluster within a failover tier, or a
// traffic-shift target (cluster or subset) with its percentage.
type Share struct {
	To     string
	Weight int64
}

// Size is the number of bytes the statement takes in a state file as
// Terraform writes it (JSON, with its keys and quotes), for the state
// budget of docs/performance.md.
func (s Statement) Size() int {
	n := 2 // {}
	for k, v := range s {
		n += len(strconv.Quote(k)) + len(strconv.Quote(v)) + 1 // :
	}
	if len(s) > 1 {
		n += len(s) - 1 // the commas between entries
	}
	return n
}

// sharesString renders shares joined by ", ": each one's name, with its
// percentage when the weights differ. Percentages are rounded by the
// largest remainder, so they sum to 100.
func sharesString(shares []Share, alwaysPercent bool) string {
	equal := true
	for _, s := range shares {
		equal = equal && s.Weight == shares[0].Weight
	}
	parts := make([]string, len(shares))
	if equal && !alwaysPercent {
		for i, s := range shares {
			parts[i] = s.To
		}
		return strings.Join(parts, ", ")
	}
	for i, p := range percentages(shares) {
		parts[i] = shares[i].To + " " + p + "%"
	}
	return strings.Join(parts, ", ")
}

// percentages turns weights into whole percentages that sum to 100 (the
// largest remainders round up; ties go to the earlier share).
func percentages(shares []Share) []string {
	var total int64
	for _, s := range shares {
		total += s.Weight
	}
	out := make([]string, len(shares))
	if total <= 0 {
		for i := range out {
			out[i] = "0"
		}
		return out
	}
	floor := make([]int64, len(shares))
	rem := make([]int64, len(shares))
	left := int64(100)
	for i, s := range shares {
		floor[i] = s.Weight * 100 / total
		rem[i] = s.Weight * 100 % total
		left -= floor[i]
	}
	order := make([]int, len(shares))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return rem[order[a]] > rem[order[b]] })
	for _, i := range order {
		if left == 0 {
			break
		}
		if rem[i] > 0 {
			floor[i]++
			left--
		}
	}
	for i := range out {
		out[i] = strconv.FormatInt(floor[i], 10)
	}
	return out
}

// formatPercent writes a percentage without trailing zeros: 5, 0.5.
func formatPercent(p float64) string {
	return strconv.FormatFloat(p, 'f', -1, 64) + "%"
}

// unknownLine is the line of a cluster whose statement depends on facts
// known only after apply.
func unknownLine(what string) string { return translate.Unknown("routing " + what) }

// select resolves a placement, returning translate.ErrUnknownPlacement as
// is and any other error wrapped with what it was for.
func selectClusters(reg *translate.Registry, p translate.Placement, at translate.Path) ([]string, error) {
	names, err := reg.Select(p, at)
	if err != nil && err != translate.ErrUnknownPlacement {
		return nil, fmt.Errorf("routing: %w", err)
	}
	return names, err
}
