package runstate

import (
	"fmt"
	"sync"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// PlannedObjects remembers, for one provider process, which intent planned
// each object, so that two intents that would write the same object in one
// cluster (a virtual destination "user" and one named "user-backend" in
// the backend namespace both want ServiceEntry vd-user-backend there) fail
// at plan, naming both, rather than at apply. Composed objects are shared
// by design and are not recorded.
type PlannedObjects struct {
	mu     sync.Mutex
	owners map[string]engine.Owner
	// adopters are, by key, the first intent whose plan named a
	// hand-written object for adoption (FirstAdopter).
	adopters map[string]engine.Owner
}

// FirstAdopter records owner as adopting the hand-written object of key,
// unless another intent named it first in this run, and returns that
// first intent, with whether it is another: a virtual destination and a
// traffic policy on one host both take over its hand-written
// DestinationRule, and the plan's warning names it once.
func (p *PlannedObjects) FirstAdopter(owner engine.Owner, key string) (engine.Owner, bool) {
	if p == nil {
		return owner, false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.adopters == nil {
		p.adopters = map[string]engine.Owner{}
	}
	if first, ok := p.adopters[key]; ok && (first.Kind != owner.Kind || first.Name != owner.Name) {
		return first, true
	}
	p.adopters[key] = owner
	return owner, false
}

// Claim records owner's objects and returns an error naming the first
// object another intent planned.
func (p *PlannedObjects) Claim(owner engine.Owner, entries []engine.Entry) error {
	if p == nil || owner.Composition != nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.owners == nil {
		p.owners = map[string]engine.Owner{}
	}
	for _, e := range entries {
		k := e.StateKey()
		if other, ok := p.owners[k]; ok && (other.Kind != owner.Kind || other.Name != owner.Name) {
			//lint:ignore ST1005 a diagnostic of sentences, shown to the user as written
			return fmt.Errorf("%s and %s would both write %s: an object has one owner. Rename one of them.", intentkind.ResourceOf(other.Kind, other.Name), intentkind.ResourceOf(owner.Kind, owner.Name), e)
		}
	}
	for _, e := range entries {
		p.owners[e.StateKey()] = owner
	}
	return nil
}
