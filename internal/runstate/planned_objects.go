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
