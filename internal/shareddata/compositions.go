package shareddata

import (
	"context"

	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// Compositions is the composition of shared objects (Shared) that the
// provider registers: contributions in annotations, their one verdict
// (verdict.go), composed on a cluster (compose.go) or in a pull cluster's
// artifact (pull_compose.go).
type Compositions struct{}

var _ engine.Shared = Compositions{}

// Compose writes one composed object (compose.go).
func (Compositions) Compose(ctx context.Context, e *engine.Engine, ri dynamic.ResourceInterface, owner engine.Owner, entry engine.Entry, remove bool) *engine.Error {
	return compose(ctx, e, ri, owner, entry, remove)
}

// DriftedFrom judges a composed object as the next writer would
// (compose.go).
func (Compositions) DriftedFrom(e *engine.Engine, owner engine.Owner, entry engine.Entry, obj engine.ComposedObject) bool {
	return composedDriftedFrom(owner, entry, obj)
}

// PublishComposed publishes a composed owner's objects to a pull
// cluster's artifact (pull_compose.go).
func (Compositions) PublishComposed(ctx context.Context, e *engine.Engine, owner engine.Owner, cluster string, a engine.PullArtifact, desired []engine.Desired, prior []engine.Entry, prune bool) (entries, leftovers []engine.Entry, errs []*engine.Error) {
	return publishComposed(ctx, e, owner, cluster, a, desired, prior, prune)
}

// ComposedEntry reads owner's entry of an artifact's composed object
// (pull_compose.go).
func (Compositions) ComposedEntry(e *engine.Engine, owner engine.Owner, en engine.Entry, m map[string]any) (engine.Entry, error) {
	return composedEntry(owner, en, m)
}

// PullComposedErrors checks a composed owner's objects of a pull cluster
// (pull_compose.go).
func (Compositions) PullComposedErrors(ctx context.Context, e *engine.Engine, owner engine.Owner, cluster string, a engine.PullArtifact, entries []engine.Entry) (errs, warns []*engine.Error) {
	return pullComposedErrors(ctx, e, owner, cluster, a, entries)
}
