package fakeapply

import (
	"context"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

var seGVR = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}

func serviceEntry(rv string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "ServiceEntry",
		"metadata": map[string]any{"name": "se", "namespace": "istio-system", "labels": map[string]any{"a": "b"}}}}
	u.SetResourceVersion(rv)
	return u
}

// TestApplyCreatesThenRefusesAStaleVersion: an apply creates the object
// with a UID, version 1 and the applier's fields; an apply pinned to a
// version that is no longer the object's is a conflict.
func TestApplyCreatesThenRefusesAStaleVersion(t *testing.T) {
	d := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{seGVR: "ServiceEntryList"})
	Install(d)
	ri := d.Resource(seGVR).Namespace("istio-system")
	ctx := context.Background()
	got, err := ri.Apply(ctx, "se", serviceEntry(""), metav1.ApplyOptions{FieldManager: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetUID() == "" || got.GetResourceVersion() != "1" {
		t.Fatalf("created with uid %q, version %q; want a UID and version 1", got.GetUID(), got.GetResourceVersion())
	}
	if mf := got.GetManagedFields(); len(mf) != 1 || mf[0].Manager != "m" || mf[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Fatalf("managed fields %+v, want one apply entry of m", mf)
	}
	if _, err := ri.Apply(ctx, "se", serviceEntry("1"), metav1.ApplyOptions{FieldManager: "m"}); err != nil {
		t.Fatal(err)
	}
	if _, err := ri.Apply(ctx, "se", serviceEntry("1"), metav1.ApplyOptions{FieldManager: "m"}); !apierrors.IsConflict(err) {
		t.Fatalf("apply pinned to version 1 of version 2: %v, want a conflict", err)
	}
}
