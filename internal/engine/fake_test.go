package engine

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest/fakeapply"
	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// Unit tests of the engine run against client-go's fake dynamic client:
// one per cluster, its object tracker as the cluster's store. The fake
// has no server-side apply of its own for objects that do not exist yet,
// so package fakeapply (shared with the tests above the engine) stands in
// for it: create or replace, with a UID and a resourceVersion, and the
// API server's refusal of an apply that names an object by another UID.
// Failures (a write refused, a connection cut off)
// are injected with reactors that run before it.

// fakeClusters is a ClientSource of fake clusters; a cluster not in the
// map is unreachable.
type fakeClusters map[string]*dynamicfake.FakeDynamicClient

func (f fakeClusters) Get(cluster string) (*kubeclient.Clients, error) {
	d, ok := f[cluster]
	if !ok {
		return nil, fmt.Errorf("dial tcp: cluster %s unreachable", cluster)
	}
	return &kubeclient.Clients{Dynamic: d}, nil
}

// nextUID is a UID no other object of the process has.
func nextUID() types.UID { return fakeapply.NextUID() }

// newFakeEngine returns an engine over one fake cluster per name.
func newFakeEngine(t *testing.T, clusters ...string) (*Engine, fakeClusters) {
	t.Helper()
	listKinds := map[schema.GroupVersionResource]string{}
	for gvk, r := range resources {
		listKinds[gvk.GroupVersion().WithResource(r)] = gvk.Kind + "List"
	}
	fc := fakeClusters{}
	for _, c := range clusters {
		d := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
		fakeapply.Install(d)
		fc[c] = d
	}
	return &Engine{Clients: fc, FieldManager: "test", retryBackoff: noWait}, fc
}

// noWait stands in for the backoff between retries (retry.go): as many
// attempts as conflictBackoff, without waits, so no clock decides a unit
// test.
var noWait = &wait.Backoff{Steps: conflictBackoff.Steps}

// applyReactor emulates server-side apply on the tracker (fakeapply).
func applyReactor(d *dynamicfake.FakeDynamicClient) k8stesting.ReactionFunc {
	return fakeapply.Apply(d)
}

// seed stores an object in a fake cluster as someone (or we) left it.
func seed(t *testing.T, d *dynamicfake.FakeDynamicClient, e Entry, labels map[string]string) {
	t.Helper()
	gvr, err := resourceFor(e.APIVersion, e.Kind)
	if err != nil {
		t.Fatal(err)
	}
	fakeapply.Seed(t, d, gvr, e.Kind, e.Namespace, e.Name, labels)
}

// live returns an object of a fake cluster, or nil.
func live(t *testing.T, d *dynamicfake.FakeDynamicClient, e Entry) *unstructured.Unstructured {
	t.Helper()
	gvr, err := resourceFor(e.APIVersion, e.Kind)
	if err != nil {
		t.Fatal(err)
	}
	return fakeapply.Get(t, d, gvr, e.Namespace, e.Name)
}

// serviceEntry is a desired ServiceEntry of owner in cluster.
func serviceEntry(owner Owner, cluster, name string) Desired {
	m := map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "ServiceEntry",
		"metadata": map[string]any{"name": name, "namespace": "istio-system"},
		"spec":     map[string]any{"hosts": []any{name + ".global"}},
	}
	addLabels(m, owner.Labels())
	return Desired{Entry: Entry{Cluster: cluster, APIVersion: "networking.istio.io/v1", Kind: "ServiceEntry",
		Namespace: "istio-system", Name: name, Digest: "d-" + name}, Manifest: m}
}

// applies lists the server-side applies a fake cluster received
// (fakeapply).
func applies(d *dynamicfake.FakeDynamicClient) []k8stesting.PatchActionImpl {
	return fakeapply.Applies(d)
}

// applyManaged is the managedFields of an object last applied by manager.
func applyManaged(manager string) []metav1.ManagedFieldsEntry {
	return []metav1.ManagedFieldsEntry{{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "networking.istio.io/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:hosts":{}}}`)}}
}

// fieldConflict is the API server's answer to an apply that would change
// a field another manager applied.
func fieldConflict(manager, path string) error { return fakeapply.FieldConflict(manager, path) }

func unstructuredSlice(obj map[string]any, fields ...string) ([]any, bool, error) {
	return unstructured.NestedSlice(obj, fields...)
}
