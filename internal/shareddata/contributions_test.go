package shareddata

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest/fakeapply"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition/compositiontest"
)

// workspaceOwner is a composed owner whose contributions say which
// workspace they come from ("<workspace>:route-of-<name>") and whose Check
// refuses anything else. Its state holds only its own instance.
func workspaceOwner(name, id, workspace string, held ...string) engine.Owner {
	o := enginetest.ComposedOwner(name)
	o.ID = id
	o.Composition.Own = func(other string) bool {
		for _, h := range held {
			if h == other {
				return true
			}
		}
		return false
	}
	o.Composition.Contribution = compositiontest.Part(workspace + ":route-of-" + name)
	o.Composition.Composer = compositiontest.Composer{Check: func(raw string) (string, error) {
		ws, route, ok := strings.Cut(raw, ":")
		if !ok || !strings.HasPrefix(route, "route-of-") {
			return "", fmt.Errorf("not a contribution")
		}
		return ws, nil
	}}
	return o
}

// Contributions are trusted by content, never by who wrote them: one
// edited by hand (kubectl annotate) that its composer still reads is kept
// byte for byte and composed; one it refuses is not composed and is
// removed with its label by the next writer, and the plan warns of it
// first, from the same verdict.
func TestComposeTrustsContributionsByContent(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	for _, n := range []string{"a", "b", "x"} {
		if _, err := e.Apply(ctx, workspaceOwner(n, "id-"+n, "ws"), []engine.Desired{d}, nil); err != nil {
			t.Fatal(err)
		}
	}
	// kubectl annotate --overwrite: the values change and kubectl holds them.
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
		"traffic-policy.mesh-intent.io/a": "ws:route-of-edited", "traffic-policy.mesh-intent.io/x": "ws:evil"}}})
	ri := fc["east"].Resource(vsResource).Namespace(d.Entry.Namespace)
	obj, err := ri.Patch(ctx, d.Entry.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-annotate"})
	if err != nil {
		t.Fatal(err)
	}
	mf := append(obj.GetManagedFields(), fakeapply.MetadataFields(obj, "kubectl-annotate", metav1.ManagedFieldsOperationUpdate)...)
	mf[len(mf)-1].FieldsV1.SetRawString(`{"f:metadata":{"f:annotations":{"f:traffic-policy.mesh-intent.io/a":{},"f:traffic-policy.mesh-intent.io/x":{}}}}`)
	obj.SetManagedFields(mf)
	if err := fc["east"].Tracker().Update(vsResource, obj, d.Entry.Namespace); err != nil {
		t.Fatal(err)
	}
	c := workspaceOwner("c", "id-c", "ws")
	found, errs := Contributions(ctx, e, c, []engine.Entry{d.Entry})
	if len(errs) > 0 || len(found) != 3 {
		t.Fatalf("contributions %+v (errors %v)", found, errs)
	}
	vs := Judge(c, found)
	if vs[0].Standing != Theirs || vs[1].Standing != Theirs || vs[2].Standing != Untrusted || vs[2].Problem() == nil || vs[2].Problem().Error {
		t.Fatalf("verdicts %+v: want a and b another state's, x not valid (a warning)", vs)
	}
	if _, err := e.Apply(ctx, c, []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	got := enginetest.Live(t, fc["east"], d.Entry)
	routes, _, _ := unstructured.NestedSlice(got.Object, "spec", "routes")
	if fmt.Sprint(routes) != "[ws:route-of-edited ws:route-of-b ws:route-of-c]" {
		t.Fatalf("composed routes %v: want the well-formed edit kept and the refused one left out", routes)
	}
	if got.GetAnnotations()["traffic-policy.mesh-intent.io/a"] != "ws:route-of-edited" || got.GetLabels()["traffic-policy.mesh-intent.io/a"] != "id-a" {
		t.Fatalf("the well-formed contribution was not kept byte for byte: %v %v", got.GetAnnotations(), got.GetLabels())
	}
	if _, ok := got.GetAnnotations()["traffic-policy.mesh-intent.io/x"]; ok {
		t.Fatalf("the refused annotation is still there: %v", got.GetAnnotations())
	}
	if _, ok := got.GetLabels()["traffic-policy.mesh-intent.io/x"]; ok {
		t.Fatalf("the refused contribution's label is still there: %v", got.GetLabels())
	}
}

// A contribution of the same name from another instance is a conflict
// whatever workspace either names, two states left at the default
// workspace included; only an instance the writer's state holds (its
// previous instance, being replaced) is replaced. Releasing the old
// instance afterwards leaves the new one's contribution.
func TestComposeSameNameIsReplacedOnlyByItsOwnState(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	old := workspaceOwner("a", "id-old", "default")
	if _, err := e.Apply(ctx, old, []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"default", "team-b"} {
		other := workspaceOwner("a", "id-other", ws)
		_, err := e.Apply(ctx, other, []engine.Desired{d}, nil)
		if err == nil || !strings.Contains(err.Error(), `from instance id-old (workspace "default")`) || !strings.Contains(err.Error(), "import it instead") {
			t.Fatalf("another state's instance of the same name (workspace %q): want a conflict naming the instance, got %v", ws, err)
		}
		if id := enginetest.Live(t, fc["east"], d.Entry).GetLabels()["traffic-policy.mesh-intent.io/a"]; id != "id-old" {
			t.Fatalf("the refused write replaced the contribution: label %q", id)
		}
	}
	renewed := workspaceOwner("a", "id-new", "default", "id-old")
	if _, err := e.Apply(ctx, renewed, []engine.Desired{d}, nil); err != nil {
		t.Fatalf("the state's own previous instance was not replaced: %v", err)
	}
	if id := enginetest.Live(t, fc["east"], d.Entry).GetLabels()["traffic-policy.mesh-intent.io/a"]; id != "id-new" {
		t.Fatalf("contribution label %q, want the new instance", id)
	}
	if _, err := e.Delete(ctx, old, []engine.Entry{d.Entry}); err != nil {
		t.Fatal(err)
	}
	vs := enginetest.Live(t, fc["east"], d.Entry)
	if vs == nil || vs.GetLabels()["traffic-policy.mesh-intent.io/a"] != "id-new" {
		t.Fatalf("releasing the old instance removed the new one's contribution: %v", vs)
	}
}
