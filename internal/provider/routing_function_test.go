package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// callRoutingSummary calls provider::mesh::routing_summary with its three
// arguments as Go values (attr values built from the definition's
// parameter types) and returns the result or the error.
func callRoutingSummary(t *testing.T, args ...[]any) (map[string]string, *function.FuncError) {
	t.Helper()
	ctx := context.Background()
	f := NewRoutingSummaryFunction()
	var def function.DefinitionResponse
	f.Definition(ctx, function.DefinitionRequest{}, &def)
	vals := make([]attr.Value, len(args))
	for i, a := range args {
		typ := def.Definition.Parameters[i].GetType()
		v, err := tfValue(typ.TerraformType(ctx), a)
		if err != nil {
			t.Fatal(err)
		}
		if vals[i], err = typ.ValueFromTerraform(ctx, v); err != nil {
			t.Fatal(err)
		}
	}
	resp := function.RunResponse{Result: function.NewResultData(types.MapUnknown(types.StringType))}
	f.Run(ctx, function.RunRequest{Arguments: function.NewArgumentsData(vals)}, &resp)
	if resp.Error != nil {
		return nil, resp.Error
	}
	out := map[string]string{}
	for h, v := range resp.Result.Value().(types.Map).Elements() {
		out[h] = v.(types.String).ValueString()
	}
	return out, nil
}

// routing_summary gathers the routing attributes of the intents given by
// hostname: a policy on a virtual destination joins its host, one on a
// service the service's cluster-local name, and the text is
// routing.Summarize's of those statements.
func TestRoutingSummaryGathersStatementsByHostname(t *testing.T) {
	got, ferr := callRoutingSummary(t,
		[]any{map[string]any{"name": "user", "hostname": "user.global", "routing": map[string]any{"east": "east > onprem", "west": "east > onprem"}}},
		[]any{
			map[string]any{"name": "user-shift", "destination": map[string]any{"virtual_destination": "user.global"}, "routing": map[string]any{"east": "east 80%, onprem 20%"}},
			map[string]any{"name": "billing-timeout", "destination": map[string]any{"service": "billing", "namespace": "pay"}, "routing": map[string]any{"east": "timeout 2s"}},
		},
		[]any{map[string]any{"name": "account-to-user", "destination": map[string]any{"virtual_destination": "user.global"}, "routing": map[string]any{"onprem": "allow accounts/account from east: any request"}}},
	)
	if ferr != nil {
		t.Fatal(ferr)
	}
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
		if got[h] != w {
			t.Errorf("%s:\n%s\nwant:\n%s", h, got[h], w)
		}
	}
}

// An element without a routing statement (not an intent) is an error on
// its argument, naming the element and saying to pass the resource.
func TestRoutingSummaryRefusesAnElementWithoutRouting(t *testing.T) {
	_, ferr := callRoutingSummary(t, []any{}, []any{},
		[]any{map[string]any{"name": "b", "destination": map[string]any{"virtual_destination": "user.global"}}})
	if ferr == nil || ferr.FunctionArgument == nil || *ferr.FunctionArgument != 2 || !strings.Contains(ferr.Text, "access_policies[0]") || !strings.Contains(ferr.Text, "[mesh_access_policy.user]") {
		t.Fatalf("want an error on the third argument naming access_policies[0] and the fix, got %v", ferr)
	}
}
