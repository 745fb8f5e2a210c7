package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/flux"
	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/flux/fluxtest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// False positives of the push-beside-Flux check (sink_flux.go).

// kustomizationWithInventory creates Kustomization flux-system/<name> on
// cluster whose status.inventory lists ids (kustomize-controller's
// "<namespace>_<name>_<group>_<kind>") and nothing else.
func kustomizationWithInventory(t *testing.T, fc fakeClusters, cluster, name string, ids ...string) {
	t.Helper()
	var entries []any
	for _, id := range ids {
		entries = append(entries, map[string]any{"id": id, "v": "v1"})
	}
	k := &unstructured.Unstructured{Object: map[string]any{"apiVersion": flux.KustomizeAPIVersion, "kind": flux.KustomizationKind,
		"spec":   map[string]any{"prune": true, "sourceRef": map[string]any{"kind": "GitRepository", "name": name}},
		"status": map[string]any{"inventory": map[string]any{"entries": entries}}}}
	k.SetNamespace("flux-system")
	k.SetName(name)
	if err := fc[cluster].Tracker().Create(flux.Resources[flux.KustomizationKind], k, "flux-system"); err != nil {
		t.Fatal(err)
	}
}

// The usual way off Flux for one object: the team removes it from the Git
// source of flux-system/flux-system (which every `flux bootstrap` cluster
// has, and which keeps applying the rest) with pruning disabled for it,
// and adopts it with adopt_existing. kustomize-controller's labels stay
// on the object, and the Kustomization still exists, but its inventory no
// longer lists the object: nothing of Flux applies it any more. The same
// holds for labels copied by hand (`kubectl get -o yaml` of an object of
// another Flux cluster). The adopt is refused all the same, and the
// message tells the user to move the Kustomization's state to push:
// the check reads only that the Kustomization exists, never whether it
// applies this object (its status.inventory).
func TestAdoptOfAnObjectTheKustomizationNoLongerAppliesAllowed(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	owner := testOwner
	owner.Adopt = true
	d := serviceEntry(owner, "east", "a")
	seed(t, fc["east"], d.Entry, fluxtest.Labels("flux-system"))
	// It applies other objects, not this one.
	kustomizationWithInventory(t, fc, "east", "flux-system", "apps_podinfo_apps_Deployment", "apps__Namespace")
	if errs := e.ForeignObjects(context.Background(), owner, []Desired{d}, nil); len(errs) != 0 {
		t.Errorf("adopt refused: %v; want none (Kustomization flux-system/flux-system's inventory does not list %s)", errs, d.Entry)
	}
}

// The same for a push state's own object and for a composed object: the
// plan fails on a Kustomization that exists but does not apply them.
func TestPushWriteOfAnObjectTheKustomizationNoLongerAppliesAllowed(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], d.Entry, with(testOwner.Labels(), fluxtest.Labels("flux-system")))
	kustomizationWithInventory(t, fc, "east", "flux-system", "apps_podinfo_apps_Deployment")
	if errs, _ := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry}); len(errs) != 0 {
		t.Errorf("plan errors: %v; want none (the Kustomization's inventory does not list %s)", errs, d.Entry)
	}
}

// The refusal's summary names the cluster twice ("ServiceEntry
// istio-system/a in cluster east on cluster east is applied by Flux"):
// Entry's String already says the cluster.
func TestFluxAppliedSummaryNamesTheClusterOnce(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], d.Entry, with(testOwner.Labels(), fluxtest.Labels("mesh-prod")))
	fluxtest.Kustomization(t, fc["east"], "mesh-prod", "oci://registry.example.com/mesh/east", "prod")
	errs, _ := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry})
	if len(errs) != 1 {
		t.Fatalf("plan errors: %v, want one", errs)
	}
	if n := strings.Count(errs[0].Summary, "cluster east"); n != 1 {
		t.Errorf("summary %q names cluster east %d times, want once", errs[0].Summary, n)
	}
}

