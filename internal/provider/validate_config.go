package provider

import (
	"context"
	"slices"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// terraform validate runs the translator's rules that need no other
// resource and no cluster registry (ValidateResourceConfig), so that it
// catches what plan would, short of unknown clusters and the facts of other
// resources. Values not known yet (references to other resources,
// variables) are left out one by one, not the whole configuration with
// them: each is read as unset, and the rules' errors about it (on its
// path, an attribute holding it, or one inside it) are dropped. A destination's virtual destination hostname
// becomes a translate.Unknown placeholder instead, which the rules that
// read it skip. The rules run a second time with every unknown string a
// placeholder (checkKnown): an error that is not reported again came from
// a rule that read an unknown value as unset, and is dropped; one on no
// attribute is kept only when that second run saw every unknown value as
// a placeholder and reported it too.

var (
	_ resource.ResourceWithValidateConfig = &virtualDestinationResource{}
	_ resource.ResourceWithValidateConfig = &trafficPolicyResource{}
	_ resource.ResourceWithValidateConfig = &accessPolicyResource{}
)

// knownConfig decodes a configuration into a model, whatever of it is not
// known yet: an unknown value becomes null, and its path is returned
// (unset), for the rules' errors about it to be dropped (withoutUnset);
// a destination's virtual destination hostname (usually a reference to a
// resource not created yet) becomes a translate.Unknown placeholder that
// the rules skip. It reports false when the configuration does not
// decode; plan checks it then.
//
// placeholders reads every unknown string as a translate.Unknown
// placeholder instead of unset (the second run of checkKnown); held then
// reports whether every unknown value was a string, held as one.
func knownConfig(ctx context.Context, config tfsdk.Config, into any, placeholders bool) (unset []path.Path, held, ok bool) {
	hostname := tftypes.NewAttributePath().WithAttributeName("destination").WithAttributeName("virtual_destination")
	held = true
	masked, err := tftypes.Transform(config.Raw, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		if v.IsKnown() {
			return v, nil
		}
		if p.Equal(hostname) {
			return tftypes.NewValue(tftypes.String, translate.Unknown(p.String())), nil
		}
		unset = append(unset, frameworkPath(p))
		if placeholders && v.Type().Is(tftypes.String) {
			return tftypes.NewValue(tftypes.String, translate.Unknown(p.String())), nil
		}
		held = false
		return tftypes.NewValue(v.Type(), nil), nil
	})
	if err != nil {
		return nil, false, false
	}
	if !(tfsdk.Config{Schema: config.Schema, Raw: masked}).Get(ctx, into).HasError() {
		return unset, held, true
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
	return unset, held, err == nil && !tfsdk.Config{Schema: config.Schema, Raw: blank}.Get(ctx, into).HasError()
}

// checkKnown runs rules on the configuration with what is not known yet
// read as unset (knownConfig), and keeps only the errors owed to no
// unknown value (withoutUnset): when a value is unknown, the rules run
// again with each unknown string a placeholder, and an error that run
// does not report again was about a value read as unset. It reports false
// when the configuration does not decode.
func checkKnown[M any](ctx context.Context, config tfsdk.Config, rules func(*M) translate.Errors) (translate.Errors, bool) {
	var m M
	unset, _, ok := knownConfig(ctx, config, &m, false)
	if !ok {
		return nil, false
	}
	errs := rules(&m)
	if len(unset) == 0 {
		return errs, true
	}
	var again M
	var twice translate.Errors
	_, held, ok := knownConfig(ctx, config, &again, true)
	if ok {
		twice = rules(&again)
	}
	var kept translate.Errors
	for _, e := range errs {
		if slices.ContainsFunc(twice, func(t *translate.Error) bool { return t.Summary == e.Summary && t.Path.String() == e.Path.String() }) {
			kept = append(kept, e)
		}
	}
	return withoutUnset(kept, unset, held), true
}

// frameworkPath is a tftypes path as the framework's; an element of a set
// stands for the set.
func frameworkPath(p *tftypes.AttributePath) path.Path {
	out := path.Empty()
	for _, s := range p.Steps() {
		switch s := s.(type) {
		case tftypes.AttributeName:
			out = out.AtName(string(s))
		case tftypes.ElementKeyInt:
			out = out.AtListIndex(int(s))
		case tftypes.ElementKeyString:
			out = out.AtMapKey(string(s))
		default:
			return out
		}
	}
	return out
}

// withoutUnset drops the errors about values read as unset because they
// are not known yet (knownConfig): those on such a value, on an attribute
// that holds it, or inside it (checkKnown drops those a rule reporting on
// a sibling owes to an unknown string), and, unless held
// (every unknown value was a placeholder in checkKnown's second run, which
// reported them too), those on no attribute (a rule across the whole
// configuration).
func withoutUnset(errs translate.Errors, unset []path.Path, held bool) translate.Errors {
	if len(unset) == 0 {
		return errs
	}
	var kept translate.Errors
	for _, e := range errs {
		if len(e.Path) == 0 {
			if held {
				kept = append(kept, e)
			}
			continue
		}
		at := attrPath(e.Path).String()
		related := false
		for _, u := range unset {
			us := u.String()
			if at == us || strings.HasPrefix(at, us+".") || strings.HasPrefix(at, us+"[") || strings.HasPrefix(us, at+".") || strings.HasPrefix(us, at+"[") {
				related = true
				break
			}
		}
		if !related {
			kept = append(kept, e)
		}
	}
	return kept
}

// validationDiagnostics are the translator's errors about a configuration,
// without those the schema's own validators report already (a name that
// is no DNS label, a value outside an enumeration): one mistake, one
// diagnostic.
func validationDiagnostics(ctx context.Context, config tfsdk.Config, errs translate.Errors) diag.Diagnostics {
	var kept translate.Errors
	for _, e := range errs {
		if len(e.Path) == 0 || !schemaRejects(ctx, config, attrPath(e.Path)) {
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 {
		return nil
	}
	return translateDiagnostics(kept)
}

// schemaRejects reports whether the schema's validators of the attribute
// at p (or, for a list element, of its list) refuse the configured value.
func schemaRejects(ctx context.Context, config tfsdk.Config, p path.Path) bool {
	a, d := config.Schema.AttributeAtPath(ctx, p)
	if d.HasError() {
		// An element of a list or map: its attribute's validators check
		// the elements.
		if parent := p.ParentPath(); !parent.Equal(p) && len(parent.Steps()) > 0 {
			return schemaRejects(ctx, config, parent)
		}
		return false
	}
	var resp diag.Diagnostics
	switch a := a.(type) {
	case interface{ StringValidators() []validator.String }:
		var v types.String
		if config.GetAttribute(ctx, p, &v).HasError() {
			return false
		}
		for _, val := range a.StringValidators() {
			r := &validator.StringResponse{}
			val.ValidateString(ctx, validator.StringRequest{Path: p, Config: config, ConfigValue: v}, r)
			resp.Append(r.Diagnostics...)
		}
	case interface{ ListValidators() []validator.List }:
		var v types.List
		if config.GetAttribute(ctx, p, &v).HasError() {
			return false
		}
		for _, val := range a.ListValidators() {
			r := &validator.ListResponse{}
			val.ValidateList(ctx, validator.ListRequest{Path: p, Config: config, ConfigValue: v}, r)
			resp.Append(r.Diagnostics...)
		}
	case interface{ MapValidators() []validator.Map }:
		var v types.Map
		if config.GetAttribute(ctx, p, &v).HasError() {
			return false
		}
		for _, val := range a.MapValidators() {
			r := &validator.MapResponse{}
			val.ValidateMap(ctx, validator.MapRequest{Path: p, Config: config, ConfigValue: v}, r)
			resp.Append(r.Diagnostics...)
		}
	}
	return resp.HasError()
}

func (r *virtualDestinationResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	errs, ok := checkKnown(ctx, req.Config, func(m *virtualDestinationModel) translate.Errors {
		in := m.intent()
		if !m.VIP.IsNull() {
			in.VIP = m.VIP.ValueString()
		}
		return virtualdestination.Validate(in)
	})
	if !ok {
		return
	}
	resp.Diagnostics.Append(validationDiagnostics(ctx, req.Config, errs)...)
}

func (r *trafficPolicyResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	errs, ok := checkKnown(ctx, req.Config, func(m *trafficPolicyModel) translate.Errors {
		dest := m.Destination.plain()
		if dest.VirtualDestination != "" {
			// What plan resolves from the virtual destination is not known
			// here: rules that need it are left to plan.
			dest.VirtualDestinationName = translate.Unknown("the virtual destination's name")
			dest.VirtualDestinationNamespace = translate.Unknown("the virtual destination's namespace")
		}
		return trafficpolicy.Validate(m.intent(), dest)
	})
	// The weights need nothing else: checked whenever they are known, as
	// withoutUnset drops the errors on traffic_shift when a shift's
	// cluster is not known yet.
	weights, weightsKnown := knownWeights(ctx, req.Config)
	var weightErrs translate.Errors
	if weightsKnown {
		weightErrs = trafficpolicy.ValidateWeights(weights)
	}
	if !ok {
		resp.Diagnostics.Append(validationDiagnostics(ctx, req.Config, weightErrs)...)
		return
	}
	for _, w := range weightErrs {
		if !slices.ContainsFunc(errs, func(e *translate.Error) bool { return e.Summary == w.Summary && e.Path.String() == w.Path.String() }) {
			errs = append(errs, w)
		}
	}
	resp.Diagnostics.Append(validationDiagnostics(ctx, req.Config, errs)...)
}

func (r *accessPolicyResource) ValidateConfig(ctx context.Context, req resource.ValidateConfigRequest, resp *resource.ValidateConfigResponse) {
	errs, ok := checkKnown(ctx, req.Config, func(m *accessPolicyModel) translate.Errors {
		in, dest := m.intent()
		return accesspolicy.Validate(in, dest)
	})
	if !ok {
		return
	}
	resp.Diagnostics.Append(validationDiagnostics(ctx, req.Config, errs)...)
}

// knownWeights reads the weights of traffic_shift when the list and every
// weight in it are known, whatever else of the configuration is not (a
// timeout from a variable, a cluster from another resource): the weights
// check needs nothing else. It reports false when traffic_shift is unset
// or not known yet.
func knownWeights(ctx context.Context, config tfsdk.Config) ([]int, bool) {
	var shift types.List
	if config.GetAttribute(ctx, path.Root("traffic_shift"), &shift).HasError() || shift.IsNull() || shift.IsUnknown() {
		return nil, false
	}
	weights := make([]int, 0, len(shift.Elements()))
	for _, el := range shift.Elements() {
		o, ok := el.(types.Object)
		if !ok || o.IsNull() || o.IsUnknown() {
			return nil, false
		}
		w, ok := o.Attributes()["weight"].(types.Int64)
		if !ok || w.IsNull() || w.IsUnknown() {
			return nil, false
		}
		weights = append(weights, int(w.ValueInt64()))
	}
	return weights, true
}
