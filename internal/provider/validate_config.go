package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// terraform validate runs the translator's rules that need no other
// resource and no cluster registry (ValidateResourceConfig), so that it
// catches what plan would, short of unknown clusters and the facts of other
// resources. Values not known yet (references to other resources) become
// translate.Unknown placeholders, which every rule skips.

var (
	_ resource.ResourceWithValidateConfig = &virtualDestinationResource{}
	_ resource.ResourceWithValidateConfig = &trafficPolicyResource{}
	_ resource.ResourceWithValidateConfig = &accessPolicyResource{}
)

// knownConfig decodes a configuration into a model when everything the
// rules read is known: every value, except a destination's virtual
// destination hostname (usually a reference to a resource not created
// yet), which becomes a translate.Unknown placeholder that the rules skip.
// It reports false otherwise; plan checks such a configuration once its
// values are known.
func knownConfig(ctx context.Context, config tfsdk.Config, into any) bool {
	hostname := tftypes.NewAttributePath().WithAttributeName("destination").WithAttributeName("virtual_destination")
	partial := false
	masked, err := tftypes.Transform(config.Raw, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if v.IsKnown() {
			return v, nil
		}
		if p.Equal(hostname) {
			return tftypes.NewValue(tftypes.String, translate.Unknown(p.String())), nil
		}
		partial = true
		return tftypes.NewValue(v.Type(), nil), nil
	})
	if err != nil || partial {
		return false
	}
	if !(tfsdk.Config{Schema: config.Schema, Raw: masked}).Get(ctx, into).HasError() {
		return true
	}
	// A model may hold a string attribute that the framework fills with a
	// default at plan (a virtual destination's namespace) as a plain
	// string: read an unset one as "", which the rules take as unset too.
	blank, err := tftypes.Transform(masked, func(_ *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if v.IsNull() && v.Type().Is(tftypes.String) {
			return tftypes.NewValue(tftypes.String, ""), nil
		}
		return v, nil
	})
	return err == nil && !tfsdk.Config{Schema: config.Schema, Raw: blank}.Get(ctx, into).HasError()
}

func validationDiagnostics(errs translate.Errors) diag.Diagnostics {
	if len(errs) == 0 {
		return nil
	}
	return translateDiagnostics(errs)
}

func (r *virtualDestinationResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m virtualDestinationModel
	if !knownConfig(ctx, req.Config, &m) {
		return
	}
	in := m.intent()
	if !m.VIP.IsNull() {
		in.VIP = m.VIP.ValueString()
	}
	resp.Diagnostics.Append(validationDiagnostics(virtualdestination.Validate(in))...)
}

func (r *trafficPolicyResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m trafficPolicyModel
	if !knownConfig(ctx, req.Config, &m) {
		return
	}
	dest := m.Destination.plain()
	if dest.VirtualDestination != "" {
		// What plan resolves from the virtual destination is not known
		// here: rules that need it are left to plan.
		dest.VirtualDestinationName = translate.Unknown("the virtual destination's name")
		dest.VirtualDestinationNamespace = translate.Unknown("the virtual destination's namespace")
	}
	resp.Diagnostics.Append(validationDiagnostics(trafficpolicy.Validate(m.intent(), dest))...)
}

func (r *accessPolicyResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	var m accessPolicyModel
	if !knownConfig(ctx, req.Config, &m) {
		return
	}
	in, dest := m.intent()
	resp.Diagnostics.Append(validationDiagnostics(accesspolicy.Validate(in, dest))...)
}
