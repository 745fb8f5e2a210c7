package engine

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/client-go/dynamic"
)

// Shared is the composition of objects several intents share, as the
// engine asks for it: which contributions a shared object holds, the one
// verdict on each, and the object they compose to are a protocol above
// the generic engine (docs/design.md, "Shared data above the engine"),
// registered by the provider as Engine.Shared. The engine calls it from
// apply and destroy (Compose), refresh (DriftedFrom) and the pull sink
// (PublishComposed, ComposedEntry, PullComposedErrors). A nil Shared means
// no composition: a composed intent is then refused with an error naming
// the fix (noShared), never written, released or read without its
// contributions.
type Shared interface {
	// Compose writes the composed object entry through ri with owner's
	// contribution set (remove false) or released (remove true).
	Compose(ctx context.Context, e *Engine, ri dynamic.ResourceInterface, owner Owner, entry Entry, remove bool) *Error
	// DriftedFrom reports whether obj, the composed object entry as read,
	// is not what the next writer composes: edited by someone else, or
	// holding a contribution that writer removes.
	DriftedFrom(e *Engine, owner Owner, entry Entry, obj ComposedObject) bool
	// PublishComposed is publishCluster for a composed owner on a pull
	// cluster: its contribution composed into the artifact's objects.
	PublishComposed(ctx context.Context, e *Engine, owner Owner, cluster string, a PullArtifact, desired []Desired, prior []Entry, prune bool) (entries, leftovers []Entry, errs []*Error)
	// ComposedEntry is owner's entry of a composed object m read from an
	// artifact.
	ComposedEntry(e *Engine, owner Owner, en Entry, m map[string]any) (Entry, error)
	// PullComposedErrors are the reasons owner's contributions to entries
	// of a pull cluster cannot be published, and what could not be
	// checked (warns).
	PullComposedErrors(ctx context.Context, e *Engine, owner Owner, cluster string, a PullArtifact, entries []Entry) (errs, warns []*Error)
}

// errNoShared marks the refusal of a composed intent by an engine that
// has no Shared registered.
var errNoShared = errors.New("no composition of shared objects is registered (Engine.Shared is nil)")

// noShared is the refusal of owner's composed object (cluster, and
// object when known) by an engine without Shared, doing what it was
// asked to.
func noShared(owner Owner, cluster, object, doing string) *Error {
	what := "the objects of cluster " + cluster
	if object != "" {
		what = object
	}
	return &Error{Cluster: cluster, Object: object, Summary: doing + " " + what, Err: errNoShared,
		Detail: fmt.Sprintf("%s is shared by several %ss, and this provider's engine has %v: it cannot compose, release or read it without every intent's contribution. "+
			"Nothing was written. This is an internal error of the provider's configuration (Configure registers the composition): report it. "+
			"A program building an engine itself sets Engine.Shared to the composition of shared objects.",
			what, kindWords(owner.Kind), errNoShared)}
}
