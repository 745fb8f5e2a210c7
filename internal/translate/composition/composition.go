// Package composition is the typed interface between the intents whose
// objects are shared (composed: several traffic policies meet in one
// VirtualService) and the engine that writes those objects.
//
// Each intent stores its part of a shared object, its contribution, in an
// annotation of the object; whoever writes the object recomposes it from
// every contribution found there. The engine (internal/engine, compose.go
// and contributions.go) reads and writes the annotations, decides which
// contributions are trusted, and keeps the ones it cannot read byte for
// byte; a Composer, one per kind of intent, is all it knows of what a
// contribution holds: it decodes an annotation into a typed Contribution,
// composes typed contributions into the object, and says which form of an
// annotation a digest covers. How a contribution is encoded is the
// composer's alone (traffic policies: internal/translate/trafficpolicy,
// composer.go).
package composition

import (
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Contribution is one intent's part in a shared object, as its composer
// reads it. The engine reads only the workspace and name it records; what else it
// holds is for its composer to compose.
type Contribution interface {
	// Workspace is the identity of the Terraform state that wrote it ("",
	// when its writer did not record one).
	Workspace() string
	// Name is the name of the intent it says it is ("" when it records
	// none): a contribution is the intent's whose name its annotation
	// bears, so one filed under another name is not composed (the
	// engine's verdict).
	Name() string
}

// Encoded is a contribution with its encoding: the annotation value that
// stores it on an object, written as it is.
type Encoded struct {
	Contribution
	Raw string
}

// Part is what one intent contributes to the objects it shares: Whole
// for the objects of every cluster, except that a cluster In lists gets
// its own, restricted to what composing there needs (so that it does not
// grow with the fleet).
type Part struct {
	Whole Encoded
	In    map[string]Encoded
}

// For is what the intent stores on its objects in cluster.
func (p Part) For(cluster string) Encoded {
	if e, ok := p.In[cluster]; ok {
		return e
	}
	return p.Whole
}

// Composer is one kind of composed intent, as the engine needs it.
type Composer interface {
	// Decode reads a contribution found on an object, and checks it as
	// strictly as the intent was checked when planned. An error says why
	// it must not be composed: an Unreadable one when it is in a format
	// this build does not read (a newer provider's), which the engine
	// keeps as it is and refuses to write the object over; any other,
	// and the next writer removes it. The contribution is returned even
	// with an error, with what could be read of it (the workspace it
	// names, for messages).
	Decode(raw string) (Contribution, error)
	// Compose renders the object key from contributions (by intent name),
	// each either decoded by Decode without an error or an intent's own
	// (Part). It returns nil when nothing of the object remains.
	Compose(key translate.Key, contributions map[string]Contribution) (map[string]any, error)
	// Targets reports whether c, decoded by Decode without an error,
	// composes alone into an object of key's identity (in any cluster
	// when key.Cluster is empty): only then are a composer's fields on
	// that object the composition's, not drift.
	Targets(key translate.Key, c Contribution) bool
	// Canonical is the form of an encoded contribution that its digest
	// covers: what the intent asks for, without what composes nothing
	// (a kept configuration, the provider version that wrote it), so
	// that neither changes a plan.
	Canonical(raw string) string
}

// Unreadable is Decode's error for a contribution in a format this build
// does not read: Err says which version, and which provider version
// wrote it.
type Unreadable struct{ Err error }

func (u Unreadable) Error() string { return u.Err.Error() }
func (u Unreadable) Unwrap() error { return u.Err }

// Contributions are the contributions of encoded, by name, as Compose
// takes them.
func Contributions(encoded map[string]Encoded) map[string]Contribution {
	out := make(map[string]Contribution, len(encoded))
	for n, e := range encoded {
		out[n] = e.Contribution
	}
	return out
}
