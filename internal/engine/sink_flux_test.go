package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/flux"
	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/flux/fluxtest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// A push state and an object a Flux Kustomization applies (sink_flux.go).

// seedRetiredComposed seeds on cluster east a composed object that
// another of state-a's policies contributes to, applied by Kustomization
// flux-system/mesh-prod from url, tag state-a.
func seedRetiredComposed(t *testing.T, fc fakeClusters, url string) Desired {
	t.Helper()
	d := Desired{Entry: Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "istio-system", Name: "tp-user.global", Digest: "c"},
		Manifest: map[string]any{}}
	seed(t, fc["east"], d.Entry, with(map[string]string{LabelManagedBy: ManagedByValue, "traffic-policy.mesh-intent.io/b": "id-b"}, fluxtest.Labels("mesh-prod")))
	fluxtest.Kustomization(t, fc["east"], "mesh-prod", url, "state-a")
	return d
}

func with(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// An object of the push state's own intent (its labels) that a
// Kustomization applies (another state published it, or the state's own
// former artifact without retired): the plan fails.
func TestPushWriteOfAnObjectFluxAppliesRefused(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], d.Entry, with(testOwner.Labels(), fluxtest.Labels("mesh-prod")))
	fluxtest.Kustomization(t, fc["east"], "mesh-prod", "oci://registry.example.com/mesh/east", "prod")
	errs, _ := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry})
	if len(errs) != 1 || !errors.Is(errs[0], errFluxApplied) || !strings.Contains(errs[0].Detail, "flux-system/mesh-prod") || !strings.Contains(errs[0].Detail, "retired = true") {
		t.Fatalf("plan errors: %v, want one naming Kustomization flux-system/mesh-prod and the fix", errs)
	}
}

// Flux's labels left on an object whose Kustomization is gone: nothing
// applies it any more, and the push state writes it.
func TestPushWriteOfAnObjectWithLeftoverFluxLabelsAllowed(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], d.Entry, with(testOwner.Labels(), fluxtest.Labels("gone")))
	if errs, _ := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry}); len(errs) != 0 {
		t.Errorf("plan errors: %v, want none (the Kustomization is gone)", errs)
	}
}

// Pull to push (delivery.oci.retired): the Kustomization that applies the
// state's own former artifact is no other writer.
func TestPushWriteOfTheStatesRetiredArtifactAllowed(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	former := oci.Target{Repository: "registry.example.com/mesh/east", Tag: "state-a"}
	e.Delivery = retiredClusters{"east": former}
	// A composed object of the former artifact that holds no contribution
	// of this instance yet (another of the state's policies): known by
	// the Kustomization's OCIRepository.
	d := seedRetiredComposed(t, fc, "oci://registry.example.com/mesh/east")
	if errs, _ := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry}); len(errs) != 0 {
		t.Errorf("plan errors: %v, want none (the Kustomization applies this state's retired artifact)", errs)
	}
	// Another tag of the repository is another state's.
	e.Delivery = retiredClusters{"east": oci.Target{Repository: former.Repository, Tag: "other"}}
	if errs, _ := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry}); len(errs) != 1 {
		t.Errorf("plan errors: %v, want one (the Kustomization applies another tag)", errs)
	}
}

// adopt_existing on an object a Kustomization applies (not the
// provider's): refused before writing, naming the Kustomization.
func TestAdoptOfAnObjectFluxAppliesRefused(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	owner := testOwner
	owner.Adopt = true
	d := serviceEntry(owner, "east", "a")
	seed(t, fc["east"], d.Entry, fluxtest.Labels("apps"))
	fluxtest.Kustomization(t, fc["east"], "apps", "oci://registry.example.com/apps", "v1")
	errs := e.ForeignObjects(context.Background(), owner, []Desired{d}, nil)
	if len(errs) != 1 || !errors.Is(errs[0], errFluxApplied) || !strings.Contains(errs[0].Detail, "flux-system/apps") || !strings.Contains(errs[0].Detail, "adopt") {
		t.Fatalf("errors: %v, want one naming Kustomization flux-system/apps", errs)
	}
}

// This instance's own object on a cluster leaving pull (retired) is
// written without reading the Kustomization; elsewhere a Kustomization
// that may not be read (403) is a warning naming it, the cluster and the
// grant to add (kubectl), and the write proceeds: after "Back to push"
// every object keeps Flux's labels, and a Role without that grant must
// not fail every plan.
func TestPushWriteWhereTheKustomizationIsForbiddenWarnsWithTheGrant(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	fc["east"].PrependReactor("get", "kustomizations", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(flux.Resources[flux.KustomizationKind].GroupResource(), "mesh-prod", errors.New("RBAC"))
	})
	d := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], d.Entry, with(testOwner.Labels(), fluxtest.Labels("mesh-prod")))
	errs, warns := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry})
	if len(errs) != 0 {
		t.Fatalf("plan errors: %v, want none (a forbidden read is a warning: the write proceeds)", errs)
	}
	if len(warns) != 1 || !errors.Is(warns[0], errFluxApplied) {
		t.Fatalf("plan warnings: %v, want one", warns)
	}
	for _, want := range []string{"flux-system/mesh-prod", "cluster east", "kubectl -n flux-system create role", "--verb=get --resource=kustomizations.kustomize.toolkit.fluxcd.io", "create rolebinding"} {
		if !strings.Contains(warns[0].Detail, want) {
			t.Errorf("warning %q does not say %q", warns[0].Detail, want)
		}
	}
	e.Delivery = retiredClusters{"east": oci.Target{Repository: "registry.example.com/mesh/east", Tag: "state-a"}}
	if errs, warns := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry}); len(errs) != 0 || len(warns) != 0 {
		t.Errorf("plan errors %v, warnings %v on the state's own object of a retired cluster: want none (the Kustomization is not read)", errs, warns)
	}
}
