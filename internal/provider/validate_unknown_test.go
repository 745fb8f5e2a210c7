package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// tpConfigWith is a traffic policy's configuration as ValidateConfig gets
// it: leafBase's service destination with values (leaf paths as
// leafValue reads them), then change applied to each value.
func tpConfigWith(t *testing.T, values map[string]any, change func(*tftypes.AttributePath, tftypes.Value) (tftypes.Value, error)) tfsdk.Config {
	t.Helper()
	ctx := context.Background()
	var sr resource.SchemaResponse
	(&trafficPolicyResource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	base := map[string]any{}
	for k, v := range leafBase["mesh_traffic_policy"] {
		base[k] = v
	}
	for k, v := range values {
		base[k] = v
	}
	raw, err := leafValue(sr.Schema.Type().TerraformType(ctx), "", base)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err = tftypes.Transform(raw, change); err != nil {
		t.Fatal(err)
	}
	return tfsdk.Config{Schema: sr.Schema, Raw: raw}
}

// terraform validate reads a value not
// known yet as unset and drops only the errors on its own path, on an
// attribute holding it, or inside it. A rule that reads it to judge a
// sibling then reports an error the configuration does not have: a
// mirror to subset = var.subset with its labels set is "Labels without
// subset" at mirror.labels, and terraform validate fails on a valid
// configuration (the plan, with the value known, passes).
func TestValidateReportsNoErrorOfAnUnknownSibling(t *testing.T) {
	subset := tftypes.NewAttributePath().WithAttributeName("mirror").WithAttributeName("subset")
	labels := tftypes.NewAttributePath().WithAttributeName("mirror").WithAttributeName("labels")
	cfg := tpConfigWith(t, map[string]any{"mirror.subset": "v2"}, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		switch {
		case p.Equal(subset):
			return tftypes.NewValue(tftypes.String, tftypes.UnknownValue), nil
		case p.Equal(labels):
			return tftypes.NewValue(v.Type(), map[string]tftypes.Value{"version": tftypes.NewValue(tftypes.String, "v2")}), nil
		}
		return v, nil
	})
	if d := validateTrafficPolicy(cfg); d.HasError() {
		t.Fatalf("validate of a mirror to a subset not known yet, with its labels: %s", diagText(d))
	}
}

// An error on no attribute (a rule across
// the configuration: "Traffic policy does nothing") is dropped whenever
// any value is not known, also one it does not read: a policy that sets
// nothing, named by a variable, passes terraform validate.
func TestValidateKeepsConfigurationErrorsWhileTheNameIsUnknown(t *testing.T) {
	name := tftypes.NewAttributePath().WithAttributeName("name")
	cfg := tpConfigWith(t, nil, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if p.Equal(name) {
			return tftypes.NewValue(tftypes.String, tftypes.UnknownValue), nil
		}
		return v, nil
	})
	if d := validateTrafficPolicy(cfg); !strings.Contains(diagText(d), "Traffic policy does nothing") {
		t.Fatalf("validate of a policy that sets nothing, its name not known yet: %q, want \"Traffic policy does nothing\"", diagText(d))
	}
}

// A configuration-wide error whose rule reads a value not known yet is
// not reported: a policy whose only setting is a timeout or retries from
// a variable does something once the value is known, so validate must
// not call it "Traffic policy does nothing". The timeout (a string) is
// seen as a placeholder by validate's second run, the retries (an object)
// are not, and neither may report the error.
func TestValidateDropsConfigurationErrorsOfUnknownValues(t *testing.T) {
	for _, c := range []struct {
		values map[string]any
		at     *tftypes.AttributePath
	}{
		{map[string]any{"timeout": "1s"}, tftypes.NewAttributePath().WithAttributeName("timeout")},
		{map[string]any{"retries.attempts": 3}, tftypes.NewAttributePath().WithAttributeName("retries")},
	} {
		cfg := tpConfigWith(t, c.values, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
			if p.Equal(c.at) {
				return tftypes.NewValue(v.Type(), tftypes.UnknownValue), nil
			}
			return v, nil
		})
		if d := validateTrafficPolicy(cfg); strings.Contains(diagText(d), "Traffic policy does nothing") {
			t.Errorf("validate of a policy whose %s is not known yet: %q, want no \"Traffic policy does nothing\"", c.at, diagText(d))
		}
	}
}
