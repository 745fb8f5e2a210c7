package shareddata

import (
	"context"
	"maps"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/flux/fluxtest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
)

// A push state composing into an object a Flux Kustomization applies
// (the engine's sink_flux.go, asked by compose).

// A traffic policy on a push cluster whose composed object a pull state's
// Kustomization applies there: the plan fails naming the Kustomization
// and the fix, and the apply composes nothing into it.
func TestPushComposeIntoAnObjectFluxAppliesRefused(t *testing.T) {
	e, fc := newEngine("east")
	ctx := context.Background()
	theirs := workspaceOwner("b", "id-b", "team-b")
	en := liveVS(t, fc, "east", flux(map[string]string{theirs.ContributionKey(): "id-b"}, "mesh-team-b"),
		map[string]string{theirs.ContributionKey(): "team-b:route-of-b"})
	fluxtest.Kustomization(t, fc["east"], "mesh-team-b", "oci://registry.example.com/mesh/east", "team-b")
	mine := workspaceOwner("a", "id-a", "team-a")
	errs, _ := e.PlanErrors(ctx, mine, []engine.Entry{en})
	if len(errs) != 1 || !engine.IsFluxApplied(errs[0]) || errs[0].Cluster != "east" ||
		!strings.Contains(errs[0].Detail, "Flux Kustomization flux-system/mesh-team-b") || !strings.Contains(errs[0].Detail, "fight") {
		t.Fatalf("plan errors: %v, want one naming Kustomization flux-system/mesh-team-b and the fight", errs)
	}
	d := enginetest.ComposedEntry()
	d.Cluster = "east"
	if _, err := e.Apply(ctx, mine, []engine.Desired{d}, nil); !engine.IsFluxApplied(err) {
		t.Errorf("apply: %v, want it refused", err)
	}
	if a := enginetest.Live(t, fc["east"], en).GetAnnotations(); a[mine.ContributionKey()] != "" {
		t.Errorf("the apply composed into the object Flux applies: %v", a)
	}
}

// flux is labels with those of Kustomization flux-system/<name>.
func flux(labels map[string]string, name string) map[string]string {
	out := fluxtest.Labels(name)
	maps.Copy(out, labels)
	return out
}
