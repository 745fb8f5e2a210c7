package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
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
