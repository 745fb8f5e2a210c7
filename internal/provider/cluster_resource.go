package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/booldefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/listdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
)

var (
	_ resource.ResourceWithConfigure   = &clusterResource{}
	_ resource.ResourceWithModifyPlan  = &clusterResource{}
	_ resource.ResourceWithImportState = &clusterResource{}
)

// NewClusterResource is mesh_cluster: a registered cluster joins the mesh.
// It has the intents' lifecycle, with a probe of its cluster after each
// engine operation (clusterSynced), and an import of its own, by name
// (ImportState), whose Read infers the attributes from the objects found.
func NewClusterResource() resource.Resource {
	l := newIntentLifecycle[clusterResourceModel](importTarget{kind: intentkind.Cluster})
	l.importedRead = func(m *clusterResourceModel) { m.ID = types.StringNull() } // found on the objects (inferFromCluster)
	l.afterSync = clusterSynced
	return &clusterResource{l}
}

type clusterResource struct {
	intentLifecycle[clusterResourceModel, *clusterResourceModel]
}

type clusterResourceModel struct {
	ID                 types.String        `tfsdk:"id"`
	Name               string              `tfsdk:"name"`
	IstioNamespace     string              `tfsdk:"istio_namespace"`
	MTLSMode           *string             `tfsdk:"mtls_mode"`
	DefaultDeny        bool                `tfsdk:"default_deny"`
	DefaultDenyExempt  []map[string]string `tfsdk:"default_deny_exempt"`
	ExposeEastWest     bool                `tfsdk:"expose_east_west"`
	EastWestHosts      []string            `tfsdk:"east_west_hosts"`
	EastWestSelector   map[string]string   `tfsdk:"east_west_selector"`
	KubernetesVersion  types.String        `tfsdk:"kubernetes_version"`
	IstioCRDsInstalled types.Bool          `tfsdk:"istio_crds_installed"`
	Objects            types.Map           `tfsdk:"objects"`
}

