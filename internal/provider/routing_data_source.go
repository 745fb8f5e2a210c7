package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
)

var _ datasource.DataSource = &routingDataSource{}

// NewRoutingDataSource is the mesh_routing data source: the routing
// statements of the intents given (their routing attributes, computed by
// internal/translate/routing), gathered per hostname, so that a reviewer
// reads a host's failover order, traffic shifts and access verdicts in
// one place (issue 38). It reads no cluster.
func NewRoutingDataSource() datasource.DataSource { return &routingDataSource{} }

type routingDataSource struct{}

type routingDataModel struct {
	VirtualDestinations []routingVDModel     `tfsdk:"virtual_destinations"`
	TrafficPolicies     []routingPolicyModel `tfsdk:"traffic_policies"`
	AccessPolicies      []routingPolicyModel `tfsdk:"access_policies"`
	Hostnames           types.Map            `tfsdk:"hostnames"`
}

type routingVDModel struct {
	Name     types.String `tfsdk:"name"`
	Hostname types.String `tfsdk:"hostname"`
	Routing  types.Map    `tfsdk:"routing"`
}

type routingPolicyModel struct {
	Name        types.String             `tfsdk:"name"`
	Destination *routingDestinationModel `tfsdk:"destination"`
	Routing     types.Map                `tfsdk:"routing"`
}

type routingDestinationModel struct {
	VirtualDestination types.String `tfsdk:"virtual_destination"`
	Service            types.String `tfsdk:"service"`
	Namespace          types.String `tfsdk:"namespace"`
}

func (d *routingDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_routing"
}

func (d *routingDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	// Nothing is Required: terraform validate sees a resource passed whole
	// as an unknown object, whose attributes the framework takes for
	// unset. Read says what is missing.
	str := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Optional: true}
	}
	routingAttr := schema.MapAttribute{MarkdownDescription: "The intent's `routing` attribute.", Optional: true, ElementType: types.StringType}
	policy := func(what string) schema.ListNestedAttribute {
		return schema.ListNestedAttribute{
			MarkdownDescription: "`mesh_" + what + "` resources, passed whole (e.g. `[mesh_" + what + ".user]`): only `name`, `destination` and `routing` are read. Unset: none.",
			Optional:            true,
			NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"name": str("The policy's `name`."),
				"destination": schema.SingleNestedAttribute{
					MarkdownDescription: "The policy's `destination`: its host is `virtual_destination`, or `<service>.<namespace>.svc.cluster.local`.",
					Optional:            true,
					Attributes: map[string]schema.Attribute{
						"virtual_destination": str("Hostname of a virtual destination. Unset: `service` in `namespace`."),
						"service":             str("Kubernetes service. Unset: `virtual_destination`."),
						"namespace":           str("Namespace of `service`. Unset: only with `virtual_destination`."),
					},
				},
				"routing": routingAttr,
			}},
		}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "The routing of each hostname in one place: the failover order of its virtual destination, the shifts and settings of the traffic policies on it and the verdicts of the access policies on it, " +
			"gathered from the `routing` attributes of the intents given (the same statements their plans print). It reads no cluster. " +
			"Put `hostnames` in an output: `terraform plan` then shows, under *Changes to Outputs*, what a change does to each host's routing, line by line.",
		Attributes: map[string]schema.Attribute{
			"virtual_destinations": schema.ListNestedAttribute{
				MarkdownDescription: "`mesh_virtual_destination` resources, passed whole (e.g. `[mesh_virtual_destination.user]`): only `name`, `hostname` and `routing` are read. Unset: none.",
				Optional:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":     str("The virtual destination's `name`."),
					"hostname": str("Its `hostname`."),
					"routing":  routingAttr,
				}},
			},
			"traffic_policies": policy("traffic_policy"),
			"access_policies":  policy("access_policy"),
			"hostnames": schema.MapAttribute{
				MarkdownDescription: "Per hostname, its routing as text: one block per intent (`failover`, then `shift`, then `access`, each with the intent's address), " +
					"and under it one line per distinct statement line, led by the clusters that state it (`  east, west: east > onprem`). " +
					"The line grammar is the `routing` attribute's (see the resource pages and the reviewing-plans guide).",
				Computed:    true,
				ElementType: types.StringType,
			},
		},
	}
}

func (d *routingDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m routingDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var parts []routing.Part
	unknown := map[string]bool{}
	add := func(host, aspect, intent string, r types.Map) {
		st := routing.Statement{}
		if r.IsUnknown() {
			unknown[host] = true
		}
		for c, v := range r.Elements() {
			s, ok := v.(types.String)
			if !ok || s.IsUnknown() {
				unknown[host] = true
				continue
			}
			st[c] = s.ValueString()
		}
		parts = append(parts, routing.Part{Host: host, Aspect: aspect, Intent: intent, Statement: st})
	}
	for i, vd := range m.VirtualDestinations {
		at := path.Root("virtual_destinations").AtListIndex(i)
		if vd.Name.IsNull() || vd.Hostname.IsNull() || vd.Routing.IsNull() {
			resp.Diagnostics.AddAttributeError(at, "Not a virtual destination",
				"Each element needs name, hostname and routing: pass the resource itself, e.g. [mesh_virtual_destination.user].")
			continue
		}
		add(vd.Hostname.ValueString(), routing.AspectFailover, intentkind.ResourceOf(intentkind.VirtualDestination.Owner, vd.Name.ValueString()), vd.Routing)
	}
	for i, set := range [][]routingPolicyModel{m.TrafficPolicies, m.AccessPolicies} {
		kind, aspect := intentkind.TrafficPolicy, routing.AspectShift
		if i == 1 {
			kind, aspect = intentkind.AccessPolicy, routing.AspectAccess
		}
		listName := []string{"traffic_policies", "access_policies"}[i]
		for j, p := range set {
			if p.Name.IsNull() || p.Destination == nil || p.Routing.IsNull() {
				resp.Diagnostics.AddAttributeError(path.Root(listName).AtListIndex(j), "Not a "+strings.ReplaceAll(kind.Owner, "-", " "),
					fmt.Sprintf("Each element needs name, destination and routing: pass the resource itself, e.g. [%s.user].", kind.Resource))
				continue
			}
			host := p.Destination.VirtualDestination.ValueString()
			if host == "" {
				host = fmt.Sprintf("%s.%s.svc.cluster.local", p.Destination.Service.ValueString(), p.Destination.Namespace.ValueString())
			}
			add(host, aspect, intentkind.ResourceOf(kind.Owner, p.Name.ValueString()), p.Routing)
		}
	}
	if resp.Diagnostics.HasError() {
		return
	}
	elems := map[string]attr.Value{}
	for host, text := range routing.Summarize(parts) {
		if unknown[host] {
			elems[host] = types.StringUnknown()
		} else {
			elems[host] = types.StringValue(text)
		}
	}
	m.Hostnames = types.MapValueMust(types.StringType, elems)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
