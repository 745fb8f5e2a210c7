package provider

import (
	"context"
	"errors"

	"github.com/hashicorp/terraform-plugin-framework-validators/objectvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
)

var (
	_ resource.ResourceWithConfigure  = &accessPolicyResource{}
	_ resource.ResourceWithModifyPlan = &accessPolicyResource{}
)

// NewAccessPolicyResource is mesh_access_policy: who may call a destination.
func NewAccessPolicyResource() resource.Resource {
	return &accessPolicyResource{newIntentLifecycle[accessPolicyModel](importTarget{
		kind:      intentkind.AccessPolicy,
		plainName: func(name string) string { return accesspolicy.NamePrefix + name },
	})}
}

type accessPolicyResource struct {
	intentLifecycle[accessPolicyModel, *accessPolicyModel]
}

type accessPolicyModel struct {
	ID                  types.String       `tfsdk:"id"`
	Name                string             `tfsdk:"name"`
	Destination         apDestinationModel `tfsdk:"destination"`
	Sources             []apSourceModel    `tfsdk:"sources"`
	Rules               []apRuleModel      `tfsdk:"rules"`
	DestinationBackends types.List         `tfsdk:"destination_backends"`
	Objects             types.Map          `tfsdk:"objects"`
	Routing             types.Map          `tfsdk:"routing"`
	Adopt               types.Bool         `tfsdk:"adopt_existing"`
}

type apDestinationModel struct {
	VirtualDestination *string           `tfsdk:"virtual_destination"`
	Service            *string           `tfsdk:"service"`
	Namespace          *string           `tfsdk:"namespace"`
	Clusters           []string          `tfsdk:"clusters"`
	ClusterSelector    map[string]string `tfsdk:"cluster_selector"`
	WorkloadLabels     map[string]string `tfsdk:"workload_labels"`
}

type apSourceModel struct {
	Clusters            []string          `tfsdk:"clusters"`
	ClusterSelector     map[string]string `tfsdk:"cluster_selector"`
	Namespace           string            `tfsdk:"namespace"`
	ServiceAccount      string            `tfsdk:"service_account"`
	DestinationClusters *placementModel   `tfsdk:"destination_clusters"`
}

type apRuleModel struct {
	Methods []string `tfsdk:"methods"`
	Paths   []string `tfsdk:"paths"`
	Ports   []int64  `tfsdk:"ports"`
}

var backendAttrTypes = map[string]attr.Type{
	"cluster":   types.StringType,
	"namespace": types.StringType,
	"service":   types.StringType,
}

func backendsAttribute() schema.ListNestedAttribute {
	return schema.ListNestedAttribute{
		MarkdownDescription: "The backends of `destination.virtual_destination` as resolved at plan time from the `mesh_virtual_destination` with that hostname: where the policy is enforced.",
		Computed:            true,
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"cluster":   schema.StringAttribute{Computed: true, MarkdownDescription: "Backend cluster."},
			"namespace": schema.StringAttribute{Computed: true, MarkdownDescription: "Namespace of the backend service."},
			"service":   schema.StringAttribute{Computed: true, MarkdownDescription: "Backend service."},
		}},
	}
}

