package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/path"
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
func NewClusterResource() resource.Resource { return &clusterResource{} }

type clusterResource struct {
	data *providerData
}

type clusterResourceModel struct {
	ID                 types.String `tfsdk:"id"`
	Name               types.String `tfsdk:"name"`
	IstioNamespace     types.String `tfsdk:"istio_namespace"`
	MTLSMode           types.String `tfsdk:"mtls_mode"`
	DefaultDeny        types.Bool   `tfsdk:"default_deny"`
	DefaultDenyExempt  types.List   `tfsdk:"default_deny_exempt"`
	ExposeEastWest     types.Bool   `tfsdk:"expose_east_west"`
	EastWestHosts      types.List   `tfsdk:"east_west_hosts"`
	EastWestSelector   types.Map    `tfsdk:"east_west_selector"`
	KubernetesVersion  types.String `tfsdk:"kubernetes_version"`
	IstioCRDsInstalled types.Bool   `tfsdk:"istio_crds_installed"`
	Objects            types.Map    `tfsdk:"objects"`
}

func (r *clusterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster"
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
			"Its objects go to its own cluster only; destroying it removes them." + objectsPlanNote,
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
				Validators:  []validator.List{listvalidator.ValueMapsAre(mapvalidator.SizeAtLeast(1), labelsValidator{})},
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
			},
			"east_west_selector": schema.MapAttribute{
				MarkdownDescription: "Labels of the east-west gateway pods. Default `" + hclMap(cluster.DefaultEastWestSelector) + "`, as Istio's multi-network install deploys it.",
				Optional:            true,
				Computed:            true,
				ElementType:         types.StringType,
				Default:             mapdefault.StaticValue(types.MapValueMust(types.StringType, selector)),
				Validators:          []validator.Map{labelsValidator{}},
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

func (r *clusterResource) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if data, ok := req.ProviderData.(*providerData); ok {
		r.data = data
	}
}

// spec is what the engine needs of mesh_cluster: owner, kinds, translation.
func (m *clusterResourceModel) spec() intentSpec {
	in := m.intent()
	return intentSpec{
		Owner:     engine.Owner{Kind: intentkind.Cluster.Owner, Name: in.Name, ID: ownerIDOf(m.ID)},
		Kinds:     intentkind.Cluster.Writes,
		Translate: func(reg *translate.Registry) ([]translate.Object, error) { return cluster.Translate(in, reg) },
		Case:      func() any { return in },
	}
}

// intent is where mesh_cluster's attributes become translator fields.
func (m *clusterResourceModel) intent() cluster.Intent {
	hosts, _ := stringList(m.EastWestHosts)
	selector, _ := stringMap(m.EastWestSelector)
	exempt := []map[string]string{}
	for _, v := range m.DefaultDenyExempt.Elements() {
		if sel, ok := v.(types.Map); ok {
			labels, _ := stringMap(sel)
			exempt = append(exempt, labels)
		}
	}
	in := cluster.Intent{
		Name:              m.Name.ValueString(),
		IstioNamespace:    m.IstioNamespace.ValueString(),
		MTLSMode:          m.MTLSMode.ValueString(),
		DefaultDeny:       m.DefaultDeny.ValueBool(),
		DefaultDenyExempt: exempt,
		ExposeEastWest:    m.ExposeEastWest.ValueBool(),
		EastWestHosts:     hosts,
		EastWestSelector:  selector,
	}
	return in
}

// ModifyPlan plans the objects as every intent does (intentLifecycle's
// ModifyPlan): a state with objects in a cluster no longer registered
// fails, destroys included, and objects in a cluster the refresh could
// not read are planned as re-checked.
func (r *clusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var prior clusterResourceModel
	prior.Objects = types.MapNull(types.StringType)
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
		if resp.Diagnostics.HasError() {
			return
		}
		resp.Diagnostics.Append(checkRemovedClusters(r.data, prior.spec().Owner, prior.Objects)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	var plan clusterResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || !plan.knowable() {
		return
	}
	spec := plan.spec()
	objects, diags := planObjects(ctx, r.data, spec)
	resp.Diagnostics.Append(diags...)
	objects, diags = recheckUnreadable(spec.Owner, objects, prior.Objects, unreadableOf(ctx, req.Private))
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("objects"), objects)...)
}