// Flux in hub-and-spoke (a management cluster's Kustomization applies to
// this cluster through spec.kubeConfig, as Flux's own hub-and-spoke
// example does): kustomize-controller labels what it applies here with
// that Kustomization's name and namespace, which do not exist on this
// cluster, whose API server does not even serve Kustomizations. The GET
// answers 404 and fluxApplied takes it for "labels left over": the push
// state writes the object silently, and Flux, forcing its copy at every
// interval, undoes it (and the plan shows drift) forever. The engine's
// own rule for a 404 (listcache.go's kindAbsent: discovery has the last
// word) is not applied: a 404 of a kind this cluster does not serve
// says nothing about whether the Kustomization exists. The plan should
// at least say so, naming the Kustomization.
func TestObjectLabelledByAKustomizationThisClusterDoesNotServeIsNotSilentlyWritten(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	e.Clients = withDiscovery{fakeClusters: fc, served: []string{"serviceentries"}} // no kustomize.toolkit.fluxcd.io
	d := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], d.Entry, with(testOwner.Labels(), fluxtest.Labels("apps-east")))
	errs, warns := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry})
	if len(errs) != 0 {
		t.Errorf("plan errors %v; want none (the write proceeds: whether Flux applies it cannot be read here)", errs)
	}
	var said bool
	for _, x := range warns {
		said = said || strings.Contains(x.Detail, "flux-system/apps-east") && strings.Contains(x.Detail, "cluster east serves no Kustomizations")
	}
	if !said {
		t.Errorf("plan errors %v, warnings %v: nothing names Kustomization flux-system/apps-east, whose labels the object carries on a cluster that serves no Kustomizations (Flux applies it from elsewhere, or was uninstalled)", errs, warns)
	}
}

// The Kustomization's inventory lists the object: Flux applies it, and
// the push write is refused, naming the Kustomization.
func TestPushWriteOfAnObjectTheKustomizationsInventoryListsRefused(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], d.Entry, with(testOwner.Labels(), fluxtest.Labels("flux-system")))
	kustomizationWithInventory(t, fc, "east", "flux-system", "apps_podinfo_apps_Deployment", "istio-system_a_networking.istio.io_ServiceEntry")
	errs, _ := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry})
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "flux-system/flux-system") {
		t.Errorf("plan errors: %v; want one naming Kustomization flux-system/flux-system, whose inventory lists %s", errs, d.Entry)
	}
}

// The retired artifact is known by its reference as the registry
// resolves it: an OCIRepository spelling Docker Hub's repository
// index.docker.io/... applies the state's retired docker.io/... artifact.
func TestPushWriteOfTheStatesRetiredArtifactSpelledOtherwiseAllowed(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	e.Delivery = retiredClusters{"east": oci.Target{Repository: "docker.io/mesh/east", Tag: "state-a"}}
	d := seedRetiredComposed(t, fc, "oci://index.docker.io/mesh/east")
	if errs, _ := e.PlanErrors(context.Background(), testOwner, []Entry{d.Entry}); len(errs) != 0 {
		t.Errorf("plan errors: %v, want none (the Kustomization applies this state's retired artifact, spelled otherwise)", errs)
	}
}

// The grant the forbidden warning gives names the user the 403 names.
func TestKustomizationGrantNamesTheForbiddenUser(t *testing.T) {
	err := errors.New(`kustomizations.kustomize.toolkit.fluxcd.io "mesh-prod" is forbidden: User "system:serviceaccount:kube-system:terraform-provider-mesh" cannot get resource "kustomizations" in API group "kustomize.toolkit.fluxcd.io" in the namespace "flux-system"`)
	got := kustomizationGrant("flux-system", err)
	for _, want := range []string{"kubectl -n flux-system create role terraform-provider-mesh-flux-read --verb=get --resource=kustomizations.kustomize.toolkit.fluxcd.io",
		"--role=terraform-provider-mesh-flux-read --user=system:serviceaccount:kube-system:terraform-provider-mesh"} {
		if !strings.Contains(got, want) {
			t.Errorf("grant %q does not say %q", got, want)
		}
	}
}
