package shareddata

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest/fakeapply"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition/compositiontest"
)

// restore re-creates the object of en as a backup tool does (Velero,
// `kubectl get -o yaml` applied into a rebuilt cluster): the same
// labels, annotations and spec, a new UID, no managedFields.
func restore(t *testing.T, fc enginetest.Clusters, en engine.Entry) *unstructured.Unstructured {
	t.Helper()
	obj := enginetest.Live(t, fc[en.Cluster], en).DeepCopy()
	gvr, ok := engine.ResourceOf(schema.FromAPIVersionAndKind(en.APIVersion, en.Kind))
	if !ok {
		t.Fatalf("the engine writes no %s", en.Kind)
	}
	if err := fc[en.Cluster].Tracker().Delete(gvr, en.Namespace, en.Name); err != nil {
		t.Fatal(err)
	}
	obj.SetManagedFields(nil)
	obj.SetUID(fakeapply.NextUID())
	obj.SetResourceVersion("1")
	if err := fc[en.Cluster].Tracker().Create(gvr, obj, en.Namespace); err != nil {
		t.Fatal(err)
	}
	return obj
}

// A composed object restored without its managedFields keeps every
// state's contribution, byte for byte, through the next apply of any one
// state: trust is by content (a well-formed contribution with an instance
// label), never by who last wrote the object. Plan and apply agree.
func TestRestoreWithoutManagedFieldsKeepsEveryContribution(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	states := map[string]engine.Owner{}
	for _, n := range []string{"a", "b", "c"} {
		states[n] = workspaceOwner(n, "id-"+n, "team-"+n)
		if _, err := e.Apply(ctx, states[n], []engine.Desired{d}, nil); err != nil {
			t.Fatal(err)
		}
	}
	before := restore(t, fc, d.Entry)
	e.Wrote("east", schema.FromAPIVersionAndKind(d.Entry.APIVersion, d.Entry.Kind))
	found, errs := Contributions(ctx, e, states["a"], []engine.Entry{d.Entry})
	if len(errs) > 0 || len(found) != 3 {
		t.Fatalf("contributions %+v (%v)", found, errs)
	}
	for _, v := range Judge(states["a"], found) {
		if v.Problem() != nil {
			t.Fatalf("plan verdict on the restored contribution %s: %s: %v", v.Name, v.Standing, v.Problem())
		}
	}
	for round, n := range []string{"a", "b", "c", "a"} {
		if _, err := e.Apply(ctx, states[n], []engine.Desired{d}, nil); err != nil {
			t.Fatalf("apply %d of %s after the restore: %v", round, n, err)
		}
		got := enginetest.Live(t, fc["east"], d.Entry)
		if r := routesOf(t, fc["east"], d.Entry); r != "[team-a:route-of-a team-b:route-of-b team-c:route-of-c]" {
			t.Fatalf("apply %d of %s after the restore: routes %s, want every state's", round, n, r)
		}
		for _, m := range []string{"a", "b", "c"} {
			k := "traffic-policy.mesh-intent.io/" + m
			if got.GetAnnotations()[k] != before.GetAnnotations()[k] || got.GetLabels()[k] != before.GetLabels()[k] {
				t.Fatalf("apply %d of %s: contribution %s changed: %q (label %q), restored %q (label %q)", round, n, m,
					got.GetAnnotations()[k], got.GetLabels()[k], before.GetAnnotations()[k], before.GetLabels()[k])
			}
		}
	}
}