func (r *accessPolicyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Version: schemaVersion,
		MarkdownDescription: "Who may call a destination. Translates into ALLOW AuthorizationPolicies in the clusters where the destination runs (Istio authorizes on the server side), " +
			"with principals `<trust_domain of the source cluster>/ns/<namespace>/sa/<service_account>`. The same intent yields different principals in different backend clusters. " +
			"Combine with `mesh_cluster.default_deny` so that only what access policies allow gets through. " +
			"If two clusters share a trust domain and the policy would have to tell them apart, plan fails: the intent cannot be enforced." + objectsPlanNote(
			`~ "east/AuthorizationPolicy.security.istio.io/users/ap-account-to-user" = "2e9d7a41c0b85f63" -> "94c1f0ab37e6d28e"`,
			`+ "onprem/AuthorizationPolicy.security.istio.io/users/ap-account-to-user" = "7f3a62d9e1c04b58"`,
		),
		Attributes: map[string]schema.Attribute{
			"id":             idAttribute(),
			"adopt_existing": adoptAttribute(),
			"name": schema.StringAttribute{
				MarkdownDescription: "Name of the intent; owned objects are named `ap-<name>`. A DNS label of at most 60 characters.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{dnsLabelValidator{}},
			},
			"destination": schema.SingleNestedAttribute{
				MarkdownDescription: "What is protected: a virtual destination by hostname (reference `mesh_virtual_destination.<x>.hostname` so Terraform plans it first), or a service and namespace; optionally restricted to some of its clusters.",
				Required:            true,
				Attributes: withAttributes(placementAttributes("destination clusters this policy covers", "every cluster where the destination runs"), map[string]schema.Attribute{
					"virtual_destination": schema.StringAttribute{MarkdownDescription: "Hostname of a `mesh_virtual_destination`. Unset: the destination is `service` in `namespace`.", Optional: true},
					"service":             schema.StringAttribute{MarkdownDescription: "Name of a Kubernetes service (with `namespace`), instead of a virtual destination. Unset: the destination is `virtual_destination`.", Optional: true},
					"namespace":           schema.StringAttribute{MarkdownDescription: "Namespace of `service`; required with it. Unset: only with a `virtual_destination`, whose backends carry their own namespaces.", Optional: true},
					"workload_labels":     schema.MapAttribute{MarkdownDescription: "Labels of the destination pods, applied to every backend. Default: each backend's pods are selected by `{ app = <its service name> }`.", Optional: true, ElementType: types.StringType, Validators: []validator.Map{labelsValidator{}}},
				}),
				Validators: []validator.Object{objectvalidator.AtLeastOneOf(path.MatchRelative().AtName("virtual_destination"), path.MatchRelative().AtName("service"))},
			},
			"sources": schema.ListNestedAttribute{
				MarkdownDescription: "Who may call: a service account in a namespace, in the clusters its placement selects (default: every cluster).",
				Required:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: withAttributes(placementAttributes("clusters the callers run in", "the callers may run in any registered cluster"), map[string]schema.Attribute{
					"namespace":       schema.StringAttribute{MarkdownDescription: "Namespace of the callers.", Required: true},
					"service_account": schema.StringAttribute{MarkdownDescription: "Service account of the callers.", Required: true},
					"destination_clusters": schema.SingleNestedAttribute{
						MarkdownDescription: "Restricts the destination clusters this source may call (e.g. public-cloud callers may reach `east` but not `onprem`). Default: all the destination covers.",
						Optional:            true,
						Attributes:          placementAttributes("destination clusters this source may call", "every cluster the policy covers"),
					},
				})},
			},
			"rules": schema.ListNestedAttribute{
				MarkdownDescription: "Which requests are allowed; a request must match one rule. Omitted: any request.",
				Optional:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"methods": enumStrings("HTTP methods. Unset: any method.", translate.HTTPMethods),
					"paths":   schema.ListAttribute{MarkdownDescription: "Paths: exact, `/prefix*`, `*suffix` or `*`. HTTP only: on a TCP port a rule with paths never matches. Unset: any path.", Optional: true, ElementType: types.StringType},
					"ports":   schema.ListAttribute{MarkdownDescription: "Ports the destination workloads receive on (the container port, not the Service port), from 1 to 65535. Unset: any port.", Optional: true, ElementType: types.Int64Type},
				}},
			},
			"destination_backends": backendsAttribute(),
			"objects":              objectsAttribute("for `name = \"account-to-user\"` on a destination in namespace `users`: `east/AuthorizationPolicy.security.istio.io/users/ap-account-to-user` in each cluster that runs a backend of the destination."),
			"routing":              routingAttribute("access_policy"),
		},
	}
}

// resolveBackends finds the backends of a virtual destination: in
// planPhase, or when nothing is known yet, from the virtual destination
// itself (see lookupVirtualDestination); otherwise from state.
func resolveBackends(ctx context.Context, data *providerData, hostname string, known types.List, ph phase, at path.Path) ([]accesspolicy.Backend, types.List, diag.Diagnostics) {
	var diags diag.Diagnostics
	haveKnown := !known.IsNull() && !known.IsUnknown()
	if ph == planPhase || !haveKnown {
		vd, ok, ignored, err := lookupVirtualDestination(ctx, data, hostname)
		warnIgnoredRecords(&diags, at, hostname, data.recordsNamespace(), ignored)
		if d, conflict := recordsConflictDiagnostics(at, err); conflict {
			// Never resolved from state either: whose backends get the
			// ALLOW rules is for the user to settle.
			return nil, types.ListNull(types.ObjectType{AttrTypes: backendAttrTypes}), append(diags, d...)
		}
		if errors.Is(err, errPendingDestination) {
			return nil, types.ListUnknown(types.ObjectType{AttrTypes: backendAttrTypes}), diags
		}
		if ok {
			var out []accesspolicy.Backend
			var elems []attr.Value
			for _, b := range vd.Backends {
				out = append(out, accesspolicy.Backend{Cluster: b.Cluster, Namespace: b.Namespace, Service: b.Service})
				elems = append(elems, types.ObjectValueMust(backendAttrTypes, map[string]attr.Value{
					"cluster": types.StringValue(b.Cluster), "namespace": types.StringValue(b.Namespace), "service": types.StringValue(b.Service),
				}))
			}
			return out, types.ListValueMust(types.ObjectType{AttrTypes: backendAttrTypes}, elems), diags
		}
		if !haveKnown {
			diags.Append(unknownVirtualDestination(at, hostname, err)...)
			return nil, types.ListNull(types.ObjectType{AttrTypes: backendAttrTypes}), diags
		}
	}
	var out []accesspolicy.Backend
	for _, e := range known.Elements() {
		a := e.(types.Object).Attributes()
		out = append(out, accesspolicy.Backend{
			Cluster:   a["cluster"].(types.String).ValueString(),
			Namespace: a["namespace"].(types.String).ValueString(),
			Service:   a["service"].(types.String).ValueString(),
		})
	}
	return out, known, diags
}

