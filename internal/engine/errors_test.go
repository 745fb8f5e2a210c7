package engine

import (
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestConflictManagers(t *testing.T) {
	err := &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: 409, Reason: metav1.StatusReasonConflict,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{
			{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "gitops" using networking.istio.io/v1`, Field: ".spec.servers"},
			{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "gitops" using networking.istio.io/v1`, Field: ".spec.selector.istio"},
		}},
	}}
	managers, fields := conflictManagers(err)
	if strings.Join(managers, ",") != "gitops" || strings.Join(fields, ",") != ".spec.servers,.spec.selector.istio" {
		t.Fatalf("managers %v fields %v", managers, fields)
	}
	e := Entry{Cluster: "west", APIVersion: "networking.istio.io/v1", Kind: "Gateway", Namespace: "istio-system", Name: "gw"}
	msg := conflictError(e, managers, fields, err).Error()
	for _, want := range []string{"Gateway istio-system/gw in cluster west", ".spec.servers", `"gitops"`, "force_conflicts = true"} {
		if !strings.Contains(msg, want) {
			t.Errorf("conflict message lacks %q: %s", want, msg)
		}
	}
}

func TestMissingCRDIsToldApartFromMissingObject(t *testing.T) {
	noObject := apierrors.NewNotFound(schema.GroupResource{Group: "networking.istio.io", Resource: "gateways"}, "gw")
	if isMissingResource(noObject) {
		t.Fatal("a missing object is not a missing CRD")
	}
	noCRD := &apierrors.StatusError{ErrStatus: metav1.Status{Code: 404, Reason: metav1.StatusReasonNotFound, Message: "the server could not find the requested resource"}}
	if !isMissingResource(noCRD) {
		t.Fatal("a 404 without an object name means the resource type is not served")
	}
	e := Entry{Cluster: "onprem", APIVersion: "networking.istio.io/v1", Kind: "Gateway"}
	if msg := describeObject(e, noCRD); !strings.Contains(msg, "Istio's CRDs are not installed") || !strings.Contains(msg, "onprem") {
		t.Fatalf("unhelpful message: %s", msg)
	}
	if !errors.Is(objectError(e, "Applying", noCRD), noCRD) {
		t.Fatal("errors must unwrap to their cause")
	}
}

func TestOwnerLabelsAndManager(t *testing.T) {
	o := Owner{Kind: "virtual-destination", Name: "user"}
	if !o.owns(o.Labels()) {
		t.Fatal("an owner owns its own labels")
	}
	other := Owner{Kind: "virtual-destination", Name: "account"}
	if other.owns(o.Labels()) {
		t.Fatal("an intent must not own another's objects")
	}
	if got := o.FieldManager(""); got != "terraform-provider-mesh/virtual-destination.user" {
		t.Fatalf("field manager %q", got)
	}
}
