package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/render"
	"github.com/mesh-intent/terraform-provider-mesh/internal/runstate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

var _ datasource.DataSourceWithConfigure = &renderedObjectsDataSource{}

// NewRenderedObjectsDataSource is mesh_rendered_objects: the objects one
// intent's configuration produces, per cluster, as YAML, rendered by the
// same translation a plan runs, without writing anything. It takes the
// configuration as JSON, in the form import keeps it, so that one schema
// (the resource's) checks both.
func NewRenderedObjectsDataSource() datasource.DataSource { return &renderedObjectsDataSource{} }

type renderedObjectsDataSource struct {
	data *providerData
}

type renderedObjectsModel struct {
	Type          string       `tfsdk:"type"`
	Configuration string       `tfsdk:"configuration"`
	Objects       types.Map    `tfsdk:"objects"`
	YAML          types.String `tfsdk:"yaml"`
}

// renderers turn a resource's configuration (as a state of its schema)
// into its intent, by resource type.
var renderers = map[string]struct {
	resource func() resource.Resource
	spec     func(ctx context.Context, data *providerData, state tfsdk.State) (intentSpec, diag.Diagnostics)
}{
	"mesh_cluster":             {NewClusterResource, intentSpecOf[clusterResourceModel]},
	"mesh_virtual_destination": {NewVirtualDestinationResource, intentSpecOf[virtualDestinationModel]},
	"mesh_traffic_policy":      {NewTrafficPolicyResource, intentSpecOf[trafficPolicyModel]},
	"mesh_access_policy":       {NewAccessPolicyResource, intentSpecOf[accessPolicyModel]},
}

func intentSpecOf[M any, P intentModel[M]](ctx context.Context, data *providerData, state tfsdk.State) (intentSpec, diag.Diagnostics) {
	var m M
	diags := state.Get(ctx, &m)
	if diags.HasError() {
		return intentSpec{}, diags
	}
	// Resolved as a plan resolves it (facts looked up afresh), on the
	// caller's scratch copy of the run's indexes.
	spec, d := P(&m).spec(ctx, data, planPhase)
	return spec, append(diags, d...)
}

func (d *renderedObjectsDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_rendered_objects"
}

func (d *renderedObjectsDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	kinds := make([]string, 0, len(renderers))
	for t := range maps.Keys(renderers) {
		kinds = append(kinds, t)
	}
	sort.Strings(kinds)
	resp.Schema = schema.Schema{
		MarkdownDescription: "The Istio objects one intent's configuration produces, per cluster, as YAML: the content behind each digest of a resource's `objects`, " +
			"rendered by the translation a plan runs, from the provider's cluster registry. Nothing is written, and no cluster is contacted except, for a traffic policy " +
			"whose virtual destination is in another state, to read that destination's record. A traffic policy's composed objects show its own part; " +
			"the apply composes it with the other policies on the same objects. `make render` prints the same for a whole configuration.",
		Attributes: map[string]schema.Attribute{
			"type": schema.StringAttribute{
				MarkdownDescription: "The resource type whose configuration `configuration` is: " + oneOf(kinds) + ".",
				Required:            true,
				Validators:          []validator.String{stringvalidator.OneOf(kinds...)},
			},
			"configuration": schema.StringAttribute{
				MarkdownDescription: "The resource's configuration as JSON, e.g. `jsonencode({ name = \"user\", hostname = \"user.global\", ... })`: the attributes as written in its block, " +
					"checked against the resource's schema.",
				Required: true,
			},
			"objects": schema.MapAttribute{
				MarkdownDescription: "Each object, by the key the resource's `objects` uses (`<cluster>/<Kind>.<group>/<namespace>/<name>`), as a YAML document.",
				Computed:            true,
				ElementType:         types.StringType,
			},
			"yaml": schema.StringAttribute{
				MarkdownDescription: "Every object as one multi-document YAML stream, in key order, each document headed by a comment with its key.",
				Computed:            true,
			},
		},
	}
}

