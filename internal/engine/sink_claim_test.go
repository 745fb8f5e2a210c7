package engine

// Pull artifacts and the states and clusters that publish them: one
// publisher per artifact, no lost update (found by review).

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// Two writers of one artifact with the same publisher, one of them
// publishing while the other's upload is in flight (found by review as
// two states with the same workspace: then the workspace claim in the
// artifact, internal/shareddata's
// TestPullClaimInTheArtifactRefusesASecondState, refuses the second
// state at plan). The tag moves only if no other writer moved it
// during the upload, else the change is made again on what that writer
// published: both writers' objects stay (or the second is refused).
func TestPullConcurrentPublishersOfOneArtifactLoseNoObject(t *testing.T) {
	pr := newPullRegistry(t)
	ctx := context.Background()
	ownerA := Owner{Kind: "virtual-destination", Name: "user", ID: "state-1-instance"}
	ownerB := Owner{Kind: "virtual-destination", Name: "account", ID: "state-2-instance"}

	stateB, _ := newPullEngine(t, pr) // another process, its own Writer

	// State A's push is held at the manifest PUT while state B applies.
	var once sync.Once
	var errB error
	tgA := pr.target("onprem")
	tgA.Transport = roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			once.Do(func() {
				// State B refreshes first: no claim error, the artifact is
				// "its own" (same publisher).
				if _, errs := stateB.Read(ctx, ownerB, nil, []string{"onprem"}, nil); len(errs) > 0 {
					errB = errs[0]
					return
				}
				_, errB = stateB.Apply(ctx, ownerB, []Desired{pullDesired(t, ownerB, "onprem", "account")}, nil)
			})
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	stateA, _ := newFakeEngine(t, "east")
	stateA.Delivery = pullClusters{"onprem": tgA}

	if _, err := stateA.Apply(ctx, ownerA, []Desired{pullDesired(t, ownerA, "onprem", "user")}, nil); err != nil {
		t.Fatalf("state A's apply: %v", err)
	}
	if errB != nil {
		t.Logf("state B was told: %v (the claim works)", errB)
		return
	}
	a, _, err := oci.Fetch(ctx, pr.target("onprem"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range a.Objects {
		keys = append(keys, k)
	}
	if len(a.Objects) != 2 {
		t.Errorf("both states' applies succeeded with no claim error, but the shared artifact holds %v: "+
			"one state's objects were overwritten (want both, or a ClaimedError naming both states)", keys)
	}
}

// Two pull clusters of one state given the same repository (a copied
// clusters entry, or two spellings Docker treats as one) are one artifact:
// each cluster's publish would remove every object of the owner (labels
// do not name the cluster). The apply refuses both (and the plan too:
// provider TestTwoPullClustersOnOneArtifactFailThePlan) (found by review).
func TestTwoPullClustersOnOneArtifactAreRefused(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newFakeEngine(t)
	shared := pr.target("shared")
	e.Delivery = pullClusters{"east": shared, "west": shared}
	ctx := context.Background()
	desired := []Desired{pullDesired(t, testOwner, "east", "a"), pullDesired(t, testOwner, "west", "b")}
	entries, err := e.Apply(ctx, testOwner, desired, nil)
	if err != nil {
		t.Logf("apply refused: %v", err)
		return
	}
	a, _, err := oci.Fetch(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Objects) != 2 {
		t.Errorf("apply returned %s without error, but the shared artifact holds %d object(s): one cluster's objects were removed by the other's publish", keysOf(entries), len(a.Objects))
	}
}
