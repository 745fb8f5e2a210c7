package fakeapply

import (
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

// What a test puts into a fake cluster and reads back of it, beside the
// writes Apply and Create stand in for.

// Seed stores the object namespace/name of kind (resource gvr) in d as
// someone (or the provider) left it: a spec with one host, labels, a
// fresh UID and resourceVersion 1.
func Seed(t testing.TB, d *dynamicfake.FakeDynamicClient, gvr schema.GroupVersionResource, kind, namespace, name string, labels map[string]string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": gvr.GroupVersion().String(), "kind": kind,
		"spec": map[string]any{"hosts": []any{"seeded.example"}}}}
	obj.SetNamespace(namespace)
	obj.SetName(name)
	obj.SetLabels(labels)
	obj.SetUID(NextUID())
	obj.SetResourceVersion("1")
	if err := d.Tracker().Create(gvr, obj, namespace); err != nil {
		t.Fatal(err)
	}
}

// Get is the object namespace/name of gvr as d stores it, or nil.
func Get(t testing.TB, d *dynamicfake.FakeDynamicClient, gvr schema.GroupVersionResource, namespace, name string) *unstructured.Unstructured {
	t.Helper()
	obj, err := d.Tracker().Get(gvr, namespace, name)
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
