package trafficpolicy

import (
	"maps"
	"slices"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"

	"sort"
	"strings"

	"google.golang.org/protobuf/proto"
	networkingapi "istio.io/api/networking/v1alpha3"
)

// maxCombinations bounds the overlaps computed for one VirtualService.
// Every overlap of k policies needs a route; past this many the policies
// should be merged by hand.
const maxCombinations = 512

// combo is a set of policies (indexes into the group, ascending) with the
// conditions selecting exactly the requests all of them select, and their
// settings merged.
type combo struct {
	members  []int
	conds    []cond
	settings map[string]setting
	owners   map[string]string // setting key -> policy that set it
}

// composeRoutes builds the http routes of one VirtualService (one
// destination in one cluster) from the policies that target it.
//
// A request selected by exactly the policies M must get the settings of all
// of M. Routes are therefore emitted for every set T of policies whose
// conditions intersect, largest sets first: a request matches no route of
// a set larger than M (it misses a member's conditions) and, among sets of
// the size of M, only M's. Intersections are exact (intersect), and the
// same setting with different values on a non-empty intersection is a
// conflict. Routes that can no longer match (every condition already taken
// by an earlier route) are dropped, and everything after a route matching
// all requests. The catch-all default route comes last.
func composeRoutes(group []part) ([]*networkingapi.HTTPRoute, translate.Errors) {
	sort.SliceStable(group, func(i, j int) bool { return group[i].policy < group[j].policy })
	var errs translate.Errors
	levels := [][]combo{nil}
	for i, p := range group {
		c := combo{members: []int{i}, conds: p.conds, settings: map[string]setting{}, owners: map[string]string{}}
		for _, s := range p.route {
			c.settings[s.key] = s
			c.owners[s.key] = p.policy
		}
		levels[0] = append(levels[0], c)
	}
	total := len(levels[0])
	for len(levels[len(levels)-1]) > 0 {
		var next []combo
		for _, c := range levels[len(levels)-1] {
			for j := c.members[len(c.members)-1] + 1; j < len(group); j++ {
				grown, ok, es := grow(c, group, j)
				errs = append(errs, es...)
				if ok {
					next = append(next, grown)
				}
			}
		}
		total += len(next)
		if total > maxCombinations {
			errs.Add(translate.Errorf(translate.Root("match"), "Too many overlapping traffic policies",
				"Traffic policies %s overlap in more than %d ways on %s. Merge some of them or make their match rules disjoint.",
				policyList(group), maxCombinations, group[0].target.host))
			return nil, errs
		}
		levels = append(levels, next)
	}
	if len(errs) > 0 {
		return nil, errs
	}

	var routes []*networkingapi.HTTPRoute
	taken := map[string]bool{}
	for l := len(levels) - 1; l >= 0; l-- {
		for _, c := range levels[l] {
			var conds []cond
			matchesAll := false
			for _, cond := range c.conds {
				if cond.all() {
					matchesAll = true
					break
				}
				if k := cond.key(); !taken[k] {
					taken[k] = true
					conds = append(conds, cond)
				}
			}
			if matchesAll {
				conds = nil
			} else if len(conds) == 0 {
				continue // every request it selects went to an earlier route
			}
			routes = append(routes, assembleRoute(comboName(c, group), group[0].target.host, c.settings, conds))
			if matchesAll {
				return routes, nil
			}
		}
	}
	return append(routes, defaultHTTPRoute(group[0].target.host)), nil
}

