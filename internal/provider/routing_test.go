package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// planRoutingOf runs a virtual destination's ModifyPlan on a configuration
// (JSON) and returns the planned routing attribute.
func planRoutingOf(t *testing.T, data *providerData, config string) types.Map {
	t.Helper()
	resp := vdModifyPlan(t, data, config)
	var got types.Map
	if d := resp.Plan.GetAttribute(context.Background(), path.Root("routing"), &got); d.HasError() {
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
