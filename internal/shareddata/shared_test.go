package shareddata

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest/fakeapply"
)

// Shared objects: pinning, field managers, drift by content (docs/design.md).

var vsResource = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}

// versionedPatches makes merge and JSON patches of a fake cluster bump the
// object's resourceVersion, as the API server does (the fake's tracker
// leaves it as it was); after runs after each such patch.
func versionedPatches(t *testing.T, d *dynamicfake.FakeDynamicClient, after func(patched *unstructured.Unstructured)) {
	t.Helper()
	def := k8stesting.ObjectReaction(d.Tracker())
	d.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchActionImpl)
		if pa.GetPatchType() == types.ApplyPatchType {
			return false, nil, nil
		}
		_, obj, err := def(a)
		if err != nil {
			return true, nil, err
		}
		u := obj.(*unstructured.Unstructured)
		bumpVersion(t, u)
		if err := d.Tracker().Update(pa.GetResource(), u, pa.GetNamespace()); err != nil {
			return true, nil, err
		}
		if after != nil {
			after(u)
		}
		return true, u, nil
	})
}

// bumpVersion gives u the next resourceVersion.
func bumpVersion(t *testing.T, u *unstructured.Unstructured) {
	t.Helper()
	n, err := strconv.Atoi(u.GetResourceVersion())
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", u.GetResourceVersion(), err)
	}
	u.SetResourceVersion(strconv.Itoa(n + 1))
}

// contribute writes contribution name onto the stored VirtualService as
// another composer would (a concurrent writer): its annotation and label,
// held by a composer, its route, a new resourceVersion.
func contribute(t *testing.T, d *dynamicfake.FakeDynamicClient, en engine.Entry, name string) {
	t.Helper()
	u := enginetest.Live(t, d, en).DeepCopy()
	ann, labels := u.GetAnnotations(), u.GetLabels()
	ann["traffic-policy.mesh-intent.io/"+name] = "route-of-" + name
	labels["traffic-policy.mesh-intent.io/"+name] = "id-" + name
	u.SetAnnotations(ann)
	u.SetLabels(labels)
	routes, _, err := unstructured.NestedSlice(u.Object, "spec", "routes")
	if err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedSlice(u.Object, append(routes, "route-of-"+name), "spec", "routes"); err != nil {
		t.Fatal(err)
	}
	u.SetManagedFields(fakeapply.MetadataFields(u, "terraform-provider-mesh/traffic-policy-composer", metav1.ManagedFieldsOperationApply))
	bumpVersion(t, u)
	if err := d.Tracker().Update(vsResource, u, en.Namespace); err != nil {
		t.Fatal(err)
	}
}

func routesOf(t *testing.T, d *dynamicfake.FakeDynamicClient, en engine.Entry) string {
	t.Helper()
	routes, _, err := unstructured.NestedSlice(enginetest.Live(t, d, en).Object, "spec", "routes")
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(routes)
}

