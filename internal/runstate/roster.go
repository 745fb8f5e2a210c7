package runstate

import (
	"maps"
	"sort"
	"sync"
)

// WorkspaceRoster is what this run's mesh_workspace lists, checked against
// the traffic policies planned in the same run in whichever order
// Terraform plans them: a policy the state holds but the roster does not
// list is a plan error, never an orphan the apply releases. It also keeps
// the policy instances the run saw, which become the roster's members.
type WorkspaceRoster struct {
	mu      sync.Mutex
	listed  map[string]bool // nil until a roster is planned
	planned map[string]bool
	// held are the traffic policies this run read, planned or applied (the
	// state holds them; one being destroyed releases its own
	// contribution), with their instance IDs where known.
	held map[string]map[string]bool
	// tokens are the tokens of the rosters planned with a prior state in
	// this run, by identity: a replacement's second plan, which Terraform
	// makes without the prior state, and its apply take over that claim.
	tokens map[string]string
}

// RememberToken records the token a roster planned in this run had.
func (w *WorkspaceRoster) RememberToken(identity, token string) {
	if w == nil || identity == "" || token == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tokens == nil {
		w.tokens = map[string]string{}
	}
	w.tokens[identity] = token
}

// PriorToken is the token remembered for identity, "" if none.
func (w *WorkspaceRoster) PriorToken(identity string) string {
	if w == nil {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.tokens[identity]
}

// Hold records a traffic policy of the state seen in this run, and its
// instance ID when known.
func (w *WorkspaceRoster) Hold(name, id string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == nil {
		w.held = map[string]map[string]bool{}
	}
	if w.held[name] == nil {
		w.held[name] = map[string]bool{}
	}
	if id != "" {
		w.held[name][id] = true
	}
}

// Holds reports whether the instance id of the policy name is held in this
// run: a contribution of it is this state's.
func (w *WorkspaceRoster) Holds(name, id string) bool {
	if w == nil || id == "" {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.held[name][id]
}

// HeldIDs are the instance IDs held in this run.
func (w *WorkspaceRoster) HeldIDs() map[string]bool {
	out := map[string]bool{}
	if w == nil {
		return out
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ids := range w.held {
		maps.Copy(out, ids)
	}
	return out
}

// HeldByName are the instance IDs held in this run, by policy name, in a
// new map.
func (w *WorkspaceRoster) HeldByName() map[string]map[string]bool {
	out := map[string]map[string]bool{}
	if w == nil {
		return out
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, ids := range w.held {
		out[name] = maps.Clone(ids)
	}
	return out
}

// MembersWithHeld returns members (instance ID to name) and the instances
// held so far, in a new map.
func (w *WorkspaceRoster) MembersWithHeld(members map[string]string) map[string]string {
	out := maps.Clone(members)
	if out == nil {
		out = map[string]string{}
	}
	if w == nil {
		return out
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for name, ids := range w.held {
		for id := range ids {
			out[id] = name
		}
	}
	return out
}

// WithHeld returns listed and the policies held so far, in a new set.
func (w *WorkspaceRoster) WithHeld(listed map[string]bool) map[string]bool {
	out := maps.Clone(listed)
	if out == nil {
		out = map[string]bool{}
	}
	if w == nil {
		return out
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for name := range w.held {
		out[name] = true
	}
	return out
}

// List records the roster's names and returns the policies planned so far
// that it does not list; second is set when a roster with another list was
// planned in this run already. (Terraform plans a replaced resource twice,
// so the same list again is the same roster.)
func (w *WorkspaceRoster) List(listed map[string]bool) (unlisted []string, second bool) {
	if w == nil {
		return nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	second = w.listed != nil && !maps.Equal(w.listed, listed)
	w.listed = listed
	for name := range w.planned {
		if !listed[name] {
			unlisted = append(unlisted, name)
		}
	}
	sort.Strings(unlisted)
	return unlisted, second
}

// Plan records a planned traffic policy and reports whether a roster
// planned earlier leaves it out.
func (w *WorkspaceRoster) Plan(name string) (unlisted bool) {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.planned == nil {
		w.planned = map[string]bool{}
	}
	w.planned[name] = true
	return w.listed != nil && !w.listed[name]
}
