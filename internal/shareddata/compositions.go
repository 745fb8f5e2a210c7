package engine

import (
	"context"

	"k8s.io/client-go/dynamic"
)

// Compositions is the composition of shared objects (Shared) that the
// provider registers: contributions in annotations, their one verdict
// (verdict.go), composed on a cluster (compose.go) or in a pull cluster's
// artifact (pull_compose.go).
type Compositions struct{}

var _ Shared = Compositions{}

// Compose writes one composed object (compose.go).
func (Compositions) Compose(ctx context.Context, e *Engine, ri dynamic.ResourceInterface, owner Owner, entry Entry, remove bool) *Error {
	return e.compose(ctx, ri, owner, entry, remove)
}

// DriftedFrom judges a composed object as the next writer would
// (compose.go).
func (Compositions) DriftedFrom(e *Engine, owner Owner, entry Entry, obj ComposedObject) bool {
	return e.composedDriftedFrom(owner, entry, obj)
}

// PublishComposed publishes a composed owner's objects to a pull
// cluster's artifact (pull_compose.go).
func (Compositions) PublishComposed(ctx context.Context, e *Engine, owner Owner, cluster string, a PullArtifact, desired []Desired, prior []Entry, prune bool) (entries, leftovers []Entry, errs []*Error) {
	return e.publishComposed(ctx, owner, cluster, a, desired, prior, prune)
}

// ComposedEntry reads owner's entry of an artifact's composed object
// (pull_compose.go).
func (Compositions) ComposedEntry(e *Engine, owner Owner, en Entry, m map[string]any) (Entry, error) {
	return e.composedEntry(owner, en, m)
}

// PullComposedErrors checks a composed owner's objects of a pull cluster
// (pull_compose.go).
func (Compositions) PullComposedErrors(ctx context.Context, e *Engine, owner Owner, cluster string, a PullArtifact, entries []Entry) (errs, warns []*Error) {
	return e.pullComposedErrors(ctx, owner, cluster, a, entries)
}