func (d *renderedObjectsDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if data, ok := req.ProviderData.(*providerData); ok {
		d.data = data
	}
}

func (d *renderedObjectsDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m renderedObjectsModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	objects, stream, diags := renderConfiguration(ctx, d.data, m.Type, m.Configuration)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.Objects, diags = types.MapValueFrom(ctx, types.StringType, objects)
	resp.Diagnostics.Append(diags...)
	m.YAML = types.StringValue(stream)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// renderConfiguration renders one resource configuration (JSON) of type
// typ: its objects by state key, and all of them as one YAML stream.
func renderConfiguration(ctx context.Context, data *providerData, typ, configuration string) (map[string]string, string, diag.Diagnostics) {
	var diags diag.Diagnostics
	at := path.Root("configuration")
	r, ok := renderers[typ]
	if !ok {
		diags.AddAttributeError(path.Root("type"), "Unknown resource type", fmt.Sprintf("%q is not a resource of this provider.", typ))
		return nil, "", diags
	}
	if data == nil || data.RegistryUnknown {
		diags.AddError("Cluster registry not known", "The provider's clusters are known only after apply, so nothing can be rendered yet. Render once the clusters are known.")
		return nil, "", diags
	}
	var sr resource.SchemaResponse
	r.resource().Schema(ctx, resource.SchemaRequest{}, &sr)
	v, err := discovery.ConfigValue(sr.Schema.Type().TerraformType(ctx), configuration)
	if err != nil {
		addAttrError(&diags, at, "Configuration does not fit "+typ, fmt.Sprintf("%v. Give the attributes of a %s block as JSON (jsonencode).", err, typ))
		return nil, "", diags
	}
	state := tfsdk.State{Schema: sr.Schema, Raw: v}
	for _, name := range slices.Sorted(maps.Keys(sr.Schema.GetAttributes())) {
		var value attr.Value
		if sr.Schema.GetAttributes()[name].IsRequired() && !state.GetAttribute(ctx, path.Root(name), &value).HasError() && value.IsNull() {
			addAttrError(&diags, at, "Configuration lacks "+name, fmt.Sprintf("%s requires %s; give it in the configuration's JSON.", typ, name))
		}
	}
	if diags.HasError() {
		return nil, "", diags
	}
	diags.Append(fillStateDefaults(ctx, &state)...)
	// The rendering must not count as planned in this run: it gets its
	// own indexes (a copy of the virtual destinations known so far).
	scratch := *data
	scratch.Destinations = data.Destinations.Clone()
	scratch.TrafficPolicies = &runstate.TrafficPolicyIndex{}
	scratch.Planned = &runstate.PlannedObjects{}
	spec, d := r.spec(ctx, &scratch, state)
	diags.Append(d...)
	if diags.HasError() {
		return nil, "", diags
	}
	objs, err := spec.Translate(scratch.Registry)
	if errors.Is(err, translate.ErrUnknownPlacement) {
		diags.AddError("Placement not known", "The configuration selects clusters by labels that are known only after apply, so what it produces is not known yet.")
		return nil, "", diags
	}
	if err != nil {
		diags.Append(translateDiagnostics(err)...)
		return nil, "", diags
	}
	desired, err := engine.Plan(spec.Owner, objs)
	if err == nil {
		var docs []string
		if docs, err = render.Docs(spec.Owner, desired); err == nil {
			out := map[string]string{}
			keys := make([]string, len(desired))
			for i, dd := range desired {
				keys[i] = dd.Entry.StateKey()
				out[keys[i]] = docs[i]
			}
			sort.Strings(keys)
			stream := make([]string, len(keys))
			for i, k := range keys {
				stream[i] = out[k]
			}
			return out, strings.Join(stream, "---\n"), diags
		}
	}
	diags.AddError("Rendering objects", err.Error())
	return nil, "", diags
}