func (r *clusterResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	hosts := make([]attr.Value, len(translate.DefaultEastWestHosts))
	for i, h := range translate.DefaultEastWestHosts {
		hosts[i] = types.StringValue(h)
	}
	selector := map[string]attr.Value{}
	for k, v := range cluster.DefaultEastWestSelector {
		selector[k] = types.StringValue(v)
	}
	resp.Schema = schema.Schema{
		Version: schemaVersion,
		MarkdownDescription: "A registered cluster joins the mesh: its mesh-wide bootstrap objects (east-west Gateway, mTLS mode, default deny) in its Istio root namespace. " +
			"Its objects go to its own cluster only; destroying it removes them." + objectsPlanNote(
			`~ "east/PeerAuthentication.security.istio.io/istio-system/default" = "61b0e8c4f2a9d357" -> "d8a4c27e90f13b65"`,
			`+ "east/AuthorizationPolicy.security.istio.io/istio-system/mesh-default-deny" = "0c57e9b2a4f6d318"`,
		),
		Attributes: map[string]schema.Attribute{
			"id": idAttribute(),
			"name": schema.StringAttribute{
				MarkdownDescription: "Key of the cluster in the provider's `clusters`.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{dnsLabelValidator{}},
			},
			"istio_namespace": schema.StringAttribute{
				MarkdownDescription: "Istio root namespace of the cluster, where mesh-wide objects live. Default `" + translate.DefaultIstioNS + "`.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(translate.DefaultIstioNS),
				Validators:          []validator.String{dnsLabelValidator{}},
			},
			"mtls_mode": schema.StringAttribute{
				MarkdownDescription: enumDescription("Mesh-wide mutual TLS mode: a PeerAuthentication named `default` in the root namespace; unset, none is managed.", cluster.MTLSModes),
				Optional:            true,
				Validators:          []validator.String{oneOfValidator(cluster.MTLSModes...)},
			},
			"default_deny": schema.BoolAttribute{
				MarkdownDescription: "Deny every request that no `mesh_access_policy` allows: an empty ALLOW AuthorizationPolicy in the root namespace. Default `false`.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			"default_deny_exempt": schema.ListAttribute{
				MarkdownDescription: "Workloads that `default_deny` leaves open to every caller, each given by labels (all must match; workloads in any namespace): an ALLOW-all AuthorizationPolicy `" + cluster.DefaultDenyExemptPrefix + "<hash>` per selector in the root namespace. " +
					"A mesh-wide deny applies to gateway workloads too, so the default, `[{ istio = \"ingressgateway\" }]` (the ingress gateway Istio installs), keeps the public entry point open; list your own ingress gateways' labels, or `[]` to close them as well. " +
					"East-west gateways need no entry: Istio does not authorize `AUTO_PASSTHROUGH` traffic at the gateway, the backend's sidecar does. Ignored unless `default_deny` is true.",
				Optional:    true,
				Computed:    true,
				ElementType: types.MapType{ElemType: types.StringType},
				Default:     listdefault.StaticValue(defaultDenyExemptValue()),
				Validators:  []validator.List{listvalidator.NoNullValues(), listvalidator.ValueMapsAre(mapvalidator.SizeAtLeast(1), mapvalidator.NoNullValues(), labelsValidator{})},
			},
			"expose_east_west": schema.BoolAttribute{
				MarkdownDescription: "Expose the cluster's services to other networks: a Gateway on the east-west gateway, port from the provider's `east_west_gateway.port` (default " + fmt.Sprint(translate.DefaultEastWestPort) + "), TLS `AUTO_PASSTHROUGH`. Default `false`.",
				Optional:            true,
				Computed:            true,
				Default:             booldefault.StaticBool(false),
			},
			"east_west_hosts": schema.ListAttribute{
				MarkdownDescription: "Hosts the east-west Gateway passes through. Default `" + hclList(translate.DefaultEastWestHosts) + "`, the global mesh hostnames. Cluster-local services (`*.local`) are passed through by the `cross-network-gateway` Gateway that Istio's multi-network install creates on the same port; Istio drops one of two Gateways on one port that share a host, so list `*.local` here only in a cluster without that Gateway.",
				Optional:            true,
				Computed:            true,
				ElementType:         types.StringType,
				Default:             listdefault.StaticValue(types.ListValueMust(types.StringType, hosts)),
				Validators:          []validator.List{listvalidator.NoNullValues()},
			},
			"east_west_selector": schema.MapAttribute{
				MarkdownDescription: "Labels of the east-west gateway pods. Default `" + hclMap(cluster.DefaultEastWestSelector) + "`, as Istio's multi-network install deploys it.",
				Optional:            true,
				Computed:            true,
				ElementType:         types.StringType,
				Default:             mapdefault.StaticValue(types.MapValueMust(types.StringType, selector)),
				Validators:          []validator.Map{mapvalidator.NoNullValues(), labelsValidator{}},
			},
			"kubernetes_version": schema.StringAttribute{
				MarkdownDescription: "Kubernetes version the cluster reports.",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"istio_crds_installed": schema.BoolAttribute{
				MarkdownDescription: "Whether the cluster serves the Istio APIs the provider writes (networking.istio.io/v1 and security.istio.io/v1).",
				Computed:            true,
			},
			"objects": objectsAttribute("for `name = \"east\"`: `east/Gateway.networking.istio.io/istio-system/mesh-cross-network` (the east-west gateway's, with `expose_east_west`), `east/PeerAuthentication.security.istio.io/istio-system/default` (with `mtls_mode`) and `east/AuthorizationPolicy.security.istio.io/istio-system/mesh-default-deny` (with `default_deny`)."),
		},
	}
}

// defaultDenyExemptValue is cluster.DefaultDenyExempt as a Terraform value.
func defaultDenyExemptValue() types.List {
	return selectorsValue(cluster.DefaultDenyExempt)
}

func selectorsValue(sels []map[string]string) types.List {
	elems := make([]attr.Value, 0, len(sels))
	for _, sel := range sels {
		m := map[string]attr.Value{}
		for k, v := range sel {
			m[k] = types.StringValue(v)
		}
		elems = append(elems, types.MapValueMust(types.StringType, m))
	}
	return types.ListValueMust(types.MapType{ElemType: types.StringType}, elems)
}

// spec is what the engine needs of mesh_cluster: owner, kinds,
// translation. Nothing in it depends on other intents, so the phase does
// not matter.
func (m *clusterResourceModel) spec(context.Context, *providerData, phase) (intentSpec, diag.Diagnostics) {
	in := m.intent()
	return intentSpec{
		Owner:     engine.Owner{Kind: intentkind.Cluster.Owner, Name: in.Name, ID: ownerIDOf(m.ID)},
		Kinds:     intentkind.Cluster.Writes,
		Translate: func(reg *translate.Registry) ([]translate.Object, error) { return cluster.Translate(in, reg) },
		Case:      func() any { return in },
	}, nil
}

func (m *clusterResourceModel) inventory() types.Map     { return m.Objects }
func (m *clusterResourceModel) setInventory(l types.Map) { m.Objects = l }

func (m *clusterResourceModel) ownerID() *types.String { return &m.ID }

// adoptExisting, adoptedValue and routingValue: mesh_cluster has none of
// these attributes.
func (m *clusterResourceModel) adoptExisting() bool      { return false }
func (m *clusterResourceModel) adoptedValue() *types.Map { return nil }
func (m *clusterResourceModel) routingValue() *types.Map { return nil }

// intent is where mesh_cluster's attributes become translator fields.
func (m *clusterResourceModel) intent() cluster.Intent {
	// Never nil, which the translator reads as the default: a null list
	// (a configuration rendered without its defaults) exempts nothing.
	exempt := append([]map[string]string{}, m.DefaultDenyExempt...)
	in := cluster.Intent{
		Name:              m.Name,
		IstioNamespace:    m.IstioNamespace,
		DefaultDeny:       m.DefaultDeny,
		DefaultDenyExempt: exempt,
		ExposeEastWest:    m.ExposeEastWest,
		EastWestHosts:     m.EastWestHosts,
		EastWestSelector:  m.EastWestSelector,
	}
	if m.MTLSMode != nil {
		in.MTLSMode = *m.MTLSMode
	}
	return in
}

func (r *clusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	r.importState(ctx, req, resp, identityName, func(name, _ string, _ bool) { r.importCluster(ctx, name, resp) })
}

// importCluster imports the mesh_cluster named name.
func (r *clusterResource) importCluster(ctx context.Context, name string, resp *resource.ImportStateResponse) {
	// The import ID is the cluster name; the instance ID is read from the
	// objects found (see inferFromCluster). The cluster must answer: what
	// is imported is what is there.
	if r.data == nil || r.data.Clients == nil {
		resp.Diagnostics.AddError("Import needs the clusters", "The provider's clusters are not known yet (values known only after apply). Apply them first.")
		return
	}
	if _, err := r.data.Engine.Probe(name); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Cannot import cluster %s", name),
			fmt.Sprintf("Importing mesh_cluster %q reads its objects from the cluster, which could not be reached: %v. "+
				"The import id is the cluster's key in the provider's clusters map; retry when it answers.", name, err))
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, importedCluster(name))...)
}

