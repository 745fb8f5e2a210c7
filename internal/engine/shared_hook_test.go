package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// refusedForNoShared fails the test unless err is noShared's refusal.
func refusedForNoShared(t *testing.T, doing string, err error) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "Engine.Shared is nil") || !strings.Contains(err.Error(), "Nothing was written") {
		t.Fatalf("%s without Shared: %v, want the refusal naming Engine.Shared", doing, err)
	}
}

// An engine without Shared (no composition registered) refuses every
// composed write, release and refresh, naming the fix; the object
// another engine composed stays as it was: never rewritten, released or
// read without its contributions.
func TestComposedIntentWithoutSharedRefused(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	ctx := context.Background()
	d := composedEntry()
	applied, err := e.Apply(ctx, composedOwner("a"), []Desired{d}, nil)
	if err != nil {
		t.Fatal(err)
	}
	bare := &Engine{Clients: fc, FieldManager: "test", retryBackoff: noWait}
	_, err = bare.Apply(ctx, composedOwner("b"), []Desired{d}, nil)
	refusedForNoShared(t, "apply", err)
	_, err = bare.Delete(ctx, composedOwner("a"), applied)
	refusedForNoShared(t, "delete", err)
	vs := live(t, fc["east"], d.Entry)
	if vs == nil {
		t.Fatal("the composed object was deleted by an engine without Shared")
	}
	if routes, _, _ := unstructuredSlice(vs.Object, "spec", "routes"); fmt.Sprint(routes) != "[route-of-a]" {
		t.Fatalf("routes %v after the refused writes, want [route-of-a]", routes)
	}
	vsKind := schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}
	_, errs := bare.Read(ctx, composedOwner("a"), []schema.GroupVersionKind{vsKind}, []string{"east"}, applied)
	if len(errs) == 0 {
		t.Fatal("refresh without Shared: no error, want the refusal")
	}
	refusedForNoShared(t, "refresh", errs[0])
}

// On a pull cluster too: the publish and the plan's check are refused.
func TestPullComposedWithoutSharedRefused(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	e.Shared = nil
	ctx := context.Background()
	a := composedOwner("a")
	d := composedOn(t, a, "onprem")
	_, err := e.Apply(ctx, a, []Desired{d}, nil)
	refusedForNoShared(t, "publish", err)
	errs, _ := e.PlanErrors(ctx, a, []Entry{d.Entry})
	if len(errs) == 0 {
		t.Fatal("plan check without Shared: no error, want the refusal")
	}
	refusedForNoShared(t, "plan check", errs[0])
}