// knowable reports whether the configuration is known well enough to
// translate; otherwise objects stay unknown in the plan.
func (m *clusterResourceModel) knowable() bool {
	return !anyUnknown(m.Name, m.IstioNamespace, m.MTLSMode, m.DefaultDeny, m.DefaultDenyExempt, m.ExposeEastWest, m.EastWestHosts, m.EastWestSelector)
}

func (r *clusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	var m clusterResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	m.ID = types.StringValue(newOwnerID())
	objects, failed, diags := applyObjects(ctx, r.data, m.spec(), nil)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(recordUnreadable(ctx, resp.Private, failed)...)
	m.Objects = objects
	r.probe(&m)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *clusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	var m clusterResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	importing := m.Objects.IsNull()
	if importing {
		m.ID = types.StringNull() // found on the objects below
		m.importDefaults()
	}
	objects, failed, diags := readObjects(ctx, r.data, m.spec(), entriesOf(m.Objects), importing)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(recordUnreadable(ctx, resp.Private, failed)...)
	m.Objects = objects
	if importing {
		resp.Diagnostics.Append(r.inferFromCluster(ctx, &m)...)
	}
	r.refreshProbe(&m)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *clusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	var m, prior clusterResourceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	objects, failed, diags := applyObjects(ctx, r.data, m.spec(), entriesOf(prior.Objects))
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(recordUnreadable(ctx, resp.Private, failed)...)
	m.Objects = objects
	r.probe(&m)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *clusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m clusterResourceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	left, diags := deleteObjects(ctx, r.data, m.spec(), entriesOf(m.Objects))
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		m.Objects = left
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

func (r *clusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	id, _, _, d := importName(ctx, req, identityName) // by identity as by import id
	resp.Diagnostics.Append(d...)
	if d.HasError() {
		return
	}
	req.ID = id
	// The import ID is the cluster name; the instance ID is read from the
	// objects found (see inferFromCluster). The cluster must answer: what
	// is imported is what is there.
	if r.data == nil || r.data.Clients == nil {
		resp.Diagnostics.AddError("Import needs the clusters", "The provider's clusters are not known yet (values known only after apply). Apply them first.")
		return
	}
	if _, err := r.data.Engine.Probe(req.ID); err != nil {
		resp.Diagnostics.AddError(fmt.Sprintf("Cannot import cluster %s", req.ID),
			fmt.Sprintf("Importing mesh_cluster %q reads its objects from the cluster, which could not be reached: %v. "+
				"The import id is the cluster's key in the provider's clusters map; retry when it answers.", req.ID, err))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
}

// probe records the cluster's version and whether it serves Istio's APIs.
// An unreachable cluster keeps what was known. A value the plan already
// fixed (kubernetes_version keeps its state value on update) is left as
// planned: apply must produce what plan promised.
func (r *clusterResource) probe(m *clusterResourceModel) {
	versionOpen := m.KubernetesVersion.IsUnknown() || m.KubernetesVersion.IsNull()
	if m.KubernetesVersion.IsUnknown() {
		m.KubernetesVersion = types.StringValue("")
	}
	if m.IstioCRDsInstalled.IsUnknown() || m.IstioCRDsInstalled.IsNull() {
		m.IstioCRDsInstalled = types.BoolValue(false)
	}
	info, err := r.data.Engine.Probe(m.Name.ValueString())
	if err != nil {
		return
	}
	if versionOpen {
		m.KubernetesVersion = types.StringValue(info.KubernetesVersion)
	}
	m.IstioCRDsInstalled = types.BoolValue(info.IstioInstalled())
}

// refreshProbe is probe for Read, where every value may change.
func (r *clusterResource) refreshProbe(m *clusterResourceModel) {
	prior := m.KubernetesVersion
	m.KubernetesVersion = types.StringUnknown()
	r.probe(m)
	if m.KubernetesVersion.ValueString() == "" && !prior.IsNull() {
		m.KubernetesVersion = prior // unreachable: keep what was known
	}
}
