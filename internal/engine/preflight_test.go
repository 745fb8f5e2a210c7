package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

// inNamespace is a desired ServiceEntry of owner in a namespace.
func inNamespace(owner Owner, cluster, namespace, name string) Desired {
	d := serviceEntry(owner, cluster, name)
	d.Namespace = namespace
	d.Manifest["metadata"].(map[string]any)["namespace"] = namespace
	return d
}

// A namespace that does not exist is found before anything is written,
// by a dry-run apply of one object per cluster and namespace that state
// lists nothing in; the error names the cluster, the namespace and the
// object, and nothing is stored anywhere.
func TestMissingNamespacesFoundByADryRun(t *testing.T) {
	e, fc := newFakeEngine(t, "east", "west")
	fc["east"].PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetNamespace() != "users" {
			return false, nil, nil
		}
		return true, nil, apierrors.NewNotFound(schema.GroupResource{Resource: "namespaces"}, "users")
	})
	known := inNamespace(testOwner, "west", "users", "w")
	desired := []Desired{
		serviceEntry(testOwner, "east", "a"),
		inNamespace(testOwner, "east", "users", "b"),
		inNamespace(testOwner, "east", "users", "c"),
		known,
	}
	errs := e.MissingNamespaces(context.Background(), testOwner, desired, []Entry{known.Entry})
	if len(errs) != 1 || errs[0].Cluster != "east" {
		t.Fatalf("want one error, for east's users namespace; got %v", errs.Err())
	}
	var missing *NamespaceMissing
	if !errors.As(errs[0].Err, &missing) || missing.Namespace != "users" || missing.Cluster != "east" {
		t.Fatalf("the error does not say which namespace is missing: %#v", errs[0].Err)
	}
	if !strings.Contains(errs[0].Detail, "Namespace users does not exist in cluster east") || !strings.Contains(errs[0].Object, "users/b") {
		t.Errorf("the error does not name the namespace, the cluster and the object: %s", errs[0])
	}
	for _, c := range []string{"east", "west"} {
		for _, d := range desired {
			if d.Cluster == c && live(t, fc[c], d.Entry) != nil {
				t.Errorf("%s was written by the check", d.Entry)
			}
		}
	}
	if n := len(applies(fc["west"])); n != 0 {
		t.Errorf("west, whose namespace state lists an object in, was asked %d times", n)
	}
	if n := len(applies(fc["east"])); n != 2 {
		t.Errorf("east was asked %d times, want once per namespace (istio-system, users)", n)
	}
}

// An object of a new object's name that is not ours is found before
// anything is written, with the apply's own error (and the adopt_existing
// fix); ours, and objects state already lists, are not read; with
// adopt_existing nothing is refused.
func TestForeignObjectsFoundBeforeWriting(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	taken, ours, listed := serviceEntry(testOwner, "east", "taken"), serviceEntry(testOwner, "east", "ours"), serviceEntry(testOwner, "east", "listed")
	seed(t, fc["east"], taken.Entry, map[string]string{"app": "hand-written"})
	seed(t, fc["east"], ours.Entry, testOwner.Labels())
	desired := []Desired{taken, ours, listed, serviceEntry(testOwner, "east", "new")}
	errs := e.ForeignObjects(context.Background(), testOwner, desired, []Entry{listed.Entry})
	if len(errs) != 1 || !strings.Contains(errs[0].Object, "taken") || !strings.Contains(errs[0].Detail, "adopt_existing") {
		t.Fatalf("want one error, for east/taken, saying how to adopt it; got %v", errs.Err())
	}
	for _, a := range fc["east"].Actions() {
		if a.GetVerb() != "get" {
			t.Errorf("the check did %s %s: it only reads", a.GetVerb(), a.GetResource().Resource)
		}
		if g, ok := a.(k8stesting.GetAction); ok && g.GetName() == "listed" {
			t.Error("the check read an object state lists")
		}
	}
	adopting := testOwner
	adopting.Adopt = true
	if errs := e.ForeignObjects(context.Background(), adopting, desired, nil); len(errs) != 0 {
		t.Fatalf("with adopt_existing: %v", errs.Err())
	}
}

