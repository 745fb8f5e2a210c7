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

// Review of issue 38 (finding 1): a plan that cannot translate yet (the
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
func TestReview54_AdoptedIsNotKnownWhileTheObjectsAreUnknown(t *testing.T) {
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
