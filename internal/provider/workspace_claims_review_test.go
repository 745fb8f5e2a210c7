package provider

import (
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
)

// Review of issue 36 (claims): staleClaims takes any claim of another
// identity and token that lists only instances this state holds as this
// state's own former identity, and the apply deletes it. A policy handed
// over (`terraform import` here, `terraform state rm` there, the order
// workspace_resource.go names) is held by both states until the other
// state's next apply: when it was that state's only policy (or a team
// moves every policy of a root into this one), the live claim of the
// other state's roster is deleted by this state, and its identity is
// free for any third state to take until that roster applies again.
func TestStaleClaimsSpareALiveStateThatHandedItsPolicyOver(t *testing.T) {
	held := map[string]map[string]bool{"mine": {"id-mine": true}, "ledger": {"id-p": true}} // ledger imported from team-a
	claims := []shareddata.Claim{
		// team-a's live roster (its state still holds the roster), written
		// before its ledger policy was handed over.
		{Cluster: "east", Identity: "team-a", Token: "t-team-a", Members: map[string]string{"id-p": "ledger"}},
	}
	if got := staleClaims(claims, "team-b", "team-b", "t-team-b", held); len(got) != 0 {
		t.Fatalf("another live state's claim is taken as this state's former identity and removed: %+v", got)
	}
}
