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