// clusterSynced completes the model after each engine operation: what the
// cluster reports (probe, or refreshProbe on Read) and, at the Read after
// an import, the attributes the objects found say (inferFromCluster).
func clusterSynced(ctx context.Context, data *providerData, m *clusterResourceModel, step syncStep) diag.Diagnostics {
	if step == syncApply {
		m.probe(data)
		return nil
	}
	var diags diag.Diagnostics
	if step == syncImport {
		diags = m.inferFromCluster(ctx, data)
	}
	m.refreshProbe(data)
	return diags
}

// probe records the cluster's version and whether it serves Istio's APIs.
// An unreachable cluster keeps what was known. A value the plan already
// fixed (kubernetes_version keeps its state value on update) is left as
// planned: apply must produce what plan promised.
func (m *clusterResourceModel) probe(data *providerData) {
	versionOpen := m.KubernetesVersion.IsUnknown() || m.KubernetesVersion.IsNull()
	if m.KubernetesVersion.IsUnknown() {
		m.KubernetesVersion = types.StringValue("")
	}
	if m.IstioCRDsInstalled.IsUnknown() || m.IstioCRDsInstalled.IsNull() {
		m.IstioCRDsInstalled = types.BoolValue(false)
	}
	info, err := data.Engine.Probe(m.Name)
	if err != nil {
		return
	}
	if versionOpen {
		m.KubernetesVersion = types.StringValue(info.KubernetesVersion)
	}
	m.IstioCRDsInstalled = types.BoolValue(info.IstioInstalled())
}

// refreshProbe is probe for Read, where every value may change.
func (m *clusterResourceModel) refreshProbe(data *providerData) {
	prior := m.KubernetesVersion
	m.KubernetesVersion = types.StringUnknown()
	m.probe(data)
	if m.KubernetesVersion.ValueString() == "" && !prior.IsNull() {
		m.KubernetesVersion = prior // unreachable: keep what was known
	}
}