// gets counts the GETs a fake cluster received, and forgets its requests.
func gets(d interface {
	Actions() []k8stesting.Action
	ClearActions()
}) int {
	n := 0
	for _, a := range d.Actions() {
		if a.GetVerb() == "get" {
			n++
		}
	}
	d.ClearActions()
	return n
}

// The apply of a create reads each new object once: what the check before
// writing read (CheckForeignObjects) is what ApplyChecked writes on, new
// objects unpinned and ours (left by an interrupted apply) by their UID.
// A record serves one write of its owner only: a second apply, or another
// owner's, reads again.
func TestApplyCheckedReadsEachNewObjectOnce(t *testing.T) {
	ctx := context.Background()
	e, fc := newFakeEngine(t, "east")
	left := serviceEntry(testOwner, "east", "left")
	seed(t, fc["east"], left.Entry, testOwner.Labels())
	desired := []Desired{serviceEntry(testOwner, "east", "a"), serviceEntry(testOwner, "east", "b"), left}
	fc["east"].ClearActions()
	checked, errs := e.CheckForeignObjects(ctx, testOwner, desired, nil)
	if len(errs) != 0 {
		t.Fatal(errs.Err())
	}
	if n := gets(fc["east"]); n != 3 {
		t.Fatalf("the check read %d objects, want 3", n)
	}
	got, err := e.ApplyChecked(ctx, testOwner, desired, nil, checked)
	if err != nil || len(got) != 3 {
		t.Fatalf("apply: %s, %v", keysOf(got), err)
	}
	if n := gets(fc["east"]); n != 0 {
		t.Errorf("the apply read %d objects the check had just read, want 0", n)
	}
	// Each record is used once.
	other := Owner{Kind: testOwner.Kind, Name: "other", ID: "id-9"}
	if _, err := e.ApplyChecked(ctx, other, []Desired{serviceEntry(other, "east", "c")}, nil, checked); err != nil {
		t.Fatal(err)
	}
	if n := gets(fc["east"]); n != 1 {
		t.Errorf("another owner's apply with this owner's records read %d objects, want 1 (its own)", n)
	}
	if _, err := e.ApplyChecked(ctx, testOwner, desired, nil, checked); err != nil {
		t.Fatal(err)
	}
	if n := gets(fc["east"]); n != 3 {
		t.Errorf("a second apply with the used records read %d objects, want 3 (read again)", n)
	}
}

// An object of ours the check read, replaced by someone else's before the
// apply: the apply names the object by the UID read and is refused, as
// when the apply reads it itself.
func TestApplyCheckedRefusedWhenTheObjectWasReplaced(t *testing.T) {
	ctx := context.Background()
	e, fc := newFakeEngine(t, "east")
	d := serviceEntry(testOwner, "east", "left")
	seed(t, fc["east"], d.Entry, testOwner.Labels())
	checked, errs := e.CheckForeignObjects(ctx, testOwner, []Desired{d}, nil)
	if len(errs) != 0 {
		t.Fatal(errs.Err())
	}
	gvr, err := resourceFor(d.APIVersion, d.Kind)
	if err != nil {
		t.Fatal(err)
	}
	if err := fc["east"].Resource(gvr).Namespace(d.Namespace).Delete(ctx, d.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	seed(t, fc["east"], d.Entry, map[string]string{"app": "hand-written"})
	got, err := e.ApplyChecked(ctx, testOwner, []Desired{d}, nil, checked)
	if !errors.Is(err, errNotOurs) || len(got) != 0 {
		t.Errorf("apply over an object replaced since the check: %s, %v; want refused as not ours, nothing listed", keysOf(got), err)
	}
}
