package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition/compositiontest"
)

// refusedForNoShared fails the test unless err is noShared's refusal.
func refusedForNoShared(t *testing.T, doing string, err error) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "Engine.Shared is nil") || !strings.Contains(err.Error(), "Nothing was written") {
		t.Fatalf("%s without Shared: %v, want the refusal naming Engine.Shared", doing, err)
	}
}

// hookOwner is a traffic policy contributing "route-of-<name>" to the
// composed VirtualService hookEntry names in cluster.
func hookOwner(name string) Owner {
	return Owner{Kind: "traffic-policy", Name: name, ID: "id-" + name, Composition: &Composition{
		Contribution: compositiontest.Part("route-of-" + name), Composer: compositiontest.Composer{}}}
}

func hookEntry(cluster string) Desired {
	return Desired{Entry: Entry{Cluster: cluster, APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "istio-system", Name: "tp-user.global", Digest: "c"},
		Manifest: map[string]any{}}
}

// An engine without Shared (no composition registered) refuses every
// composed write, release and refresh, naming the fix; the object
// another engine composed stays as it was: never rewritten, released or
// read without its contributions.
func TestComposedIntentWithoutSharedRefused(t *testing.T) {
	bare, fc := newFakeEngine(t, "east")
	ctx := context.Background()
	d := hookEntry("east")
	// Composed by another engine: a's contribution and route.
	key := hookOwner("a").ContributionKey()
	gvr, err := resourceFor(d.APIVersion, d.Kind)
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": d.APIVersion, "kind": d.Kind,
		"spec": map[string]any{"hosts": []any{"user.global"}, "routes": []any{"route-of-a"}}}}
	obj.SetNamespace(d.Namespace)
	obj.SetName(d.Name)
	obj.SetLabels(map[string]string{LabelManagedBy: ManagedByValue, key: "id-a"})
	obj.SetAnnotations(map[string]string{key: "route-of-a"})
	obj.SetUID(nextUID())
	obj.SetResourceVersion("1")
	if err := fc["east"].Tracker().Create(gvr, obj, d.Namespace); err != nil {
		t.Fatal(err)
	}
	applied := []Entry{d.Entry}
	_, err = bare.Apply(ctx, hookOwner("b"), []Desired{d}, nil)
	refusedForNoShared(t, "apply", err)
	_, err = bare.Delete(ctx, hookOwner("a"), applied)
	refusedForNoShared(t, "delete", err)
	vs := live(t, fc["east"], d.Entry)
	if vs == nil {
		t.Fatal("the composed object was deleted by an engine without Shared")
	}
	if routes, _, _ := unstructuredSlice(vs.Object, "spec", "routes"); fmt.Sprint(routes) != "[route-of-a]" || vs.GetResourceVersion() != "1" {
		t.Fatalf("routes %v after the refused writes, want [route-of-a]", routes)
	}
	vsKind := schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}
	_, errs := bare.Read(ctx, hookOwner("a"), []schema.GroupVersionKind{vsKind}, []string{"east"}, applied)
	if len(errs) == 0 {
		t.Fatal("refresh without Shared: no error, want the refusal")
	}
	refusedForNoShared(t, "refresh", errs[0])
}

// On a pull cluster too: the publish and the plan's check are refused.
func TestPullComposedWithoutSharedRefused(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	ctx := context.Background()
	a := hookOwner("a")
	d := hookEntry("onprem")
	_, err := e.Apply(ctx, a, []Desired{d}, nil)
	refusedForNoShared(t, "publish", err)
	errs, _ := e.PlanErrors(ctx, a, []Entry{d.Entry})
	if len(errs) == 0 {
		t.Fatal("plan check without Shared: no error, want the refusal")
	}
	refusedForNoShared(t, "plan check", errs[0])
}

// recordingShared is a Shared that composes nothing and records what the
// engine asked it: "compose <object> remove=<bool>" and "drifted
// <object>"; DriftedFrom answers drifted.
type recordingShared struct {
	Shared
	calls   *[]string
	drifted bool
}

func (r recordingShared) Compose(_ context.Context, _ *Engine, _ dynamic.ResourceInterface, _ Owner, entry Entry, remove bool) *Error {
	*r.calls = append(*r.calls, fmt.Sprintf("compose %s remove=%v", entry.Name, remove))
	return nil
}

func (r recordingShared) DriftedFrom(_ *Engine, _ Owner, entry Entry, _ ComposedObject) bool {
	*r.calls = append(*r.calls, "drifted "+entry.Name)
	return r.drifted
}

// The engine hands every composed write, release and refresh to its
// Shared, and writes nothing of a composed object itself: apply asks
// Compose to set the contribution, destroy to release it, refresh asks
// DriftedFrom, whose answer is the entry's digest (drifted: the plan
// rewrites it).
func TestComposedIntentGoesThroughShared(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	var calls []string
	e.Shared = recordingShared{calls: &calls, drifted: true}
	ctx := context.Background()
	a := hookOwner("a")
	d := hookEntry("east")
	applied, err := e.Apply(ctx, a, []Desired{d}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(applies(fc["east"])) != 0 {
		t.Fatalf("the engine applied a composed object itself: %v", applies(fc["east"]))
	}
	// What a composition leaves: a's contribution on the object.
	seed(t, fc["east"], d.Entry, map[string]string{LabelManagedBy: ManagedByValue, a.ContributionKey(): "id-a"})
	vsKind := schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}
	read, errs := e.Read(ctx, a, []schema.GroupVersionKind{vsKind}, []string{"east"}, applied)
	if len(errs) != 0 || len(read) != 1 || read[0].Digest != digestDrifted {
		t.Fatalf("refresh: %v (%v), want the one entry, drifted as Shared said", read, errs)
	}
	if _, err := e.Delete(ctx, a, applied); err != nil {
		t.Fatal(err)
	}
	want := "[compose tp-user.global remove=false drifted tp-user.global compose tp-user.global remove=true]"
	if got := fmt.Sprint(calls); got != want {
		t.Fatalf("Shared was asked %s, want %s", got, want)
	}
}
