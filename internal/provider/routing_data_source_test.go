package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// readRouting reads mesh_routing with config (Go values, as tfValue
// takes them) and returns its hostnames.
func readRouting(t *testing.T, config map[string]any) map[string]types.String {
	t.Helper()
	ctx := context.Background()
	d := NewRoutingDataSource()
	var sr datasource.SchemaResponse
	d.Schema(ctx, datasource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx)
	v, err := tfValue(typ, config)
	if err != nil {
		t.Fatal(err)
	}
	resp := datasource.ReadResponse{State: tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(typ, nil)}}
	d.Read(ctx, datasource.ReadRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: v}}, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatal(diagText(resp.Diagnostics))
	}
	var hosts types.Map
	if diags := resp.State.GetAttribute(ctx, path.Root("hostnames"), &hosts); diags.HasError() {
		t.Fatal(diagText(diags))
	}
	out := map[string]types.String{}
	for h, v := range hosts.Elements() {
		out[h] = v.(types.String)
	}
	return out
}

// mesh_routing gathers the routing attributes of the intents given by
// hostname: a policy on a virtual destination joins its host, one on a
// service the service's cluster-local name, and the text is
// routing.Summarize's of those statements.
func TestRoutingDataSourceGathersStatementsByHostname(t *testing.T) {
	got := readRouting(t, map[string]any{
		"virtual_destinations": []any{map[string]any{"name": "user", "hostname": "user.global", "routing": map[string]any{"east": "east > onprem", "west": "east > onprem"}}},
		"traffic_policies": []any{
			map[string]any{"name": "user-shift", "destination": map[string]any{"virtual_destination": "user.global"}, "routing": map[string]any{"east": "east 80%, onprem 20%"}},
			map[string]any{"name": "billing-timeout", "destination": map[string]any{"service": "billing", "namespace": "pay"}, "routing": map[string]any{"east": "timeout 2s"}},
		},
		"access_policies": []any{map[string]any{"name": "account-to-user", "destination": map[string]any{"virtual_destination": "user.global"}, "routing": map[string]any{"onprem": "allow accounts/account from east: any request"}}},
	})
	want := map[string]string{
		"user.global": `failover mesh_virtual_destination "user":
  east, west: east > onprem
shift mesh_traffic_policy "user-shift":
  east: east 80%, onprem 20%
access mesh_access_policy "account-to-user":
  onprem: allow accounts/account from east: any request`,
		"billing.pay.svc.cluster.local": "shift mesh_traffic_policy \"billing-timeout\":\n  east: timeout 2s",
	}
	if len(got) != len(want) {
		t.Fatalf("hosts %v, want %d", got, len(want))
	}
	for h, w := range want {
		if got[h].ValueString() != w {
			t.Errorf("%s:\n%s\nwant:\n%s", h, got[h].ValueString(), w)
		}
	}
}

// An element that is not an intent (no routing) is an error on its own
// list index, saying to pass the resource itself.
func TestRoutingDataSourceRefusesAnElementWithoutRouting(t *testing.T) {
	ctx := context.Background()
	d := NewRoutingDataSource()
	var sr datasource.SchemaResponse
	d.Schema(ctx, datasource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx)
	v, err := tfValue(typ, map[string]any{"access_policies": []any{
		map[string]any{"name": "a", "destination": map[string]any{"virtual_destination": "user.global"}, "routing": map[string]any{}},
		map[string]any{"name": "b", "destination": map[string]any{"virtual_destination": "user.global"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	resp := datasource.ReadResponse{State: tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(typ, nil)}}
	d.Read(ctx, datasource.ReadRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: v}}, &resp)
	if len(resp.Diagnostics) != 1 || !strings.Contains(diagText(resp.Diagnostics), "[mesh_access_policy.user]") {
		t.Fatalf("want one error saying to pass the resource, got %q", diagText(resp.Diagnostics))
	}
	if p := resp.Diagnostics[0].(diag.DiagnosticWithPath).Path(); !p.Equal(path.Root("access_policies").AtListIndex(1)) {
		t.Errorf("the error is on %s, want access_policies[1]", p)
	}
}
