package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
)

// workspaceOwner is a composed owner whose contributions say which
// workspace they come from ("<workspace>:route-of-<name>") and whose Check
// refuses anything else. Its state holds only its own instance.
func workspaceOwner(name, id, workspace string, held ...string) Owner {
	o := composedOwner(name)
	o.ID = id
	o.Composition.Own = func(other string) bool {
		for _, h := range held {
			if h == other {
				return true
			}
		}
		return false
	}
	o.Composition.Contribution = testPart(workspace + ":route-of-" + name)
	o.Composition.Composer = testComposer{check: func(raw string) (string, error) {
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
	e, fc := newFakeEngine(t, "east")
	d := composedEntry()
	ctx := context.Background()
	for _, n := range []string{"a", "b", "x"} {
		if _, err := e.Apply(ctx, workspaceOwner(n, "id-"+n, "ws"), []Desired{d}, nil); err != nil {
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
	mf := append(obj.GetManagedFields(), metadataFields(obj, "kubectl-annotate", metav1.ManagedFieldsOperationUpdate)...)
	mf[len(mf)-1].FieldsV1.SetRawString(`{"f:metadata":{"f:annotations":{"f:traffic-policy.mesh-intent.io/a":{},"f:traffic-policy.mesh-intent.io/x":{}}}}`)
	obj.SetManagedFields(mf)
	if err := fc["east"].Tracker().Update(vsResource, obj, d.Entry.Namespace); err != nil {
		t.Fatal(err)
	}
	c := workspaceOwner("c", "id-c", "ws")
	found, errs := e.Contributions(ctx, c, []Entry{d.Entry})
	if len(errs) > 0 || len(found) != 3 {
		t.Fatalf("contributions %+v (errors %v)", found, errs)
	}
	vs := Judge(c, found)
	if vs[0].Standing != Theirs || vs[1].Standing != Theirs || vs[2].Standing != Untrusted || vs[2].Problem() == nil || vs[2].Problem().Error {
		t.Fatalf("verdicts %+v: want a and b another state's, x not valid (a warning)", vs)
	}
	if _, err := e.Apply(ctx, c, []Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	got := live(t, fc["east"], d.Entry)
	routes, _, _ := unstructuredSlice(got.Object, "spec", "routes")
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
	e, fc := newFakeEngine(t, "east")
	d := composedEntry()
	ctx := context.Background()
	old := workspaceOwner("a", "id-old", "default")
	if _, err := e.Apply(ctx, old, []Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"default", "team-b"} {
		other := workspaceOwner("a", "id-other", ws)
		_, err := e.Apply(ctx, other, []Desired{d}, nil)
		if err == nil || !strings.Contains(err.Error(), `from instance id-old (workspace "default")`) || !strings.Contains(err.Error(), "import it instead") {
			t.Fatalf("another state's instance of the same name (workspace %q): want a conflict naming the instance, got %v", ws, err)
		}
		if id := live(t, fc["east"], d.Entry).GetLabels()["traffic-policy.mesh-intent.io/a"]; id != "id-old" {
			t.Fatalf("the refused write replaced the contribution: label %q", id)
		}
	}
	renewed := workspaceOwner("a", "id-new", "default", "id-old")
	if _, err := e.Apply(ctx, renewed, []Desired{d}, nil); err != nil {
		t.Fatalf("the state's own previous instance was not replaced: %v", err)
	}
	if id := live(t, fc["east"], d.Entry).GetLabels()["traffic-policy.mesh-intent.io/a"]; id != "id-new" {
		t.Fatalf("contribution label %q, want the new instance", id)
	}
	if _, err := e.Delete(ctx, old, []Entry{d.Entry}); err != nil {
		t.Fatal(err)
	}
	vs := live(t, fc["east"], d.Entry)
	if vs == nil || vs.GetLabels()["traffic-policy.mesh-intent.io/a"] != "id-new" {
		t.Fatalf("releasing the old instance removed the new one's contribution: %v", vs)
	}
}

// An intent takes back from our composers the fields it declares in its
// own object (a virtual destination's new host in its DestinationRule,
// which the traffic policies' composer repeats until they are applied);
// the same conflict with another tool stays an error.
func TestApplyTakesItsFieldsBackFromComposers(t *testing.T) {
	for _, tc := range []struct {
		manager   string
		wantForce bool
	}{{"test/traffic-policy-composer", true}, {"argocd-controller", false}} {
		t.Run(tc.manager, func(t *testing.T) {
			e, fc := newFakeEngine(t, "east")
			want := serviceEntry(testOwner, "east", "a")
			seed(t, fc["east"], want.Entry, testOwner.Labels())
			gvr := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}
			u := live(t, fc["east"], want.Entry)
			u.SetManagedFields(applyManaged(tc.manager))
			if err := fc["east"].Tracker().Update(gvr, u, "istio-system"); err != nil {
				t.Fatal(err)
			}
			fc["east"].PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
				pa := a.(k8stesting.PatchActionImpl)
				if pa.PatchOptions.Force != nil && *pa.PatchOptions.Force {
					return false, nil, nil
				}
				return true, nil, fieldConflict(tc.manager, ".spec.hosts")
			})
			_, err := e.Apply(context.Background(), testOwner, []Desired{want}, []Entry{want.Entry})
			forced := false
			for _, a := range applies(fc["east"]) {
				forced = forced || (a.PatchOptions.Force != nil && *a.PatchOptions.Force)
			}
			if forced != tc.wantForce || (err == nil) != tc.wantForce {
				t.Fatalf("conflict with %s: forced %v, error %v; want forced %v", tc.manager, forced, err, tc.wantForce)
			}
		})
	}
}
