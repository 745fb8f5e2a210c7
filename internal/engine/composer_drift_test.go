package engine

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition/compositiontest"
)

// Composer field managers on objects an intent owns: honoured only where a
// contribution composes, never as a cover for drift (drift.go, managers.go).

// A virtual destination's own apply, and the composers writing into its
// DestinationRule, recognize each other whatever their field_manager
// bases: the virtual destination keeps the composers' settings (they are
// not foreign to it) and takes back its own fields from them; a composer
// takes fields over from the owner of another base.
func TestSharedDestinationRuleAcrossFieldManagerBases(t *testing.T) {
	e := &Engine{FieldManager: "team-b", Composers: compositiontest.Composers}
	owner := Owner{Kind: "virtual-destination", Name: "user", ID: "id-user"}
	mine := owner.FieldManager(e.FieldManager)
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
		"metadata": map[string]any{"name": "vd-user", "namespace": "istio-system"},
		"spec":     map[string]any{"host": "user.global", "trafficPolicy": map[string]any{"connectionPool": map[string]any{}}}}}
	live.SetLabels(map[string]string{LabelManagedBy: ManagedByValue, LabelOwnerKind: "virtual-destination", LabelOwnerName: "user",
		"traffic-policy.mesh-intent.io/p": "id-p"})
	live.SetAnnotations(map[string]string{"traffic-policy.mesh-intent.io/p": "route-of-p"})
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		managed(mine, metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:host":{}}}`),
		managed("team-a/traffic-policy-composer", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:host":{},"f:trafficPolicy":{}}}`),
	})
	if fs, err := e.foreignSpecFields(live, owner, mine); err != nil || len(fs) != 0 {
		t.Fatalf("foreign fields %v (%v): the virtual destination would strip a composer of another base", fs, err)
	}
	if !e.composersOnly([]string{"team-a/traffic-policy-composer", "terraform-provider-mesh/traffic-policy-composer"}) {
		t.Fatal("a virtual destination cannot take its fields back from a composer of another base")
	}
	if !e.oursOrEdits(live, []string{"team-c/virtual-destination.user", "team-a/traffic-policy-composer"}) {
		t.Fatal("a composer cannot take fields over from the object's owner or a composer of another base")
	}
}

// Drift is decided by content: an edit of a mesh_cluster's deny-all
// AuthorizationPolicy under a field manager named like the provider's is
// drift; another tool's label and a server default are not.
func TestDriftByContentNotByManagerName(t *testing.T) {
	e, fc, f := newDenyAllFixture(t)
	owner, manager, gvk, en, desired, want, gvr := f.owner, f.manager, f.gvk, f.entry, f.desired, f.digest, f.gvr
	read := func(editor string) string {
		t.Helper()
		obj := (&unstructured.Unstructured{Object: desired}).DeepCopy()
		labels := obj.GetLabels()
		labels["team"] = "net" // another tool's label
		obj.SetLabels(labels)
		obj.SetUID(nextUID())
		obj.SetResourceVersion("1")
		if err := unstructured.SetNestedField(obj.Object, "default", "spec", "provider"); err != nil { // no manager: a server default
			t.Fatal(err)
		}
		mf := []metav1.ManagedFieldsEntry{
			managed(manager, metav1.ManagedFieldsOperationApply, `{"f:metadata":{"f:labels":{"f:app.kubernetes.io/managed-by":{},"f:mesh-intent.io/owner-kind":{},"f:mesh-intent.io/owner-name":{},"f:mesh-intent.io/owner-id":{}}},"f:spec":{"f:action":{}}}`),
			managed("kubectl-label", metav1.ManagedFieldsOperationUpdate, `{"f:metadata":{"f:labels":{"f:team":{}}}}`),
		}
		if editor != "" {
			if err := unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"from": []any{}}}, "spec", "rules"); err != nil {
				t.Fatal(err)
			}
			mf = append(mf, managed(editor, metav1.ManagedFieldsOperationUpdate, `{"f:spec":{"f:rules":{}}}`))
		}
		obj.SetManagedFields(mf)
		if err := fc["east"].Tracker().Delete(gvr, en.Namespace, en.Name); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if err := fc["east"].Tracker().Create(gvr, obj, en.Namespace); err != nil {
			t.Fatal(err)
		}
		e.wrote("east", gvk)
		got, errs := e.Read(context.Background(), owner, []schema.GroupVersionKind{gvk}, []string{"east"}, nil)
		if len(got) != 1 {
			t.Fatalf("read %v (%v)", got, errs)
		}
		return got[0].Digest
	}
	if got := read(""); got != want {
		t.Fatalf("untouched (another tool's label, a server default): digest %s, want %s", got, want)
	}
	for _, editor := range []string{"kubectl-edit", "terraform-provider-mesh/x", manager, "terraform-provider-mesh/traffic-policy-composer"} {
		if got := read(editor); got == want {
			t.Fatalf("a rule added under field manager %q is not drift", editor)
		}
	}
}

// denyAll is a mesh_cluster's deny-all AuthorizationPolicy as its owner
// writes it, on a fake engine whose field manager is the owner's default.
type denyAll struct {
	owner   Owner
	manager string
	gvk     schema.GroupVersionKind
	gvr     schema.GroupVersionResource
	entry   Entry
	desired map[string]any
	digest  string
}

