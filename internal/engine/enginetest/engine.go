package enginetest

import (
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest/fakeapply"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition/compositiontest"
)

// What the tests above the engine (internal/shareddata: composition on
// the engine's writes) need to run an engine on fake clusters: the engine
// itself, objects seeded and read back, the applies a cluster received,
// and a composer of test contributions.

// NewEngine is an engine over one writing fake cluster per name
// (NewWriting), field_manager base "test", that retries a write that lost
// a race without waiting (no clock decides a test). It has no Shared: a
// test of the composition registers it.
func NewEngine(clusters ...string) (*engine.Engine, Clusters) {
	fc := NewWriting(clusters...)
	e := &engine.Engine{Clients: fc, FieldManager: "test"}
	return e.WithoutRetryWaits(), fc
}

// resourceOf is the resource of en's kind, failing t when the engine
// writes no such kind.
func resourceOf(t testing.TB, en engine.Entry) schema.GroupVersionResource {
	t.Helper()
	gvr, ok := engine.ResourceOf(schema.FromAPIVersionAndKind(en.APIVersion, en.Kind))
	if !ok {
		t.Fatalf("the engine writes no %s %s", en.APIVersion, en.Kind)
	}
	return gvr
}

// Seed stores the object en names in d as someone (or the provider) left
// it: a spec with one host, labels, a UID and resourceVersion 1.
func Seed(t testing.TB, d *dynamicfake.FakeDynamicClient, en engine.Entry, labels map[string]string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": en.APIVersion, "kind": en.Kind,
		"spec": map[string]any{"hosts": []any{"seeded.example"}}}}
	obj.SetNamespace(en.Namespace)
	obj.SetName(en.Name)
	obj.SetLabels(labels)
	obj.SetUID(fakeapply.NextUID())
	obj.SetResourceVersion("1")
	if err := d.Tracker().Create(resourceOf(t, en), obj, en.Namespace); err != nil {
		t.Fatal(err)
	}
}

// Live is the object en names in d as stored, or nil.
func Live(t testing.TB, d *dynamicfake.FakeDynamicClient, en engine.Entry) *unstructured.Unstructured {
	t.Helper()
	obj, err := d.Tracker().Get(resourceOf(t, en), en.Namespace, en.Name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return obj.(*unstructured.Unstructured)
}

// Applies lists the server-side applies d received.
func Applies(d *dynamicfake.FakeDynamicClient) []k8stesting.PatchActionImpl {
	var out []k8stesting.PatchActionImpl
	for _, a := range d.Actions() {
		if pa, ok := a.(k8stesting.PatchActionImpl); ok && pa.GetPatchType() == types.ApplyPatchType {
			out = append(out, pa)
		}
	}
	return out
}

// Managed is a managed-fields entry of manager, operation op, holding
// fields (FieldsV1 JSON).
func Managed(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "networking.istio.io/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// FieldConflict is the API server's answer to an apply that would change
// a field (path) that manager applied.
func FieldConflict(manager, path string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonConflict,
		Message: fmt.Sprintf("Apply failed with 1 conflict: conflict with %q: %s", manager, path),
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{
			Type: metav1.CauseTypeFieldManagerConflict, Message: fmt.Sprintf("conflict with %q", manager), Field: path}}},
	}}
}

// ConflictsFirst makes the first n server-side applies (and patches) of
// d fail with a resourceVersion conflict (another writer came first) and
// returns the number of them seen.
func ConflictsFirst(d k8stesting.FakeClient, n int) *int {
	seen := 0
	d.PrependReactor("patch", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		seen++
		if seen <= n {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "networking.istio.io", Resource: "virtualservices"}, "tp-user.global", fmt.Errorf("the object has been modified"))
		}
		return false, nil, nil
	})
	return &seen
}

// ComposedOwner is a traffic policy that contributes "route-of-<name>"
// (instance "id-<name>") to a composed VirtualService through compositiontest.Composer.
func ComposedOwner(name string) engine.Owner {
	return engine.Owner{Kind: "traffic-policy", Name: name, ID: "id-" + name, Composition: &engine.Composition{
		Contribution: compositiontest.Part("route-of-" + name),
		Composer:     compositiontest.Composer{},
	}}
}

// ComposedEntry is the VirtualService in east that ComposedOwner's
// contributions compose into.
func ComposedEntry() engine.Desired {
	return engine.Desired{Entry: engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "istio-system", Name: "tp-user.global", Digest: "c"},
		Manifest: map[string]any{}}
}