// The verdicts the plan shows and the errors the apply returns come from
// one function: a same-name contribution of an instance this state does
// not hold fails both with the same words.
func TestPlanAndApplyVerdictsAgree(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	if _, err := e.Apply(ctx, workspaceOwner("a", "id-old", "team-x"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	other := workspaceOwner("a", "id-new", "team-y")
	found, errs := Contributions(ctx, e, other, []engine.Entry{d.Entry})
	if len(errs) > 0 || len(found) != 1 {
		t.Fatalf("contributions %+v (%v)", found, errs)
	}
	vs := Judge(other, found)
	if vs[0].Standing != Taken || vs[0].Problem() == nil || !vs[0].Problem().Error {
		t.Fatalf("plan verdict %+v: want the name taken, an error", vs[0])
	}
	_, err := e.Apply(ctx, other, []engine.Desired{d}, nil)
	if err == nil || !strings.Contains(err.Error(), vs[0].Problem().Detail) {
		t.Fatalf("apply error %v\ndoes not carry the plan's words %q", err, vs[0].Problem().Detail)
	}
	if r := routesOf(t, fc["east"], d.Entry); r != "[team-x:route-of-a]" {
		t.Fatalf("routes %s after the refused apply", r)
	}
}

// A malformed contribution of the same name is this intent's to replace
// (item 8): the plan does not fail on it and the apply writes its own.
func TestUntrustedSameNameIsReplaced(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	if _, err := e.Apply(ctx, workspaceOwner("b", "id-b", "ws"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	u := enginetest.Live(t, fc["east"], d.Entry).DeepCopy()
	ann, labels := u.GetAnnotations(), u.GetLabels()
	ann["traffic-policy.mesh-intent.io/a"], labels["traffic-policy.mesh-intent.io/a"] = "garbage", "id-someone"
	u.SetAnnotations(ann)
	u.SetLabels(labels)
	bumpVersion(t, u)
	if err := fc["east"].Tracker().Update(vsResource, u, d.Entry.Namespace); err != nil {
		t.Fatal(err)
	}
	e.Wrote("east", schema.FromAPIVersionAndKind(d.Entry.APIVersion, d.Entry.Kind))
	a := workspaceOwner("a", "id-a", "ws")
	found, _ := Contributions(ctx, e, a, []engine.Entry{d.Entry})
	for _, v := range Judge(a, found) {
		if p := v.Problem(); p != nil && p.Error {
			t.Fatalf("plan fails on %s (%s): %s", v.Name, v.Standing, p.Detail)
		}
	}
	if _, err := e.Apply(ctx, a, []engine.Desired{d}, nil); err != nil {
		t.Fatalf("apply over a malformed same-name contribution: %v", err)
	}
	if r := routesOf(t, fc["east"], d.Entry); r != "[ws:route-of-a ws:route-of-b]" {
		t.Fatalf("routes %s", r)
	}
	if id := enginetest.Live(t, fc["east"], d.Entry).GetLabels()["traffic-policy.mesh-intent.io/a"]; id != "id-a" {
		t.Fatalf("label %q, want this instance's", id)
	}
}

// A composer never creates an object an intent owns (a virtual
// destination's DestinationRule, gone with its destination): the apply
// is an error that names the fix, and nothing is written; once the owner
// made it, the contribution joins it.
func TestComposerNeverCreatesAnOwnedObject(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	o := enginetest.ComposedOwner("a")
	o.Composition.Owned = func(k translate.Key) bool { return k == d.Entry.Key() }
	_, err := e.Apply(ctx, o, []engine.Desired{d}, nil)
	if err == nil || !strings.Contains(err.Error(), "does not exist") || !strings.Contains(err.Error(), "Apply the destination first") {
		t.Fatalf("composing an owned object that is gone: %v; want an error naming the fix", err)
	}
	if got := enginetest.Live(t, fc["east"], d.Entry); got != nil {
		t.Fatalf("the composer created the owned object: %v", got.Object)
	}
	enginetest.Seed(t, fc["east"], d.Entry, engine.Owner{Kind: "virtual-destination", Name: "user", ID: "id-user"}.Labels())
	if _, err := e.Apply(ctx, o, []engine.Desired{d}, nil); err != nil {
		t.Fatalf("joining the owner's object: %v", err)
	}
	if got := enginetest.Live(t, fc["east"], d.Entry); got.GetLabels()["traffic-policy.mesh-intent.io/a"] != "id-a" {
		t.Fatalf("after joining: labels %v", got.GetLabels())
	}
}

// An owner takes over an object only composers wrote (an earlier build's
// composer made its DestinationRule), instead of refusing it as "already
// owned by \"\"".
func TestOwnerAdoptsAComposerOnlyObject(t *testing.T) {
	e, fc := newEngine("east")
	e.Composers = compositiontest.Composers
	ctx := context.Background()
	labels := map[string]any{}
	for k, v := range testOwner.Labels() {
		labels[k] = v
	}
	want := engine.Desired{Entry: engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "DestinationRule", Namespace: "istio-system", Name: "vd-a", Digest: "d-vd-a"},
		Manifest: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
			"metadata": map[string]any{"name": "vd-a", "namespace": "istio-system", "labels": labels},
			"spec":     map[string]any{"host": "a.global"}}}
	composed := enginetest.ComposedEntry()
	composed.Entry.Kind, composed.Entry.Name = "DestinationRule", "vd-a"
	if _, err := e.Apply(ctx, enginetest.ComposedOwner("p"), []engine.Desired{composed}, nil); err != nil {
		t.Fatal(err)
	}
	if got := enginetest.Live(t, fc["east"], want.Entry); got == nil || got.GetLabels()[engine.LabelOwnerKind] != "" {
		t.Fatalf("the composer-only object: %v", got)
	}
	if _, err := e.Apply(ctx, testOwner, []engine.Desired{want}, nil); err != nil {
		t.Fatalf("the owner's apply onto a composer-only object: %v", err)
	}
	if got := enginetest.Live(t, fc["east"], want.Entry); !testOwner.Owns(got.GetLabels()) {
		t.Fatalf("the owner did not take it over: labels %v", got.GetLabels())
	}
}
