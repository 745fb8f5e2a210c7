// Package compositiontest is a composer of test contributions for the
// tests of the engine and of the composition above it: each contribution
// is a route as a string, composed into a VirtualService that lists them.
package compositiontest

import (
	"sort"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// Composer composes test contributions, each a route as a string, into a
// VirtualService that lists them in name order. Check, when set, reads
// the workspace of a contribution and refuses what it does not accept.
type Composer struct {
	Check func(raw string) (workspace string, err error)
}

// Contribution is a test contribution: a route, and the workspace it
// names.
type Contribution struct{ Raw, WorkspaceName string }

// Workspace is the workspace c names.
func (c Contribution) Workspace() string { return c.WorkspaceName }

// Name is the policy name c records: none.
func (c Contribution) Name() string { return "" }

// Decode reads raw as a Contribution, refused by Check when it is set.
func (t Composer) Decode(raw string) (composition.Contribution, error) {
	if t.Check == nil {
		return Contribution{Raw: raw}, nil
	}
	ws, err := t.Check(raw)
	return Contribution{Raw: raw, WorkspaceName: ws}, err
}

// Compose lists the contributions' routes in name order.
func (Composer) Compose(key translate.Key, contributions map[string]composition.Contribution) (map[string]any, error) {
	names := make([]string, 0, len(contributions))
	for n := range contributions {
		names = append(names, n)
	}
	sort.Strings(names)
	var routes []any
	for _, n := range names {
		routes = append(routes, contributions[n].(Contribution).Raw)
	}
	return map[string]any{"apiVersion": key.APIVersion, "kind": key.Kind,
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace},
		"spec":     map[string]any{"hosts": []any{"user.global"}, "routes": routes}}, nil
}

// Canonical is raw.
func (Composer) Canonical(raw string) string { return raw }

// Targets is true: a test contribution composes into any object.
func (Composer) Targets(translate.Key, composition.Contribution) bool { return true }

// Composers are an engine's composers (Engine.Composers) under which
// test traffic-policy contributions compose into the objects they are on.
var Composers = map[string]composition.Composer{"traffic-policy": Composer{}}

// Part is raw as an intent's own contribution, in every cluster.
func Part(raw string) composition.Part {
	return composition.Part{Whole: composition.Encoded{Contribution: Contribution{Raw: raw}, Raw: raw}}
}
