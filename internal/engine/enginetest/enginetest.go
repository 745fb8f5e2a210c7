// Package enginetest serves fake clusters to the tests of the engine's
// users (the provider, discovery): client-go's fake dynamic client, one
// per cluster, listing every kind the engine writes, as an
// engine.ClientSource. The engine's own tests have their own, with
// server-side apply stood in for (internal/engine's fake_test.go); these
// only read, so objects are put straight into each cluster's store.
package enginetest

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// Clusters is an engine.ClientSource of fake clusters; a cluster not in
// it does not answer.
type Clusters map[string]*dynamicfake.FakeDynamicClient

// New returns one empty fake cluster per name.
func New(clusters ...string) Clusters {
	listKinds := map[schema.GroupVersionResource]string{}
	for _, k := range engine.Kinds() {
		gvr, _ := engine.ResourceOf(k)
		listKinds[gvr] = k.Kind + "List"
	}
	f := Clusters{}
	for _, c := range clusters {
		f[c] = dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
	}
	return f
}

// Get is the clients of cluster, or the error of a cluster that does not
// answer.
func (f Clusters) Get(cluster string) (*kubeclient.Clients, error) {
	d, ok := f[cluster]
	if !ok {
		return nil, fmt.Errorf("dial tcp: cluster %s unreachable", cluster)
	}
	return &kubeclient.Clients{Dynamic: d}, nil
}

// Put stores obj in cluster, as it is.
func (f Clusters) Put(t testing.TB, cluster string, obj *unstructured.Unstructured) {
	t.Helper()
	gvr, ok := engine.ResourceOf(obj.GroupVersionKind())
	if !ok {
		t.Fatalf("the engine writes no %s", obj.GroupVersionKind())
	}
	if err := f[cluster].Tracker().Create(gvr, obj, obj.GetNamespace()); err != nil {
		t.Fatal(err)
	}
}
