package enginetest

import (
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
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
// it (fakeapply.Seed).
func Seed(t testing.TB, d *dynamicfake.FakeDynamicClient, en engine.Entry, labels map[string]string) {
	t.Helper()
	fakeapply.Seed(t, d, resourceOf(t, en), en.Kind, en.Namespace, en.Name, labels)
}

// Live is the object en names in d as stored, or nil.
func Live(t testing.TB, d *dynamicfake.FakeDynamicClient, en engine.Entry) *unstructured.Unstructured {
	t.Helper()
	return fakeapply.Get(t, d, resourceOf(t, en), en.Namespace, en.Name)
}

// Managed is a managed-fields entry of manager, operation op, holding
// fields (FieldsV1 JSON).
func Managed(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "networking.istio.io/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
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
