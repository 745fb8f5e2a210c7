package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/flux"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// A pull cluster whose repository is not known at plan (an
// ECR repository replaced in the same run: `repository =
// aws_ecr_repository.east.repository_url`) is left out of the engine's
// pull clusters at plan ("checked at apply", pullClusters), so the engine
// takes it for a push cluster. Given the read-only connection the guide
// recommends for Flux's status, the push-beside-Flux check then finds
// the state's own objects there carrying the labels of the state's own
// Kustomization (Flux applied them from its artifact) and fails the plan
// on every one of them: a pull cluster's own delivery turned into a plan
// error, where nothing at apply would be refused (the cluster is pull
// there).
func TestPullClusterWithUnknownRepositoryIsNotCheckedAsPush(t *testing.T) {
	pull := map[string]ociModel{"east": {
		Repository: types.StringUnknown(), Insecure: types.BoolNull(), Retired: types.BoolNull(),
		DockerConfigFile: types.StringNull(), Username: types.StringNull(), Password: types.StringNull(), Token: types.StringNull(),
	}}
	var diags diag.Diagnostics
	d := buildDelivery(pull, "team-a", true, false, &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	fc := enginetest.New("east")
	owner := engine.Owner{Kind: intentkind.VirtualDestination.Owner, Name: "user", ID: "id-user"}
	en := engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "ServiceEntry", Namespace: "istio-system", Name: "user"}
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": en.APIVersion, "kind": en.Kind, "spec": map[string]any{"hosts": []any{"user.global"}}}}
	obj.SetNamespace(en.Namespace)
	obj.SetName(en.Name)
	labels := owner.Labels()
	labels["kustomize.toolkit.fluxcd.io/name"] = "mesh-team-a"
	labels["kustomize.toolkit.fluxcd.io/namespace"] = "flux-system"
	obj.SetLabels(labels)
	fc.Put(t, "east", obj)
	k := &unstructured.Unstructured{Object: map[string]any{"apiVersion": flux.KustomizeAPIVersion, "kind": flux.KustomizationKind,
		"spec": map[string]any{"prune": true, "sourceRef": map[string]any{"kind": flux.OCIRepositoryKind, "name": "mesh-team-a"}}}}
	k.SetNamespace("flux-system")
	k.SetName("mesh-team-a")
	if err := fc["east"].Tracker().Create(flux.Resources[flux.KustomizationKind], k, "flux-system"); err != nil {
		t.Fatal(err)
	}
	data := &providerData{Engine: &engine.Engine{Clients: fc, Delivery: d}}
	if got := checkDelivery(context.Background(), data, owner, []engine.Entry{en}); got.HasError() {
		t.Errorf("plan of pull cluster east (repository known only at apply) fails: %v", got)
	}
}

// The state's workspace unknown at plan: every pull cluster's artifact is
// unknown, and none is checked as push.
func TestPullClustersOfAnUnknownWorkspaceAreUnknownDelivery(t *testing.T) {
	pull := map[string]ociModel{"east": {
		Repository: types.StringValue("registry.example.com/mesh/east"), Insecure: types.BoolNull(), Retired: types.BoolNull(),
		DockerConfigFile: types.StringNull(), Username: types.StringNull(), Password: types.StringNull(), Token: types.StringNull(),
	}}
	var diags diag.Diagnostics
	d := buildDelivery(pull, "", false, true, &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if !d.Unknown("east") || d.Unknown("west") {
		t.Errorf("Unknown(east) = %v, Unknown(west) = %v; want true, false", d.Unknown("east"), d.Unknown("west"))
	}
	if _, pull, _ := d.Pull("east"); pull {
		t.Error("east is pull with its artifact's tag unknown")
	}
}
