package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func managed(manager string, op metav1.ManagedFieldsOperationType, fields string) metav1.ManagedFieldsEntry {
	return metav1.ManagedFieldsEntry{Manager: manager, Operation: op, APIVersion: "security.istio.io/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(fields)}
}

// Fields another manager set in spec are drift, with the manager and the
// path; its labels are not; fields we own too, the provider's other
// managers (the composer sharing a DestinationRule), our intent's former
// managers and server defaults (no manager) are not.
func TestForeignSpecFields(t *testing.T) {
	owner := Owner{Kind: "cluster", Name: "east"}
	manager := owner.FieldManager("")
	live := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
		"metadata": map[string]any{"name": "mesh-default-deny", "namespace": "istio-system"}}}
	live.SetManagedFields([]metav1.ManagedFieldsEntry{
		managed(manager, metav1.ManagedFieldsOperationApply, `{"f:metadata":{"f:labels":{"f:app.kubernetes.io/managed-by":{}}},"f:spec":{"f:action":{}}}`),
		managed("kubectl-edit", metav1.ManagedFieldsOperationUpdate, `{"f:metadata":{"f:labels":{"f:team":{}}},"f:spec":{"f:rules":{}}}`),
		managed("argocd", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:action":{}}}`),
		managed("old-base/cluster.east", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:selector":{}}}`),
	})
	live.SetManagedFields(append(live.GetManagedFields(),
		managed("terraform-provider-mesh/traffic-policy-composer", metav1.ManagedFieldsOperationApply, `{"f:spec":{"f:trafficPolicy":{}}}`)))
	// The composer counts only where its kind contributes: never on an
	// AuthorizationPolicy (no composed kind writes one), whatever labels
	// and annotations it carries (issue 36, item 3).
	live.SetLabels(map[string]string{"traffic-policy.mesh-intent.io/p": "id-p"})
	live.SetAnnotations(map[string]string{"traffic-policy.mesh-intent.io/p": "route-of-p"})
	got, err := (&Engine{}).foreignSpecFields(live, owner, manager)
	if err != nil || len(got) != 2 {
		t.Fatalf("foreign fields %v (%v): a composer's name with a contribution on an object no composed kind writes is foreign", got, err)
	}
	live.SetLabels(nil)
	if got, err = (&Engine{}).foreignSpecFields(live, owner, manager); err != nil || len(got) != 2 {
		t.Fatalf("foreign fields %v (%v): a composer on an object nothing composes is foreign", got, err)
	}
	if got[0].Manager != "kubectl-edit" || got[0].Field != ".spec.rules" {
		t.Fatalf("foreign fields %v, want .spec.rules by kubectl-edit first", got)
	}
	if note := driftNote(Entry{Cluster: "east", APIVersion: "security.istio.io/v1", Kind: "AuthorizationPolicy", Namespace: "istio-system", Name: "mesh-default-deny"}, got); note.Cluster != "east" ||
		note.Detail == "" || note.Summary != "Drift in AuthorizationPolicy istio-system/mesh-default-deny in cluster east" {
		t.Fatalf("note %+v", note)
	}
}

// Removing the list elements another manager added takes out exactly
// those: from the back, by index as a number, so that removing one never
// shifts another still to come (as strings, "/9" came before "/11", and
// the element after the eleventh went instead), and a field of an element
// before the element.
func TestRemoveFieldsTakesOutExactlyTheForeignElements(t *testing.T) {
	for _, c := range []struct {
		name    string
		ports   int
		foreign []int // elements another manager added
		edited  int   // an element of ours whose targetPort they set, or -1
	}{
		{"a short list", 5, []int{1, 3}, 2},
		{"eleven and more", 13, []int{2, 9, 11}, 10},
		// As strings, /9 went first and /11 then named p12, which went
		// without an error.
		{"eleven and more, no error to show", 14, []int{9, 11}, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			owner := Owner{Kind: "virtual_destination", Name: "user"}
			manager := owner.FieldManager("")
			e, fc := newFakeEngine(t, "east")
			isForeign := map[int]bool{}
			for _, i := range c.foreign {
				isForeign[i] = true
			}
			var ports []any
			var wantNames []string
			ours, theirs := map[string]any{}, map[string]any{}
			for i := 0; i < c.ports; i++ {
				name := fmt.Sprintf("p%d", i)
				port := map[string]any{"name": name, "number": int64(9000 + i), "protocol": "HTTP"}
				key := fmt.Sprintf(`k:{"name":%q}`, name)
				fields := map[string]any{".": map[string]any{}, "f:name": map[string]any{}, "f:number": map[string]any{}, "f:protocol": map[string]any{}}
				switch {
				case isForeign[i]:
					theirs[key] = fields
				default:
					ours[key] = fields
					wantNames = append(wantNames, name)
				}
				if i == c.edited {
					port["targetPort"] = int64(8000)
					theirs[key] = map[string]any{"f:targetPort": map[string]any{}}
				}
				ports = append(ports, port)
			}
			fieldsV1 := func(ports map[string]any) string {
				raw, err := json.Marshal(map[string]any{"f:spec": map[string]any{"f:ports": ports}})
				if err != nil {
					t.Fatal(err)
				}
				return string(raw)
			}
			obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "ServiceEntry",
				"metadata": map[string]any{"name": "vd-user", "namespace": "istio-system"},
				"spec":     map[string]any{"hosts": []any{"user.global"}, "ports": ports}}}
			obj.SetUID(nextUID())
			obj.SetResourceVersion("1")
			obj.SetManagedFields([]metav1.ManagedFieldsEntry{
				managed(manager, metav1.ManagedFieldsOperationApply, fieldsV1(ours)),
				managed("kubectl-edit", metav1.ManagedFieldsOperationUpdate, fieldsV1(theirs)),
			})
			gvr := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}
			if err := fc["east"].Tracker().Create(gvr, obj, "istio-system"); err != nil {
				t.Fatal(err)
			}
			fs, err := e.foreignSpecFields(obj, owner, manager)
			if err != nil {
				t.Fatal(err)
			}
			want := len(c.foreign)
			if c.edited >= 0 {
				want++ // and the targetPort
			}
			if len(fs) != want {
				t.Fatalf("foreign fields %v, want the elements %v and the targetPort of p%d if any", fs, c.foreign, c.edited)
			}
			ri := fc["east"].Resource(gvr).Namespace("istio-system")
			if _, err := removeFields(context.Background(), ri, obj, fs, manager); err != nil {
				t.Fatalf("removing %s: %v", describeForeign(fs), err)
			}
			after, err := ri.Get(context.Background(), "vd-user", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			left, _, err := unstructured.NestedSlice(after.Object, "spec", "ports")
			if err != nil {
				t.Fatal(err)
			}
			var gotNames []string
			for _, p := range left {
				pm := p.(map[string]any)
				gotNames = append(gotNames, pm["name"].(string))
				if _, set := pm["targetPort"]; set {
					t.Errorf("the targetPort another manager set on %s stays", pm["name"])
				}
			}
			if !slices.Equal(gotNames, wantNames) {
				t.Fatalf("ports left %v, want %v (only %v removed)", gotNames, wantNames, c.foreign)
			}
		})
	}
}

// The order of removal, pointer by pointer: indices as numbers, the back
// first, fields of an element before the element, each pointer once.
func TestBackToFront(t *testing.T) {
	got := backToFront([]string{"/spec/ports/9", "/spec/ports/11", "/spec/ports/2", "/spec/ports/10/targetPort", "/spec/ports/10", "/spec/ports/11", "/spec/hosts/0"})
	want := []string{"/spec/ports/11", "/spec/ports/10/targetPort", "/spec/ports/10", "/spec/ports/9", "/spec/ports/2", "/spec/hosts/0"}
	if !slices.Equal(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}
