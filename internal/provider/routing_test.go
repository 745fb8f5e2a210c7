package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
)

// planRoutingOf runs a virtual destination's ModifyPlan on a configuration
// (JSON) and returns the planned routing attribute.
func planRoutingOf(t *testing.T, data *providerData, config string) types.Map {
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
	req := resource.ModifyPlanRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: v}, Plan: tfsdk.Plan{Schema: sr.Schema, Raw: v},
		State: tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(typ, nil)}}
	resp := resource.ModifyPlanResponse{Plan: req.Plan}
	r.ModifyPlan(ctx, req, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("plan failed: %s", diagText(resp.Diagnostics))
	}
	var got types.Map
	if d := resp.Plan.GetAttribute(ctx, path.Root("routing"), &got); d.HasError() {
		t.Fatal(d)
	}
	return got
}

// The plan of a virtual destination states each client's failover order
// (here every registered cluster is a client), known at plan, offline.
func TestPlanStatesRouting(t *testing.T) {
	const config = `{"name":"user","hostname":"user.global","namespace":"istio-system","ports":[{"number":8080,"protocol":"HTTP"}],` +
		`"backends":[{"cluster":"west","namespace":"users","service":"user","priority":1},{"cluster":"east","namespace":"users","service":"user","priority":0}]}`
	got := planRoutingOf(t, recordsData(newFakeClusterSet(t, "east", "west")), config)
	want := types.MapValueMust(types.StringType, map[string]attr.Value{
		"east": types.StringValue("east > west"),
		"west": types.StringValue("east > west"),
	})
	if !got.Equal(want) {
		t.Errorf("planned routing: got %s, want %s", got, want)
	}

	// A registry known only after apply: the routing is too.
	data := recordsData(newFakeClusterSet(t, "east", "west"))
	data.RegistryUnknown = true
	if got := planRoutingOf(t, data, config); !got.IsUnknown() {
		t.Errorf("with the registry unknown, planned routing: got %s, want unknown", got)
	}
}
