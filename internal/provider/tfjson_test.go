package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

func TestIntentJSON(t *testing.T) {
	retries := types.ObjectValueMust(map[string]attr.Type{"attempts": types.Int64Type, "per_try_timeout": types.StringType, "retry_on": types.ListType{ElemType: types.StringType}},
		map[string]attr.Value{"attempts": types.Int64Value(3), "per_try_timeout": types.StringValue("500ms"),
			"retry_on": types.ListValueMust(types.StringType, []attr.Value{types.StringValue("5xx")})})
	match := types.ListValueMust(types.ObjectType{AttrTypes: map[string]attr.Type{"uri_prefix": types.StringType, "headers": types.MapType{ElemType: types.StringType}}},
		[]attr.Value{types.ObjectValueMust(map[string]attr.Type{"uri_prefix": types.StringType, "headers": types.MapType{ElemType: types.StringType}},
			map[string]attr.Value{"uri_prefix": types.StringValue("/v2"), "headers": types.MapValueMust(types.StringType, map[string]attr.Value{"x-canary_flag": types.StringValue("true")})})})
	var in trafficpolicy.Intent
	err := intentJSON(context.Background(), map[string]attr.Value{
		"name": types.StringValue("p"), "timeout": types.StringNull(), "retries": retries, "match": match,
	}, &in)
	if err != nil {
		t.Fatal(err)
	}
	if in.Name != "p" || in.Timeout != "" || in.Retries == nil || in.Retries.Attempts != 3 || in.Retries.PerTryTimeout != "500ms" || in.Retries.RetryOn[0] != "5xx" {
		t.Fatalf("converted badly: %+v %+v", in, in.Retries)
	}
	// Map keys are data, never renamed.
	if len(in.Match) != 1 || in.Match[0].URIPrefix != "/v2" || in.Match[0].Headers["x-canary_flag"] != "true" {
		t.Fatalf("match converted badly: %+v", in.Match)
	}
	if camel("consecutive_5xx_errors") != "consecutive5xxErrors" || camel("http1_max_pending_requests") != "http1MaxPendingRequests" {
		t.Fatal("camel case conversion")
	}
}