// The restore that removes someone's edit of a composed object and
// applies the composition again is pinned to the version its patch left:
// a contribution written in between is composed (the compose starts again
// from a fresh read), not lost.
func TestComposeRestoreIsPinned(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	if _, err := e.Apply(ctx, enginetest.ComposedOwner("a"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	// The first apply of b finds a field kubectl edit set in the spec.
	applied := 0
	fc["east"].PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.(k8stesting.PatchActionImpl).GetPatchType() != types.ApplyPatchType {
			return false, nil, nil
		}
		if applied++; applied > 1 {
			return false, nil, nil
		}
		_, obj, err := fakeapply.Apply(fc["east"])(a)
		if err != nil {
			return true, nil, err
		}
		u := obj.(*unstructured.Unstructured)
		if err := unstructured.SetNestedField(u.Object, "by-hand", "spec", "extra"); err != nil {
			t.Fatal(err)
		}
		u.SetManagedFields(append(u.GetManagedFields(), metav1.ManagedFieldsEntry{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate,
			FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:extra":{}}}`)}))
		return true, u, fc["east"].Tracker().Update(vsResource, u, d.Namespace)
	})
	// Another state's composer adds c right after the edit is removed.
	once := false
	versionedPatches(t, fc["east"], func(*unstructured.Unstructured) {
		if !once {
			once = true
			contribute(t, fc["east"], d.Entry, "c")
		}
	})
	if _, err := e.Apply(ctx, enginetest.ComposedOwner("b"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	if !once {
		t.Fatal("the edit was not removed: the test did not exercise the restore")
	}
	if got := routesOf(t, fc["east"], d.Entry); got != "[route-of-a route-of-b route-of-c]" {
		t.Fatalf("routes %s: the contribution written during the restore was lost", got)
	}
	if _, has := enginetest.Live(t, fc["east"], d.Entry).Object["spec"].(map[string]any)["extra"]; has {
		t.Fatal("the edited field is still there")
	}
}

// Releasing a contribution forgets it and rewrites the spec in one pinned
// write: cut off before the composer's apply, the object is the
// composition of exactly what it still records, with no settings of the
// released contribution left untracked.
func TestReleaseCutOffAfterForgettingIsConsistent(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	for _, n := range []string{"a", "b"} {
		if _, err := e.Apply(ctx, enginetest.ComposedOwner(n), []engine.Desired{d}, nil); err != nil {
			t.Fatal(err)
		}
	}
	versionedPatches(t, fc["east"], nil)
	fc["east"].PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.(k8stesting.PatchActionImpl).GetPatchType() != types.ApplyPatchType {
			return false, nil, nil
		}
		return true, nil, &url.Error{Op: "Patch", URL: "https://east", Err: fmt.Errorf("connection reset by peer")}
	})
	if _, err := e.Delete(ctx, enginetest.ComposedOwner("b"), []engine.Entry{d.Entry}); err == nil {
		t.Fatal("the cut-off release reported success")
	}
	vs := enginetest.Live(t, fc["east"], d.Entry)
	if _, has := vs.GetAnnotations()["traffic-policy.mesh-intent.io/b"]; has {
		t.Fatalf("b is still recorded (fine) but then its routes must stay: the test expects the forget to have happened; annotations %v", vs.GetAnnotations())
	}
	if got := routesOf(t, fc["east"], d.Entry); got != "[route-of-a]" {
		t.Fatalf("routes %s with only a recorded: the released contribution's settings are left untracked", got)
	}
}

// A composed object released without a composer (an owner read without
// its composition) is an error that says so, never a panic, and nothing
// is written.
func TestReleaseWithoutAComposerIsAnError(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	for _, n := range []string{"a", "b"} {
		if _, err := e.Apply(ctx, enginetest.ComposedOwner(n), []engine.Desired{d}, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := enginetest.Live(t, fc["east"], d.Entry).GetResourceVersion()
	bare := engine.Owner{Kind: "traffic-policy", Name: "b", ID: "id-b", Composition: &engine.Composition{}}
	left, err := e.Delete(ctx, bare, []engine.Entry{d.Entry})
	if err == nil || !strings.Contains(err.Error(), "no composer") || len(left) != 1 {
		t.Fatalf("delete without a composer: left %v, error %v; want the entry kept and an error naming the missing composer", left, err)
	}
	if got := enginetest.Live(t, fc["east"], d.Entry); got.GetResourceVersion() != before || routesOf(t, fc["east"], d.Entry) != "[route-of-a route-of-b]" {
		t.Fatalf("the object was written: version %s (was %s), routes %s", got.GetResourceVersion(), before, routesOf(t, fc["east"], d.Entry))
	}
}

// Composers write under one field manager whatever the field_manager base
// of their state, and a composer of an earlier build (another base) is
// released, pinned to the object's version.
func TestComposersShareOneFieldManagerWhateverTheBase(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	e.FieldManager = "team-a"
	if _, err := e.Apply(ctx, enginetest.ComposedOwner("a"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	// An earlier build of another state, base legacy, composed too.
	u := enginetest.Live(t, fc["east"], d.Entry).DeepCopy()
	u.SetManagedFields(append(u.GetManagedFields(), metav1.ManagedFieldsEntry{Manager: "legacy/traffic-policy-composer", Operation: metav1.ManagedFieldsOperationApply,
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:routes":{}}}`)}))
	if err := fc["east"].Tracker().Update(vsResource, u, d.Namespace); err != nil {
		t.Fatal(err)
	}
	// The fake replaces objects on apply: the release of a manager that
	// applies nothing is emulated (its entry goes, nothing else).
	fc["east"].PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchActionImpl)
		if pa.GetPatchType() != types.ApplyPatchType || pa.PatchOptions.FieldManager != "legacy/traffic-policy-composer" {
			return false, nil, nil
		}
		u := enginetest.Live(t, fc["east"], d.Entry).DeepCopy()
		var kept []metav1.ManagedFieldsEntry
		for _, mf := range u.GetManagedFields() {
			if mf.Manager != pa.PatchOptions.FieldManager {
				kept = append(kept, mf)
			}
		}
		u.SetManagedFields(kept)
		bumpVersion(t, u)
		return true, u, fc["east"].Tracker().Update(vsResource, u, d.Namespace)
	})
	e2 := &engine.Engine{Clients: e.Clients, FieldManager: "team-b", Shared: Compositions{}}
	if _, err := e2.Apply(ctx, enginetest.ComposedOwner("b"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	released := false
	for _, pa := range fakeapply.Applies(fc["east"]) {
		m := pa.PatchOptions.FieldManager
		switch {
		case m == "legacy/traffic-policy-composer":
			released = true
			if !strings.Contains(string(pa.GetPatch()), `"resourceVersion"`) || !strings.Contains(string(pa.GetPatch()), `"uid"`) || strings.Contains(string(pa.GetPatch()), "spec") {
				t.Fatalf("the former composer's release is not an empty apply pinned to uid and resourceVersion: %s", pa.GetPatch())
			}
		case m != "terraform-provider-mesh/traffic-policy-composer":
			t.Fatalf("a composer applied as %q: composers of every base must share one field manager", m)
		}
	}
	if !released {
		t.Fatal("the composer of another field_manager base was not released")
	}
	if got := routesOf(t, fc["east"], d.Entry); got != "[route-of-a route-of-b]" {
		t.Fatalf("routes %s", got)
	}
}
