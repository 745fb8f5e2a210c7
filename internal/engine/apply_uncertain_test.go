package engine

import (
	"context"
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	k8stesting "k8s.io/client-go/testing"
)

var gvrServiceEntries = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}

// A 504 after the API server committed the write (a slow etcd behind a
// proxy's deadline): the object is there, so it is listed, as unconfirmed.
func TestApplyListsA5xxWriteThatTookEffect(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := fc["east"]
	d.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if _, _, err := applyReactor(d)(a); err != nil {
			return true, nil, err
		}
		return true, nil, apierrors.NewTimeoutError("the request timed out at the gateway", 0)
	})
	entries, err := e.Apply(context.Background(), testOwner, []Desired{serviceEntry(testOwner, "east", "a")}, nil)
	if err == nil {
		t.Fatal("want the 504 reported")
	}
	if got := keysOf(entries); got != "east/a="+DigestUnconfirmed {
		t.Fatalf("inventory %q, want east/a unconfirmed: it exists", got)
	}
}

// A 503 for a write that did not happen: read, absent, not listed.
func TestApplyDropsA5xxWriteThatDidNotHappen(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	failWrites(fc["east"], apierrors.NewServiceUnavailable("the API server is shutting down"))
	entries, err := e.Apply(context.Background(), testOwner, []Desired{serviceEntry(testOwner, "east", "a")}, nil)
	if err == nil {
		t.Fatal("want the 503 reported")
	}
	if len(entries) != 0 {
		t.Fatalf("inventory %s, want nothing: the object is not there", keysOf(entries))
	}
}

// The object read as ours is replaced by someone else's before the write:
// the apply names it by the UID read, the API server refuses, and the
// other object is left alone.
func TestApplyIsPinnedToTheUIDItChecked(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	want := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], want.Entry, testOwner.Labels())
	d := fc["east"]
	replaced := false
	d.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if !replaced {
			replaced = true
			if err := d.Tracker().Delete(gvrServiceEntries, "istio-system", "a"); err != nil {
				return true, nil, err
			}
			seed(t, d, want.Entry, map[string]string{"app": "someone-else"})
		}
		return false, nil, nil
	})
	_, err := e.Apply(context.Background(), testOwner, []Desired{want}, nil)
	if !errors.Is(err, errNotOurs) {
		t.Fatalf("want the write refused as not ours, got %v", err)
	}
	if got := live(t, d, want.Entry).GetLabels(); got["app"] != "someone-else" || got[LabelManagedBy] != "" {
		t.Fatalf("the object that replaced ours was written: %v", got)
	}
}

// Only the API server's immutable-field causes replace an object; other
// Invalid errors that merely mention the word do not.
func TestImmutableRefusedNeedsTheFieldCause(t *testing.T) {
	gk := schema.GroupKind{Group: "", Kind: "ConfigMap"}
	immutable := apierrors.NewInvalid(gk, "r", field.ErrorList{field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set")})
	if !immutableRefused(immutable) {
		t.Fatal("an immutable-field refusal was not recognised")
	}
	other := apierrors.NewInvalid(gk, "r", field.ErrorList{field.Required(field.NewPath("data"), "the immutable flag needs data")})
	if immutableRefused(other) {
		t.Fatal("a required-field error mentioning immutable counts as an immutable-field refusal")
	}
	text := &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: 422, Reason: metav1.StatusReasonInvalid, Message: "immutable"}}
	if immutableRefused(text) {
		t.Fatal("an error text without causes counts as an immutable-field refusal")
	}
	if immutableRefused(fmt.Errorf("immutable")) {
		t.Fatal("a plain error counts as an immutable-field refusal")
	}
}

// An object of ours whose change is refused as immutable is deleted and
// created again (replace). If another writer creates an object of that
// name between the delete and the re-create, the re-create fails and the
// other object is left as it is: the re-create is a create, never an
// apply that would take over whatever holds the name then (issue 36,
// item 8).
func TestReplaceDoesNotTakeOverAnObjectCreatedMeanwhile(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := fc["east"]
	want := serviceEntry(testOwner, "east", "a")
	seed(t, d, want.Entry, testOwner.Labels())
	refused := false
	d.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if !refused {
			refused = true
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "networking.istio.io", Kind: "ServiceEntry"}, "a",
				field.ErrorList{field.Forbidden(field.NewPath("spec", "hosts"), "field is immutable")})
		}
		return false, nil, nil
	})
	d.PrependReactor("delete", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if err := d.Tracker().Delete(gvrServiceEntries, "istio-system", "a"); err != nil {
			return true, nil, err
		}
		seed(t, d, want.Entry, map[string]string{"app": "someone-else"})
		return true, nil, nil
	})
	entries, err := e.Apply(context.Background(), testOwner, []Desired{want}, nil)
	if !refused {
		t.Fatal("the first apply was not refused as immutable: the test did not reach replace")
	}
	if !errors.Is(err, errNotRecreated) {
		t.Fatalf("want the re-create refused (%v), got %v", errNotRecreated, err)
	}
	if got := live(t, d, want.Entry); got.GetLabels()["app"] != "someone-else" || got.GetLabels()[LabelManagedBy] != "" {
		t.Fatalf("the object created meanwhile was written: labels %v", got.GetLabels())
	}
	if len(entries) != 0 {
		t.Fatalf("inventory %s, want nothing: the object there is not ours", keysOf(entries))
	}
}

// A replace re-creates the object with this intent's content, applied by
// its manager: the next apply finds it ours.
func TestReplaceRecreatesTheObject(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := fc["east"]
	want := serviceEntry(testOwner, "east", "a")
	seed(t, d, want.Entry, testOwner.Labels())
	old := live(t, d, want.Entry).GetUID()
	refused := false
	d.PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if !refused {
			refused = true
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "networking.istio.io", Kind: "ServiceEntry"}, "a",
				field.ErrorList{field.Forbidden(field.NewPath("spec", "hosts"), "field is immutable")})
		}
		return false, nil, nil
	})
	if _, err := e.Apply(context.Background(), testOwner, []Desired{want}, nil); err != nil {
		t.Fatalf("replace: %v", err)
	}
	got := live(t, d, want.Entry)
	if got.GetUID() == old || got.GetLabels()[LabelManagedBy] != ManagedByValue {
		t.Fatalf("not re-created as ours: uid %s (was %s), labels %v", got.GetUID(), old, got.GetLabels())
	}
	applied := false
	for _, mf := range got.GetManagedFields() {
		applied = applied || (mf.Operation == metav1.ManagedFieldsOperationApply && mf.Manager == testOwner.FieldManager(e.FieldManager))
	}
	if !applied {
		t.Fatalf("the re-created object is not applied by the intent's manager: %v", got.GetManagedFields())
	}
}
