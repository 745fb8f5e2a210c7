package engine

import (
	"context"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Review of issue 36, item 3 ("Composer entries are honoured only on
// objects a contribution really targets"): the check is only that a
// composed kind writes the object's Kubernetes kind and that a label and
// annotation of that kind are present, not that a contribution decodes
// and composes to this object. A virtual destination's own
// DestinationRule is of a kind traffic policies write, so a server-side
// apply named like a composer, with a made-up traffic-policy label and
// annotation (no policy targets this rule), that turns off TLS to the
// backends is hidden from the destination's refresh.
func TestComposerNameOnADestinationsOwnRuleIsDrift(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	e.FieldManager = ""
	owner := Owner{Kind: "virtual-destination", Name: "vd-a", ID: "id-vd-a"}
	manager := owner.FieldManager(e.FieldManager)
	gvk := schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "DestinationRule"}
	en := Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: gvk.Kind, Namespace: "istio-system", Name: "vd-a"}
	desired := map[string]any{"apiVersion": en.APIVersion, "kind": en.Kind,
		"metadata": map[string]any{"name": en.Name, "namespace": en.Namespace}, "spec": map[string]any{"host": "a.global"}}
	addLabels(desired, owner.Labels())
	want := mustDigest(t, desired)
	gvr, err := resourceFor(en.APIVersion, en.Kind)
	if err != nil {
		t.Fatal(err)
	}
	obj := (&unstructured.Unstructured{Object: desired}).DeepCopy()
	labels := obj.GetLabels()
	labels["traffic-policy.mesh-intent.io/x"] = "id-x"
	obj.SetLabels(labels)
	obj.SetAnnotations(map[string]string{"traffic-policy.mesh-intent.io/x": "not a contribution of any policy"})
	obj.SetUID(nextUID())
	obj.SetResourceVersion("1")
	if err := unstructured.SetNestedField(obj.Object, "DISABLE", "spec", "trafficPolicy", "tls", "mode"); err != nil {
		t.Fatal(err)
	}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		managed(manager, metav1.ManagedFieldsOperationApply, `{"f:metadata":{"f:labels":{"f:app.kubernetes.io/managed-by":{},"f:mesh-intent.io/owner-kind":{},"f:mesh-intent.io/owner-name":{},"f:mesh-intent.io/owner-id":{}}},"f:spec":{"f:host":{}}}`),
		managed("x/traffic-policy-composer", metav1.ManagedFieldsOperationApply, `{"f:metadata":{"f:labels":{"f:traffic-policy.mesh-intent.io/x":{}},"f:annotations":{"f:traffic-policy.mesh-intent.io/x":{}}},"f:spec":{"f:trafficPolicy":{"f:tls":{"f:mode":{}}}}}`),
	})
	if err := fc["east"].Tracker().Create(gvr, obj, en.Namespace); err != nil {
		t.Fatal(err)
	}
	got, errs := e.Read(context.Background(), owner, []schema.GroupVersionKind{gvk}, []string{"east"}, nil)
	if len(got) != 1 {
		t.Fatalf("read %v (%v)", got, errs)
	}
	if got[0].Digest == want {
		t.Fatal("tls.mode DISABLE added under a composer's name onto the destination's own DestinationRule, with a traffic-policy annotation no policy wrote, is not drift")
	}
}

// Review of issue 36, item 2 ("the plan checks what the apply will
// write: ... every object's annotation total"): Limits counts only the
// contributions on a composed object, not the other annotations the
// object holds and keeps through the composer's apply (a
// kubectl.kubernetes.io/last-applied-configuration left by a client-side
// `kubectl apply` restore, which repeats every contribution; another
// tool's annotations). The API server limits all annotations together,
// so the plan passes and the apply is refused.
func TestLimitsCountTheObjectsOtherAnnotations(t *testing.T) {
	e, fc, d := crowdedComposedObject(t)
	ctx := context.Background()
	ann := live(t, fc["east"], d.Entry).GetAnnotations()
	e.wrote("east", schema.FromAPIVersionAndKind(d.Entry.APIVersion, d.Entry.Kind))
	mine := composedOwner("mine")
	mine.Composition.Contribution = testPart(fmt.Sprintf("%010000d", 0))
	found, errs := e.Contributions(ctx, mine, []Entry{d.Entry})
	if len(errs) > 0 || len(found) != 4 {
		t.Fatalf("contributions %d (%v)", len(found), errs)
	}
	total := len("traffic-policy.mesh-intent.io/mine") + 10000
	for k, v := range ann {
		total += len(k) + len(v)
	}
	if total <= MaxAnnotationBytes {
		t.Fatalf("test setup: %d bytes of annotations fit", total)
	}
	for _, l := range e.Limits(mine, []Entry{d.Entry}, found) {
		if l.Limit == "annotations" {
			return
		}
	}
	t.Fatalf("the object's annotations would be %d bytes after this apply (limit %d), and the plan's Limits says nothing", total, MaxAnnotationBytes)
}