func unknownVirtualDestination(at path.Path, hostname string, err error) diag.Diagnostics {
	var diags diag.Diagnostics
	detail := "No mesh_virtual_destination with hostname " + hostname + " is declared in this configuration or recorded in any registered cluster. " +
		"Declare it, and reference it as mesh_virtual_destination.<name>.hostname so Terraform plans it first."
	if err != nil {
		detail += " (" + err.Error() + ")"
	}
	addAttrError(&diags, at, "Unknown virtual destination", detail)
	return diags
}

// spec is what the engine needs of mesh_access_policy.
func (m *accessPolicyModel) spec(ctx context.Context, data *providerData, ph phase) (intentSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	spec := intentSpec{
		Owner:      engine.Owner{Kind: intentkind.AccessPolicy.Owner, Name: m.Name, ID: ownerIDOf(m.ID)},
		Kinds:      intentkind.AccessPolicy.Writes,
		ConfigKind: intentkind.AccessPolicy.ConfigKind,
	}
	in, dest := m.intent()
	known := m.DestinationBackends
	m.DestinationBackends = types.ListNull(types.ObjectType{AttrTypes: backendAttrTypes})
	if dest.VirtualDestination != "" {
		dest.Backends, m.DestinationBackends, diags = resolveBackends(ctx, data, dest.VirtualDestination, known, ph, path.Root("destination").AtName("virtual_destination"))
	}
	spec.Translate = func(reg *translate.Registry) ([]translate.Object, error) {
		if m.DestinationBackends.IsUnknown() {
			return nil, translate.ErrUnknownPlacement
		}
		return accesspolicy.Translate(in, dest, reg)
	}
	spec.Routing = func(reg *translate.Registry) (routing.Statement, error) {
		if m.DestinationBackends.IsUnknown() {
			return nil, translate.ErrUnknownPlacement
		}
		a, err := routing.AccessPolicy(in, dest, reg)
		return a.Statement(), err
	}
	spec.Case = func() any { return map[string]any{"policy": in, "destination": dest} }
	spec.DestinationService = m.destinationServiceCheck()
	return spec, diags
}

// intent is where mesh_access_policy's attributes become translator
// fields; the destination's backends are resolved by spec.
func (m *accessPolicyModel) intent() (accesspolicy.Intent, accesspolicy.Destination) {
	in := accesspolicy.Intent{Name: m.Name}
	for _, s := range m.Sources {
		in.Sources = append(in.Sources, accesspolicy.Source{
			Placement:           translate.Placement{Clusters: s.Clusters, ClusterSelector: s.ClusterSelector},
			Namespace:           s.Namespace,
			ServiceAccount:      s.ServiceAccount,
			DestinationClusters: s.DestinationClusters.placement(),
		})
	}
	for _, r := range m.Rules {
		rule := accesspolicy.Rule{Methods: r.Methods, Paths: r.Paths}
		for _, p := range r.Ports {
			rule.Ports = append(rule.Ports, int(p))
		}
		in.Rules = append(in.Rules, rule)
	}
	d := m.Destination
	dest := accesspolicy.Destination{
		VirtualDestination: deref(d.VirtualDestination),
		Service:            deref(d.Service),
		Namespace:          deref(d.Namespace),
		Placement:          translate.Placement{Clusters: d.Clusters, ClusterSelector: d.ClusterSelector},
		WorkloadLabels:     d.WorkloadLabels,
	}
	return in, dest
}

func (m *accessPolicyModel) inventory() types.Map     { return m.Objects }
func (m *accessPolicyModel) setInventory(l types.Map) { m.Objects = l }

func (m *accessPolicyModel) ownerID() *types.String { return &m.ID }

// destinationServiceCheck is the Service destination.service names, for
// the plan's warning when it does not exist (checkServices).
func (m *accessPolicyModel) destinationServiceCheck() *serviceCheck {
	return destinationService(m.Destination.Service, m.Destination.Namespace)
}

func (m *accessPolicyModel) adoptExisting() bool { return m.Adopt.ValueBool() }

// adoptedValue is nil: an access policy writes no VirtualService or
// DestinationRule, so it takes over none of another name.
func (m *accessPolicyModel) adoptedValue() *types.Map { return nil }
