package engine

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
