package runstate

import (
	"strings"
	"testing"
)

func TestWorkspaceRosterCatchesUnlistedPolicies(t *testing.T) {
	// Policy planned before the roster: the roster reports it.
	r := &WorkspaceRoster{}
	if r.Plan("early") {
		t.Fatal("a policy planned before any roster was reported unlisted")
	}
	unlisted, second := r.List(map[string]bool{"late": true})
	if strings.Join(unlisted, ",") != "early" || second {
		t.Fatalf("roster planned after: unlisted %v (second %v), want [early]", unlisted, second)
	}
	// Policy planned after the roster: the policy reports itself.
	if !r.Plan("stray") || r.Plan("late") {
		t.Fatal("a policy planned after the roster is not checked against it")
	}
	if _, second := r.List(map[string]bool{"late": true}); second {
		t.Fatal("the same roster planned again (a replacement) is reported as a second one")
	}
	if _, second := r.List(map[string]bool{}); !second {
		t.Fatal("a second roster with another list in one run is not reported")
	}
	r.Hold("destroyed", "id-d")
	r.Hold("created", "")
	if held := r.WithHeld(nil); !held["destroyed"] || !held["created"] || len(held) != 2 {
		t.Fatalf("held: %v, want [created destroyed]", held)
	}
	if !r.Holds("destroyed", "id-d") || r.Holds("destroyed", "id-x") || r.Holds("created", "") {
		t.Fatal("holds does not answer by instance")
	}
	if m := r.MembersWithHeld(map[string]string{"id-old": "gone"}); len(m) != 2 || m["id-d"] != "destroyed" || m["id-old"] != "gone" {
		t.Fatalf("members with held: %v", m)
	}
	var none *WorkspaceRoster
	if none.Plan("x") || len(none.WithHeld(nil)) != 0 {
		t.Fatal("without a roster (a rendering), no policy is unlisted")
	}
}
