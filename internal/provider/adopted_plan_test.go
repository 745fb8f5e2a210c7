package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// vdCreatePlanAdopted plans the creation of the virtual destination
// config (JSON) on data, as Terraform's framework hands a create to
// ModifyPlan (computed attributes unknown), and returns the planned
// adopted attribute.
func vdCreatePlanAdopted(t *testing.T, data *providerData, config string) types.Map {
	t.Helper()
	ctx := context.Background()
	r := NewVirtualDestinationResource().(*virtualDestinationResource)
	r.data = data
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx)
	v, err := discovery.ConfigValue(typ, config)
	if err != nil {
		t.Fatal(err)
	}
	adoptedPath := tftypes.NewAttributePath().WithAttributeName("adopted")
	objectsPath := tftypes.NewAttributePath().WithAttributeName("objects")
	plan, err := tftypes.Transform(v, func(p *tftypes.AttributePath, x tftypes.Value) (tftypes.Value, error) {
		if p.Equal(adoptedPath) || p.Equal(objectsPath) {
			return tftypes.NewValue(x.Type(), tftypes.UnknownValue), nil
		}
		return x, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	req := resource.ModifyPlanRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: v}, Plan: tfsdk.Plan{Schema: sr.Schema, Raw: plan},
		State: tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(typ, nil)}}
	resp := resource.ModifyPlanResponse{Plan: req.Plan}
	r.ModifyPlan(ctx, req, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("plan: %s", diagText(resp.Diagnostics))
	}
	var adopted types.Map
	if d := resp.Plan.GetAttribute(ctx, path.Root("adopted"), &adopted); d.HasError() {
		t.Fatal(diagText(d))
	}
	return adopted
}

// A plan that cannot translate yet (the
// provider's clusters not known until apply: RegistryUnknown, or
// ErrUnknownPlacement) plans the objects unknown, but plans adopted as a
// KNOWN null. At apply, Terraform plans the resource again with the
// clusters known; that plan finds the hand-written DestinationRule on the
// host and records it in adopted: null became a map, and Terraform
// refuses the apply ("Provider produced inconsistent final plan ...
// .adopted: was null, but now ..."). Creating mesh_cluster-fed provider
// settings and an adopting intent in one apply (a first migration) fails.
// adopted must stay unknown while the plan cannot look, or equal what
// the apply's plan records.
func TestAdoptedIsNotKnownWhileTheObjectsAreUnknown(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	dr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "spec": map[string]any{"host": "user.global"}}}
	dr.SetNamespace("users")
	dr.SetName("user-dr")
	f.Put(t, "east", dr)

	// The plan: the clusters are not known yet.
	blind := recordsData(f)
	blind.RegistryUnknown = true
	atPlan := vdCreatePlanAdopted(t, blind, vdAdoptConfig)

	// The apply's plan again, in a new provider process, clusters known.
	atApply := vdCreatePlanAdopted(t, recordsData(f), vdAdoptConfig)
	if atApply.IsNull() || atApply.IsUnknown() || len(atApply.Elements()) != 1 {
		t.Fatalf("the plan with the clusters known: adopted %v, want the hand-written DestinationRule recorded", atApply)
	}
	if !atPlan.IsUnknown() && !atPlan.Equal(atApply) {
		t.Fatalf("adopted planned %v while the clusters are unknown, and %v by the apply's plan: Terraform refuses the apply (inconsistent final plan)", atPlan, atApply)
	}
}

// Which of a virtual destination and a
// traffic policy on one host records their shared hand-written
// DestinationRule depends on which one this provider process planned
// first (runstate.PlannedObjects.FirstAdopter). Terraform plans resources
// without a reference between them in parallel, in any order, and plans
// each again at apply in a new process: a policy whose destination names
// the hostname as a literal (no reference to the virtual destination),
// planned first at plan and second at apply, leaves the virtual
// destination's adopted null at plan and a map at apply, which Terraform
// refuses (inconsistent final plan). The record must not depend on the
// order resources are planned in.
func TestAdoptedDoesNotDependOnPlanOrder(t *testing.T) {
	f := newFakeClusterSet(t, "east")
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "spec": map[string]any{"host": "user.global"}}}
	o.SetNamespace("users")
	o.SetName("user-dr")
	f.Put(t, "east", o)
	desired := []engine.Desired{{Entry: engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "DestinationRule", Namespace: "istio-system", Name: "vd-user"},
		Manifest: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "metadata": map[string]any{"name": "vd-user", "namespace": "istio-system"}, "spec": map[string]any{"host": "user.global"}}}}
	vd := engine.Owner{Kind: "virtual-destination", Name: "user", Adopt: true}
	tp := engine.Owner{Kind: "traffic-policy", Name: "user-pool", Adopt: true}
	recorded := func(data *providerData, owner engine.Owner) int {
		_, adopt, diags := planAdoption(context.Background(), data, intentSpec{Owner: owner}, desired, false)
		if diags.HasError() {
			t.Fatal(diagText(diags))
		}
		return len(adopt)
	}
	// The plan: the policy first.
	atPlan := recordsData(f)
	recorded(atPlan, tp)
	vdAtPlan := recorded(atPlan, vd)
	// The apply, a new process: the virtual destination first.
	atApply := recordsData(f)
	vdAtApply := recorded(atApply, vd)
	if vdAtPlan != vdAtApply {
		t.Fatalf("the virtual destination records %d hand-written objects at plan (planned after the policy) and %d at apply (planned first): Terraform refuses the apply", vdAtPlan, vdAtApply)
	}
}
