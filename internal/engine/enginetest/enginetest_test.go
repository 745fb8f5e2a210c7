package enginetest

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// TestNewWritingTakesApplies: a NewWriting cluster stores a server-side
// apply of an object that does not exist yet, with a UID; a New cluster
// has no such stand-in.
func TestNewWritingTakesApplies(t *testing.T) {
	gvk := schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "ServiceEntry"}
	gvr, ok := engine.ResourceOf(gvk)
	if !ok {
		t.Fatal("the engine writes no ServiceEntry")
	}
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetNamespace("istio-system")
	obj.SetName("se")
	ctx := context.Background()
	w := NewWriting("east")["east"].Resource(gvr).Namespace("istio-system")
	got, err := w.Apply(ctx, "se", obj, metav1.ApplyOptions{FieldManager: "m"})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetUID() == "" {
		t.Fatal("applied object has no UID")
	}
	if _, err := w.Get(ctx, "se", metav1.GetOptions{}); err != nil {
		t.Fatalf("applied object not stored: %v", err)
	}
	r := New("east")["east"].Resource(gvr).Namespace("istio-system")
	if got, err := r.Apply(ctx, "se", obj, metav1.ApplyOptions{FieldManager: "m"}); err == nil && got.GetUID() != "" {
		t.Fatal("a New cluster gave an applied object a UID: it is not the read-only fake any more")
	}
}