func newDenyAllFixture(t *testing.T) (*Engine, fakeClusters, denyAll) {
	t.Helper()
	e, fc := newFakeEngine(t, "east")
	e.FieldManager = ""
	owner := Owner{Kind: "cluster", Name: "east", ID: "id-east"}
	manager := owner.FieldManager(e.FieldManager)
	gvk := schema.GroupVersionKind{Group: "security.istio.io", Version: "v1", Kind: "AuthorizationPolicy"}
	en := Entry{Cluster: "east", APIVersion: "security.istio.io/v1", Kind: gvk.Kind, Namespace: "istio-system", Name: "mesh-default-deny"}
	desired := map[string]any{"apiVersion": en.APIVersion, "kind": en.Kind,
		"metadata": map[string]any{"name": en.Name, "namespace": en.Namespace}, "spec": map[string]any{"action": "DENY"}}
	addLabels(desired, owner.Labels())
	want := mustDigest(t, desired)
	gvr, err := resourceFor(en.APIVersion, en.Kind)
	if err != nil {
		t.Fatal(err)
	}
	return e, fc, denyAll{owner: owner, manager: manager, gvk: gvk, gvr: gvr, entry: en, desired: desired, digest: want}
}

// Composer entries are honoured only on objects a contribution really
// targets (issue 36, item 3): a server-side apply named like a composer,
// with a contribution label and annotation, onto a mesh_cluster's
// deny-all AuthorizationPolicy (a kind no composed intent writes) is
// drift its owner's refresh shows.
func TestComposerNameOnAnIntentsOwnObjectIsDrift(t *testing.T) {
	e, fc, f := newDenyAllFixture(t)
	e.Composers = compositiontest.Composers // a contribution that composes, onto the wrong kind
	owner, manager, gvk, en, desired, want, gvr := f.owner, f.manager, f.gvk, f.entry, f.desired, f.digest, f.gvr
	obj := (&unstructured.Unstructured{Object: desired}).DeepCopy()
	labels := obj.GetLabels()
	labels["traffic-policy.mesh-intent.io/x"] = "id-x"
	obj.SetLabels(labels)
	obj.SetAnnotations(map[string]string{"traffic-policy.mesh-intent.io/x": "route-of-x"})
	obj.SetUID(nextUID())
	obj.SetResourceVersion("1")
	if err := unstructured.SetNestedSlice(obj.Object, []any{map[string]any{"from": []any{map[string]any{"source": map[string]any{"principals": []any{"*"}}}}}}, "spec", "rules"); err != nil {
		t.Fatal(err)
	}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{
		managed(manager, metav1.ManagedFieldsOperationApply, `{"f:metadata":{"f:labels":{"f:app.kubernetes.io/managed-by":{},"f:mesh-intent.io/owner-kind":{},"f:mesh-intent.io/owner-name":{},"f:mesh-intent.io/owner-id":{}}},"f:spec":{"f:action":{}}}`),
		managed("x/traffic-policy-composer", metav1.ManagedFieldsOperationApply, `{"f:metadata":{"f:labels":{"f:traffic-policy.mesh-intent.io/x":{}},"f:annotations":{"f:traffic-policy.mesh-intent.io/x":{}}},"f:spec":{"f:rules":{}}}`),
	})
	if err := fc["east"].Tracker().Create(gvr, obj, en.Namespace); err != nil {
		t.Fatal(err)
	}
	got, errs := e.Read(context.Background(), owner, []schema.GroupVersionKind{gvk}, []string{"east"}, nil)
	if len(got) != 1 {
		t.Fatalf("read %v (%v)", got, errs)
	}
	if got[0].Digest == want {
		t.Fatal("principals [\"*\"] added under a composer's name onto the deny-all policy is not drift")
	}
}

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

// An intent takes back from our composers the fields it declares in its
// own object (a virtual destination's new host in its DestinationRule,
// which the traffic policies' composer repeats until they are applied);
// the same conflict with another tool stays an error.
func TestApplyTakesItsFieldsBackFromComposers(t *testing.T) {
	for _, tc := range []struct {
		manager   string
		wantForce bool
	}{{"test/traffic-policy-composer", true}, {"argocd-controller", false}} {
		t.Run(tc.manager, func(t *testing.T) {
			e, fc := newFakeEngine(t, "east")
			want := serviceEntry(testOwner, "east", "a")
			seed(t, fc["east"], want.Entry, testOwner.Labels())
			gvr := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}
			u := live(t, fc["east"], want.Entry)
			u.SetManagedFields(applyManaged(tc.manager))
			if err := fc["east"].Tracker().Update(gvr, u, "istio-system"); err != nil {
				t.Fatal(err)
			}
			fc["east"].PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
				pa := a.(k8stesting.PatchActionImpl)
				if pa.PatchOptions.Force != nil && *pa.PatchOptions.Force {
					return false, nil, nil
				}
				return true, nil, fieldConflict(tc.manager, ".spec.hosts")
			})
			_, err := e.Apply(context.Background(), testOwner, []Desired{want}, []Entry{want.Entry})
			forced := false
			for _, a := range applies(fc["east"]) {
				forced = forced || (a.PatchOptions.Force != nil && *a.PatchOptions.Force)
			}
			if forced != tc.wantForce || (err == nil) != tc.wantForce {
				t.Fatalf("conflict with %s: forced %v, error %v; want forced %v", tc.manager, forced, err, tc.wantForce)
			}
		})
	}
}
