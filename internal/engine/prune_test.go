package engine

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// deletePreconditions makes the fake's deletes honour their UID and
// resourceVersion preconditions as the API server does (409 Conflict);
// before each delete, meanwhile (if set) runs first, as another client's
// writes that reach the server just before it.
func deletePreconditions(d *dynamicfake.FakeDynamicClient, meanwhile func()) {
	d.PrependReactor("delete", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		da := a.(k8stesting.DeleteActionImpl)
		if meanwhile != nil {
			meanwhile()
		}
		pre := da.DeleteOptions.Preconditions
		if pre == nil {
			return false, nil, nil
		}
		obj, err := d.Tracker().Get(da.GetResource(), da.GetNamespace(), da.GetName())
		if err != nil {
			return true, nil, err
		}
		u := obj.(*unstructured.Unstructured)
		switch {
		case pre.UID != nil && *pre.UID != u.GetUID():
			return true, nil, apierrors.NewConflict(da.GetResource().GroupResource(), da.GetName(),
				fmt.Errorf("Precondition failed: UID in precondition: %s, UID in object meta: %s", *pre.UID, u.GetUID()))
		case pre.ResourceVersion != nil && *pre.ResourceVersion != u.GetResourceVersion():
			return true, nil, apierrors.NewConflict(da.GetResource().GroupResource(), da.GetName(),
				fmt.Errorf("Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", *pre.ResourceVersion, u.GetResourceVersion()))
		}
		return false, nil, nil
	})
}

// recreate deletes an object of a fake cluster and creates another of the
// same name (a new UID) that someone else labelled, as kubectl delete and
// kubectl create would; it returns the new UID.
func recreate(t *testing.T, d *dynamicfake.FakeDynamicClient, e Entry, labels map[string]string) string {
	t.Helper()
	gvr, err := resourceFor(e.APIVersion, e.Kind)
	if err != nil {
		t.Fatal(err)
	}
	if err := d.Tracker().Delete(gvr, e.Namespace, e.Name); err != nil {
		t.Fatal(err)
	}
	seed(t, d, e, labels)
	return string(live(t, d, e).GetUID())
}

// An object prune decided to delete, deleted and created again by someone
// else before prune's delete arrives, survives: the delete names the UID
// prune saw, in a listing taken earlier (refresh, then apply in the same
// process) or in its own read.
func TestPruneSparesAnObjectReplacedBeforeItsDelete(t *testing.T) {
	someoneElse := map[string]string{"app": "theirs"}
	for _, c := range []struct {
		name string
		// listed: a refresh lists old, then someone replaces it, then
		// apply prunes it. Otherwise someone replaces it just before
		// prune's delete, after prune read it.
		listed bool
	}{
		{"between the listing and the delete", true},
		{"between the read and the delete", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, fc := newFakeEngine(t, "east")
			d := fc["east"]
			old := serviceEntry(testOwner, "east", "old")
			seed(t, d, old.Entry, testOwner.Labels())
			var newUID string
			if c.listed {
				if _, errs := e.Read(context.Background(), testOwner, []schema.GroupVersionKind{serviceEntryKind}, []string{"east"}, []Entry{old.Entry}); len(errs) != 0 {
					t.Fatal(errs)
				}
				if _, ok := e.lookup(context.Background(), d, "east", serviceEntryKind, old.Entry.Namespace, old.Entry.Name); !ok {
					t.Fatal("the refresh left no listing of east/old: prune would read it, not take it from a listing")
				}
				newUID = recreate(t, d, old.Entry, someoneElse)
				deletePreconditions(d, nil)
			} else {
				deletePreconditions(d, func() {
					if newUID == "" {
						newUID = recreate(t, d, old.Entry, someoneElse)
					}
				})
			}
			entries, err := e.Apply(context.Background(), testOwner, []Desired{serviceEntry(testOwner, "east", "new")}, []Entry{old.Entry})
			if err != nil {
				t.Fatalf("apply: %v", err)
			}
			got := live(t, d, old.Entry)
			if got == nil || string(got.GetUID()) != newUID {
				t.Fatalf("east/old created again by someone else (uid %s) was deleted by the prune of the one before: now %v", newUID, got)
			}
			if keys := keysOf(entries); keys != "east/new=d-new" {
				t.Fatalf("inventory %s, want only east/new", keys)
			}
		})
	}
}
