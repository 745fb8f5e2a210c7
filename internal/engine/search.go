package engine

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// Search and Get are the reads import needs beyond an owner's inventory:
// every cluster read goes through the engine, so that where the provider
// may look (ConfigMaps in the records namespace alone) is decided here.

// Search lists the objects of kind gvk in cluster that opts select, in
// every namespace; ConfigMaps are listed in the records namespace alone.
// installed is false when the cluster does not serve the kind.
func (e *Engine) Search(ctx context.Context, cluster string, gvk schema.GroupVersionKind, opts metav1.ListOptions) (items []unstructured.Unstructured, installed bool, err error) {
	ri, err := e.resourceIn(cluster, gvk)
	if err != nil {
		return nil, false, err
	}
	var lister dynamic.ResourceInterface = ri
	if gvk.Group == "" && gvk.Kind == "ConfigMap" {
		lister = ri.Namespace(e.recordsNamespace())
	}
	list, err := lister.List(ctx, opts)
	switch {
	case apierrors.IsNotFound(err):
		return nil, false, nil
	case err != nil:
		return nil, true, err
	}
	return list.Items, true, nil
}

// Get reads one object; nil when it does not exist.
func (e *Engine) Get(ctx context.Context, en Entry) (*unstructured.Unstructured, error) {
	ri, err := e.resourceIn(en.Cluster, schema.FromAPIVersionAndKind(en.APIVersion, en.Kind))
	if err != nil {
		return nil, err
	}
	live, err := ri.Namespace(en.Namespace).Get(ctx, en.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	return live, err
}

func (e *Engine) resourceIn(cluster string, gvk schema.GroupVersionKind) (dynamic.NamespaceableResourceInterface, error) {
	gvr, ok := ResourceOf(gvk)
	if !ok {
		return nil, fmt.Errorf("%s is not a kind this provider writes", gvk)
	}
	c, err := e.Clients.Get(cluster)
	if err != nil {
		return nil, err
	}
	return c.Dynamic.Resource(gvr), nil
}

// Probe asks a cluster's discovery for its version and the Istio kinds it
// serves.
func (e *Engine) Probe(cluster string) (kubeclient.Info, error) {
	c, err := e.Clients.Get(cluster)
	if err != nil {
		return kubeclient.Info{}, err
	}
	return kubeclient.Probe(c)
}
