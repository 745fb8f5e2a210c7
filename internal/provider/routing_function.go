package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
)

var _ function.Function = &routingSummaryFunction{}

// NewRoutingSummaryFunction is provider::mesh::routing_summary: the
// routing statements of the intents given (their routing attributes,
// computed by internal/translate/routing), gathered per hostname, so that
// a reviewer reads a host's failover order, traffic shifts and access
// verdicts in one place (issue 38). A function, not a data source: a data
// source that refers to resources with planned changes is read only at
// apply, and the summary is for the plan.
func NewRoutingSummaryFunction() function.Function { return &routingSummaryFunction{} }

type routingSummaryFunction struct{}

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

var routingMapType = types.MapType{ElemType: types.StringType}

func (f *routingSummaryFunction) Metadata(_ context.Context, _ function.MetadataRequest, resp *function.MetadataResponse) {
	resp.Name = "routing_summary"
}

func (f *routingSummaryFunction) Definition(_ context.Context, _ function.DefinitionRequest, resp *function.DefinitionResponse) {
	policy := types.ObjectType{AttrTypes: map[string]attr.Type{
		"name": types.StringType,
		"destination": types.ObjectType{AttrTypes: map[string]attr.Type{
			"virtual_destination": types.StringType, "service": types.StringType, "namespace": types.StringType,
		}},
		"routing": routingMapType,
	}}
	resp.Definition = function.Definition{
		Summary: "The routing of each hostname in one place",
		MarkdownDescription: "Gathers the `routing` attributes of the intents given (the same statements their plans print) by hostname: " +
			"the failover order of the virtual destination, the shifts and settings of the traffic policies on it, and the verdicts of the access policies on it. " +
			"It reads no cluster. Put the result in an output: `terraform plan` then shows, under *Changes to Outputs*, what a change does to each host's routing, line by line. " +
			"Each host's text has one block per intent (`failover`, then `shift`, then `access`, each with the intent's address), and under it one line per distinct statement line, " +
			"led by the clusters that state it (`  east, west: east > onprem`); the line grammar is the `routing` attribute's. " +
			"A policy on a service (not a virtual destination) is listed under `<service>.<namespace>.svc.cluster.local`. Needs Terraform 1.8 or OpenTofu 1.7.",
		Parameters: []function.Parameter{
			function.ListParameter{Name: "virtual_destinations", ElementType: types.ObjectType{AttrTypes: map[string]attr.Type{
				"name": types.StringType, "hostname": types.StringType, "routing": routingMapType,
			}}, MarkdownDescription: "`mesh_virtual_destination` resources, passed whole (e.g. `[mesh_virtual_destination.user]`); `name`, `hostname` and `routing` are read. `[]` for none."},
			function.ListParameter{Name: "traffic_policies", ElementType: policy,
				MarkdownDescription: "`mesh_traffic_policy` resources, passed whole; `name`, `destination` and `routing` are read. `[]` for none."},
			function.ListParameter{Name: "access_policies", ElementType: policy,
				MarkdownDescription: "`mesh_access_policy` resources, passed whole; `name`, `destination` and `routing` are read. `[]` for none."},
		},
		Return: function.MapReturn{ElementType: types.StringType},
	}
}

func (f *routingSummaryFunction) Run(ctx context.Context, req function.RunRequest, resp *function.RunResponse) {
	var vds []routingVDModel
	var tps, aps []routingPolicyModel
	resp.Error = req.Arguments.Get(ctx, &vds, &tps, &aps)
	if resp.Error != nil {
		return
	}
	hosts, ferr := routingSummary(vds, tps, aps)
	if ferr != nil {
		resp.Error = ferr
		return
	}
	resp.Error = resp.Result.Set(ctx, types.MapValueMust(types.StringType, hosts))
}

// routingSummary is the function's result: per hostname, the text of
// routing.Summarize, unknown for a host one of whose statements is. An
// element without a routing statement is an error naming its argument
// and index.
func routingSummary(vds []routingVDModel, tps, aps []routingPolicyModel) (map[string]attr.Value, *function.FuncError) {
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
	for i, vd := range vds {
		if vd.Hostname.IsNull() || vd.Routing.IsNull() {
			return nil, function.NewArgumentFuncError(0, fmt.Sprintf("virtual_destinations[%d] has no hostname or routing: pass the resource itself, e.g. [mesh_virtual_destination.user].", i))
		}
		add(vd.Hostname.ValueString(), routing.AspectFailover, intentkind.ResourceOf(intentkind.VirtualDestination.Owner, vd.Name.ValueString()), vd.Routing)
	}
	for arg, set := range [][]routingPolicyModel{tps, aps} {
		kind, aspect, name := intentkind.TrafficPolicy, routing.AspectShift, "traffic_policies"
		if arg == 1 {
			kind, aspect, name = intentkind.AccessPolicy, routing.AspectAccess, "access_policies"
		}
		for i, p := range set {
			if p.Destination == nil || p.Routing.IsNull() {
				return nil, function.NewArgumentFuncError(int64(arg+1), fmt.Sprintf("%s[%d] has no destination or routing: pass the resource itself, e.g. [%s.user].", name, i, kind.Resource))
			}
			host := p.Destination.VirtualDestination.ValueString()
			if host == "" {
				host = fmt.Sprintf("%s.%s.svc.cluster.local", p.Destination.Service.ValueString(), p.Destination.Namespace.ValueString())
			}
			add(host, aspect, intentkind.ResourceOf(kind.Owner, p.Name.ValueString()), p.Routing)
		}
	}
	out := map[string]attr.Value{}
	for host, text := range routing.Summarize(parts) {
		if unknown[host] {
			out[host] = types.StringUnknown()
		} else {
			out[host] = types.StringValue(text)
		}
	}
	return out, nil
}