// Review of issue 36 ("one verdict ... used by plan, apply, refresh and
// destroy"): a same-name contribution of an instance this state holds is
// Mine whichever way the write goes. On release that is wrong: with
// create_before_destroy (`terraform apply -replace` of a traffic policy
// with that lifecycle), the new instance is created first and the state
// holds it (Roster.Hold at its create); the old instance's destroy then
// judges the new instance's contribution "this instance's" and removes
// it. The new policy's routes are gone while its state says it applied,
// until its next apply.
func TestReleaseOfAnOldInstanceKeepsTheNewInstancesContribution(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := composedEntry()
	ctx := context.Background()
	old := workspaceOwner("a", "id-old", "ws", "id-new")
	if _, err := e.Apply(ctx, old, []Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Apply(ctx, workspaceOwner("b", "id-b", "ws"), []Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	replacement := workspaceOwner("a", "id-new", "ws", "id-old")
	if _, err := e.Apply(ctx, replacement, []Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	if id := live(t, fc["east"], d.Entry).GetLabels()["traffic-policy.mesh-intent.io/a"]; id != "id-new" {
		t.Fatalf("after the replacement's create: label %q", id)
	}
	if _, err := e.Delete(ctx, old, []Entry{d.Entry}); err != nil {
		t.Fatalf("destroying the old instance: %v", err)
	}
	got := live(t, fc["east"], d.Entry)
	if got == nil || got.GetLabels()["traffic-policy.mesh-intent.io/a"] != "id-new" || got.GetAnnotations()["traffic-policy.mesh-intent.io/a"] == "" {
		var labels map[string]string
		if got != nil {
			labels = got.GetLabels()
		}
		t.Fatalf("the old instance's destroy removed the new instance's contribution: object %v, labels %v", got != nil, labels)
	}
}

// The apply counts the same total as the plan (Limits): the object's
// other annotations, which its write keeps, with the contributions. The
// fake API server enforces no limit, so only the engine's own check can
// refuse the write.
func TestApplyCountsTheObjectsOtherAnnotations(t *testing.T) {
	e, fc, d := crowdedComposedObject(t)
	ctx := context.Background()
	mine := composedOwner("mine")
	mine.Composition.Contribution = testPart(fmt.Sprintf("%010000d", 0))
	_, err := e.Apply(ctx, mine, []Desired{d}, nil)
	if err == nil || !strings.Contains(err.Error(), "Kubernetes limit exceeded: annotations") {
		t.Fatalf("the apply writes annotations over %d bytes in all: %v", MaxAnnotationBytes, err)
	}
	if got := live(t, fc["east"], d.Entry).GetAnnotations()["traffic-policy.mesh-intent.io/mine"]; got != "" {
		t.Fatal("the refused write wrote the contribution")
	}
}

// crowdedComposedObject is a composed VirtualService in east holding four
// other states' contributions of 30,000 characters each and 140,000 bytes
// of another tool's annotation (a client-side apply's
// last-applied-configuration): under the API server's annotation limit
// counted by contributions alone, over it counted whole.
func crowdedComposedObject(t *testing.T) (*Engine, fakeClusters, Desired) {
	t.Helper()
	e, fc := newFakeEngine(t, "east")
	d := composedEntry()
	ctx := context.Background()
	for i := 0; i < 4; i++ {
		o := composedOwner(fmt.Sprintf("other-%d", i))
		o.Composition.Contribution = testPart(fmt.Sprintf("%030000d", i))
		if _, err := e.Apply(ctx, o, []Desired{d}, nil); err != nil {
			t.Fatal(err)
		}
	}
	u := live(t, fc["east"], d.Entry).DeepCopy()
	ann := u.GetAnnotations()
	ann["kubectl.kubernetes.io/last-applied-configuration"] = strings.Repeat("x", 140000)
	u.SetAnnotations(ann)
	bumpVersion(t, u)
	if err := fc["east"].Tracker().Update(vsResource, u, d.Entry.Namespace); err != nil {
		t.Fatal(err)
	}
	return e, fc, d
}
