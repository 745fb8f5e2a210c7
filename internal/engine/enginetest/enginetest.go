// Package enginetest serves fake clusters to the tests of the engine's
// users (the provider, discovery): client-go's fake dynamic client, one
// per cluster, listing every kind the engine writes, as an
// engine.ClientSource. Objects are put straight into each cluster's
// store (Put); clusters made by NewWriting also take the engine's writes,
// server-side apply stood in for by package fakeapply, which the engine's
// own tests (fake_test.go) use too. engine.go runs an engine on them for
// the tests above the engine (internal/shareddata): NewEngine, objects
// seeded and read back, and an intent contributing to a composed object.
package enginetest

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest/fakeapply"
	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// Clusters is an engine.ClientSource of fake clusters; a cluster not in
// it does not answer.
type Clusters map[string]*dynamicfake.FakeDynamicClient

// New returns one empty fake cluster per name.
func New(clusters ...string) Clusters {
	return newClusters(false, clusters)
}

// NewWriting returns one empty fake cluster per name that takes
// server-side applies and creates (fakeapply).
func NewWriting(clusters ...string) Clusters {
	return newClusters(true, clusters)
}

func newClusters(writing bool, clusters []string) Clusters {
	listKinds := map[schema.GroupVersionResource]string{}
	for _, k := range engine.Kinds() {
		gvr, _ := engine.ResourceOf(k)
		listKinds[gvr] = k.Kind + "List"
	}
	f := Clusters{}
	for _, c := range clusters {
		d := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
		if writing {
			fakeapply.Install(d)
		}
		f[c] = d
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