// grow adds policy j to combo c: the intersection of their conditions and
// the union of their settings. ok is false when no request matches both.
func grow(c combo, group []part, j int) (combo, bool, translate.Errors) {
	p := group[j]
	var (
		conds []cond
		errs  translate.Errors
		seen  = map[string]bool{}
	)
	for _, a := range c.conds {
		for _, b := range p.conds {
			both, overlap := intersect(a, b)
			switch overlap {
			case undecided:
				other := group[ownerOf(c, group, a)].policy
				errs.Add(translate.Errorf(translate.Root("match"), "Overlapping traffic policies",
					"Traffic policies %q and %q both route requests to %s, and whether their conditions overlap cannot be decided (%s; %s). "+
						"A request matching both would get the settings of only one. Make the match rules disjoint (uri_exact, uri_prefix, method or header values) or merge the policies.",
					other, p.policy, p.target.host, a.describe(), b.describe()))
			case overlaps:
				if k := both.key(); !seen[k] {
					seen[k] = true
					conds = append(conds, both)
				}
			}
		}
	}
	if len(errs) > 0 || len(conds) == 0 {
		return combo{}, false, errs
	}
	grown := combo{
		members:  append(append([]int(nil), c.members...), j),
		conds:    conds,
		settings: map[string]setting{},
		owners:   map[string]string{},
	}
	for k, s := range c.settings {
		grown.settings[k] = s
		grown.owners[k] = c.owners[k]
	}
	for _, s := range p.route {
		prev, ok := grown.settings[s.key]
		if !ok {
			grown.settings[s.key] = s
			grown.owners[s.key] = p.policy
			continue
		}
		if !proto.Equal(prev.frag, s.frag) {
			errs.Add(translate.Errorf(s.at, "Conflicting traffic policies",
				"Traffic policies %q and %q both set %s, with different values, for requests they both select to %s (%s). "+
					"Istio applies one route per request, so one of them would silently lose. Set it in one policy only, give both the same value, or make their sources or match rules disjoint.",
				grown.owners[s.key], p.policy, settingName(s), p.target.host, conds[0].describe()))
		}
	}
	if len(errs) > 0 {
		return combo{}, false, errs
	}
	return grown, true, nil
}

// ownerOf finds the member of c a condition came from, for messages.
func ownerOf(c combo, group []part, cond cond) int {
	k := cond.key()
	for _, m := range c.members {
		for _, own := range group[m].conds {
			if own.key() == k {
				return m
			}
		}
	}
	return c.members[0]
}

// comboName names a route after the policies whose settings it carries.
func comboName(c combo, group []part) string {
	names := make([]string, len(c.members))
	for i, m := range c.members {
		names[i] = group[m].policy
	}
	return strings.Join(names, "+")
}

// settingName is the attribute of a setting as users write it.
func settingName(s setting) string { return s.at.String() }

func policyList(group []part) string {
	var names []string
	for _, p := range group {
		names = append(names, `"`+p.policy+`"`)
	}
	return strings.Join(names, ", ")
}

// composeDestinationRule merges the destination settings of the policies
// that target one DestinationRule (one destination in one cluster). These
// settings hold for every caller, so two policies may set the same one only
// to the same value.
func composeDestinationRule(group []part) (*networkingapi.DestinationRule, translate.Errors) {
	sort.SliceStable(group, func(i, j int) bool { return group[i].policy < group[j].policy })
	var errs translate.Errors
	settings := map[string]setting{}
	owners := map[string]string{}
	for _, p := range group {
		for _, s := range p.dest {
			prev, ok := settings[s.key]
			if !ok {
				settings[s.key] = s
				owners[s.key] = p.policy
				continue
			}
			if !proto.Equal(prev.frag, s.frag) {
				errs.Add(translate.Errorf(s.at, "Conflicting traffic policies",
					"Traffic policies %q and %q both set %s of %s, with different values. "+
						"A DestinationRule setting holds for every caller of the destination in a cluster, so only one value can apply. Set it in one policy only, or give both the same value.",
					owners[s.key], p.policy, settingName(s), p.target.host))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	rule := &networkingapi.DestinationRule{}
	for _, k := range slices.Sorted(maps.Keys(settings)) {
		proto.Merge(rule, settings[k].frag)
	}
	sort.SliceStable(rule.Subsets, func(i, j int) bool { return rule.Subsets[i].Name < rule.Subsets[j].Name })
	return rule, nil
}
