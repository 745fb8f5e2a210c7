package engine

// Switching a cluster between push and pull, and pull beside a failed
// push write (found by review).

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// Push to pull in the same apply that drops an object. Apply's rule is
// "the returned inventory lists exactly what exists afterwards". The
// object push wrote was never in the artifact, so Flux will never delete
// it: the apply prunes it from here, or keeps it in the inventory (found
// by review: it was forgotten, an orphan nothing deleted).
func TestPushToPullSwitchLeavesNoOrphanOfADroppedObject(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newFakeEngine(t, "onprem")
	ctx := context.Background()
	first := []Desired{pullDesired(t, testOwner, "onprem", "a"), pullDesired(t, testOwner, "onprem", "b")}
	prior, err := e.Apply(ctx, testOwner, first, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The operator adds delivery.oci to onprem and drops b in one change.
	e2, _ := newFakeEngine(t)
	e2.Clients = e.Clients
	e2.Delivery = pullClusters{"onprem": pr.target("onprem")}
	entries, err := e2.Apply(ctx, testOwner, first[:1], prior)
	if err != nil {
		t.Fatal(err)
	}
	if live(t, fc["onprem"], first[1].Entry) != nil && !strings.Contains(keysOf(entries), "/b=") {
		t.Errorf("after the push-to-pull switch, b still exists on onprem but the inventory is %s: an orphan nothing will delete", keysOf(entries))
	}
}

// Pull to push (delivery.oci.retired): the apply removes the owner's
// objects from the former artifact, so Flux, still reconciling it, applies
// back nothing push prunes (found by review: the artifact stayed full).
func TestPullToPushSwitchEmptiesTheArtifact(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newFakeEngine(t, "onprem")
	e.Delivery = pullClusters{"onprem": pr.target("onprem")}
	ctx := context.Background()
	first := []Desired{pullDesired(t, testOwner, "onprem", "a"), pullDesired(t, testOwner, "onprem", "b")}
	prior, err := e.Apply(ctx, testOwner, first, nil)
	if err != nil {
		t.Fatal(err)
	}
	e2, _ := newFakeEngine(t)
	e2.Clients = e.Clients // push again: the delivery block says its artifact is retired
	e2.Delivery = retiredClusters{"onprem": pr.target("onprem")}
	if _, err := e2.Apply(ctx, testOwner, first[:1], prior); err != nil {
		t.Fatal(err)
	}
	if live(t, fc["onprem"], first[1].Entry) != nil {
		t.Fatal("b not pruned by push")
	}
	a, _, _ := oci.Fetch(ctx, pr.target("onprem"))
	if _, still := a.Objects["networking.istio.io/ServiceEntry/istio-system/b"]; still {
		t.Errorf("b was pruned by push but the artifact Flux reconciles still holds it (%d objects): Flux re-creates it", len(a.Objects))
	}
}

// Apply's rule: "prune nothing after a failed write: what would be
// pruned may be what traffic still relies on". A pull cluster publishes
// after the push writes, and keeps its stale objects in the artifact when
// one of them failed (found by review: they left the artifact first).
func TestPullPrunesNothingWhenAPushWriteFails(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newPullEngine(t, pr)
	ctx := context.Background()
	old := pullDesired(t, testOwner, "onprem", "old")
	prior, err := e.Apply(ctx, testOwner, []Desired{old}, nil)
	if err != nil {
		t.Fatal(err)
	}
	failWrites(fc["east"], errors.New("east refuses"))
	entries, err := e.Apply(ctx, testOwner, []Desired{pullDesired(t, testOwner, "east", "new")}, prior)
	if err == nil {
		t.Fatal("east's write should fail")
	}
	a, _, _ := oci.Fetch(ctx, pr.target("onprem"))
	if len(a.Objects) == 0 {
		t.Errorf("east's write failed, yet onprem's old object was pruned from the artifact (inventory %s); push keeps stale objects after a failed write", keysOf(entries))
	}
}

// retiredClusters delivers every cluster by push; the named ones were
// pull clusters, published to these artifacts as state "state-a".
type retiredClusters map[string]oci.Target

func (retiredClusters) Pull(string) (PullArtifact, bool, error) { return PullArtifact{}, false, nil }

func (r retiredClusters) Retired(cluster string) (PullArtifact, bool) {
	t, ok := r[cluster]
	return PullArtifact{Target: t, Publisher: "state-a"}, ok
}

// After pull to push, a refresh of the push cluster shows the owner's
// objects its former artifact still holds as drift (the plan updates the
// owner), and an apply removes them.
func TestRetiredArtifactStillHoldingObjectsIsDrift(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newFakeEngine(t, "onprem")
	pull := e.Clients
	e.Delivery = pullClusters{"onprem": pr.target("onprem")}
	ctx := context.Background()
	desired := []Desired{pullDesired(t, testOwner, "onprem", "a")}
	if _, err := e.Apply(ctx, testOwner, desired, nil); err != nil {
		t.Fatal(err)
	}
	e2, _ := newFakeEngine(t)
	e2.Clients = pull
	e2.Delivery = retiredClusters{"onprem": pr.target("onprem")}
	// Push writes a first, as the switch's apply would, then refresh.
	if _, err := e2.Apply(ctx, testOwner, desired, nil); err != nil {
		t.Fatal(err)
	}
	a, _, _ := oci.Fetch(ctx, pr.target("onprem"))
	if len(a.Objects) != 0 {
		t.Fatalf("the apply left %d object(s) in the former artifact", len(a.Objects))
	}
	// Someone re-publishes the owner's object there: drift again.
	if _, err := oci.Publish(ctx, pr.target("onprem"), oci.Objects{"networking.istio.io/ServiceEntry/istio-system/a": desired[0].Manifest}, "state-a"); err != nil {
		t.Fatal(err)
	}
	e3, _ := newFakeEngine(t)
	e3.Clients = pull
	e3.Delivery = retiredClusters{"onprem": pr.target("onprem")}
	got, errs := e3.Read(ctx, testOwner, []schema.GroupVersionKind{serviceEntryKind}, []string{"onprem"}, Entries(desired))
	if len(errs) != 1 || !errors.Is(errs[0], ErrDrift) || !strings.Contains(errs[0].Detail, "former artifact") {
		t.Errorf("refresh: %v, want one drift note naming the former artifact", errs)
	}
	if len(got) != 1 || got[0].Digest != digestDrifted {
		t.Errorf("refreshed %s, want a's entry drifted", keysOf(got))
	}
}
