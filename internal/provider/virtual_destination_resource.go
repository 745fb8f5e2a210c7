package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

var (
	_ resource.ResourceWithConfigure  = &virtualDestinationResource{}
	_ resource.ResourceWithModifyPlan = &virtualDestinationResource{}
)

// NewVirtualDestinationResource is mesh_virtual_destination: one global
// hostname with backends in several clusters.
func NewVirtualDestinationResource() resource.Resource {
	l := newIntentLifecycle[virtualDestinationModel](importTarget{
		kind:      intentkind.VirtualDestination,
		plainName: virtualdestination.ObjectName,
	})
	l.partlyKnown = rememberPendingDestination
	return &virtualDestinationResource{l}
}

// rememberPendingDestination marks a virtual destination whose hostname is
// known but whose other settings are not: policies on it wait for apply.
func rememberPendingDestination(ctx context.Context, data *providerData, config tfsdk.Config) diag.Diagnostics {
	var diags diag.Diagnostics
	var name, host types.String
	diags.Append(config.GetAttribute(ctx, path.Root("name"), &name)...)
	diags.Append(config.GetAttribute(ctx, path.Root("hostname"), &host)...)
	if data == nil || diags.HasError() || host.IsUnknown() || host.IsNull() {
		return diags
	}
	if err := data.Destinations.RememberPending(name.ValueString(), host.ValueString()); err != nil {
		addAttrError(&diags, path.Root("hostname"), "Duplicate hostname", err.Error())
	}
	return diags
}

type virtualDestinationResource struct {
	intentLifecycle[virtualDestinationModel, *virtualDestinationModel]
}

type virtualDestinationModel struct {
	ID        types.String     `tfsdk:"id"`
	Name      string           `tfsdk:"name"`
	Hostname  string           `tfsdk:"hostname"`
	Namespace string           `tfsdk:"namespace"`
	Ports     []vdPortModel    `tfsdk:"ports"`
	Backends  []vdBackendModel `tfsdk:"backends"`
	Failover  *vdFailoverModel `tfsdk:"failover"`
	Clients   *vdClientsModel  `tfsdk:"clients"`
	VIP       types.String     `tfsdk:"vip"`
	Objects   types.Map        `tfsdk:"objects"`
	Routing   types.Map        `tfsdk:"routing"`
	Adopt     types.Bool       `tfsdk:"adopt_existing"`
	Adopted   types.Map        `tfsdk:"adopted"`
}

type vdPortModel struct {
	Number     int64  `tfsdk:"number"`
	Protocol   string `tfsdk:"protocol"`
	TargetPort *int64 `tfsdk:"target_port"`
}

type vdBackendModel struct {
	Cluster        string          `tfsdk:"cluster"`
	Namespace      string          `tfsdk:"namespace"`
	Service        string          `tfsdk:"service"`
	Priority       *int64          `tfsdk:"priority"`
	Weight         *int64          `tfsdk:"weight"`
	ExcludeFor     *placementModel `tfsdk:"exclude_for"`
	ServiceAccount *string         `tfsdk:"service_account"`
}

type vdFailoverModel struct {
	Mode             *string                `tfsdk:"mode"`
	OutlierDetection *outlierDetectionModel `tfsdk:"outlier_detection"`
}

type outlierDetectionModel struct {
	Consecutive5xxErrors *int64  `tfsdk:"consecutive_5xx_errors"`
	Interval             *string `tfsdk:"interval"`
	BaseEjectionTime     *string `tfsdk:"base_ejection_time"`
	MaxEjectionPercent   *int64  `tfsdk:"max_ejection_percent"`
}

type vdClientsModel struct {
	Clusters        []string          `tfsdk:"clusters"`
	ClusterSelector map[string]string `tfsdk:"cluster_selector"`
	Namespaces      []string          `tfsdk:"namespaces"`
}

func outlierDetectionAttribute(desc string) schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: desc,
		Optional:            true,
		Attributes: map[string]schema.Attribute{
			"consecutive_5xx_errors": schema.Int64Attribute{MarkdownDescription: "5xx responses in a row that eject a backend, 1 or more. Default `" + fmt.Sprint(*virtualdestination.DefaultOutlierDetection.Consecutive5xxErrors) + "`.", Optional: true},
			"interval":               schema.StringAttribute{MarkdownDescription: "Time between ejection sweeps, e.g. `10s`. Default `" + virtualdestination.DefaultOutlierDetection.Interval + "`.", Optional: true, Validators: []validator.String{durationValidator{}}},
			"base_ejection_time":     schema.StringAttribute{MarkdownDescription: "Minimum ejection time, e.g. `30s`. Default `" + virtualdestination.DefaultOutlierDetection.BaseEjectionTime + "`.", Optional: true, Validators: []validator.String{durationValidator{}}},
			"max_ejection_percent":   schema.Int64Attribute{MarkdownDescription: "Most backends that may be ejected at once, in percent, from 1 to 100. Default `" + fmt.Sprint(*virtualdestination.DefaultOutlierDetection.MaxEjectionPercent) + "`: each endpoint is a whole backend cluster, and a lower share would stop failover before the last priority.", Optional: true},
		},
	}
}

func (r *virtualDestinationResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Version: schemaVersion,
		MarkdownDescription: "One global hostname (e.g. `user.global`) served by Kubernetes services in several clusters. " +
			"Client clusters get a ServiceEntry and DestinationRule for the hostname (local backends by service name, remote ones through their east-west gateway) " +
			"with failover by priority or locality; backend clusters get what their east-west gateway needs to route the hostname to the local service. " +
			"Clusters that are neither get nothing." + objectsPlanNote(
			`~ "west/ServiceEntry.networking.istio.io/istio-system/vd-user" = "9ebed6d579691fec" -> "6d834b4e9452d633"`,
			`~ "west/ServiceEntry.networking.istio.io/users/vd-user-backend" = "fe98b6ff6bb7d506" -> "54ed8bd1d9bf1741"`,
			`+ "onprem/DestinationRule.networking.istio.io/istio-system/vd-user" = "3c0e5a1f8b27d914"`,
		),
		Attributes: map[string]schema.Attribute{
			"id":             idAttribute(),
			"adopt_existing": adoptAttribute(),
			"adopted":        adoptedAttribute(),
			"name": schema.StringAttribute{
				MarkdownDescription: "Name of the intent; owned objects are named `vd-<name>`. A DNS label.",
				Required:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.RequiresReplace()},
				Validators:          []validator.String{dnsLabelValidator{}},
			},
			"hostname": schema.StringAttribute{
				MarkdownDescription: "The global hostname clients call, e.g. `user.global`. It must be covered by the east-west Gateway hosts (`*.global` by default).",
				Required:            true,
			},
			"namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace of the client-side objects in every client cluster: the namespace of the east-west gateway (mesh_cluster's `istio_namespace`). Default `" + translate.DefaultIstioNS + "`.",
				Optional:            true,
				Computed:            true,
				Default:             stringdefault.StaticString(translate.DefaultIstioNS),
			},
			"ports": schema.ListNestedAttribute{
				MarkdownDescription: "Ports of the hostname.",
				Required:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"number":      schema.Int64Attribute{MarkdownDescription: "Port clients call, from 1 to 65535.", Required: true},
					"protocol":    schema.StringAttribute{MarkdownDescription: enumDescription("Protocol, as Istio names it.", virtualdestination.PortProtocols), Required: true, Validators: []validator.String{oneOfValidator(virtualdestination.PortProtocols...)}},
					"target_port": schema.Int64Attribute{MarkdownDescription: "Port of the backend services, from 1 to 65535. Default: `number`.", Optional: true},
				}},
			},
			"backends": schema.ListNestedAttribute{
				MarkdownDescription: "Kubernetes services that serve the hostname, at most one per cluster.",
				Required:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"cluster":   schema.StringAttribute{MarkdownDescription: "Cluster the service runs in.", Required: true},
					"namespace": schema.StringAttribute{MarkdownDescription: "Namespace of the service.", Required: true},
					"service":   schema.StringAttribute{MarkdownDescription: "Name of the service.", Required: true},
					"priority": schema.Int64Attribute{
						MarkdownDescription: "Failover order, lowest first: clients use the healthy backends of the lowest priority they can see, and only then the next. 0 or more. Default `0`.",
						Optional:            true,
					},
					"weight": schema.Int64Attribute{MarkdownDescription: "Share of traffic among backends of the same priority, from 1 to 1000. Default `1`: backends of one priority share the traffic evenly.", Optional: true},
					"service_account": schema.StringAttribute{
						MarkdownDescription: "Service account of the backend's pods. Set on every backend (or none), it makes clients verify whom they reach: the client ServiceEntries list each backend's SPIFFE identity, `spiffe://<trust_domain of its cluster>/ns/<namespace>/sa/<service_account>`, as `subjectAltNames`, and a peer with another identity is refused. Unset, any workload the mesh's trust bundle signs passes.",
						Optional:            true,
					},
					"exclude_for": schema.SingleNestedAttribute{
						MarkdownDescription: "Client clusters that must never send traffic to this backend, not even on failover (e.g. `{ cluster_selector = { cloud = \"aws\" } }`). Unset or empty: no client cluster is excluded.",
						Optional:            true,
						Attributes:          placementAttributes("client clusters to exclude", "no client cluster is excluded"),
					},
				}},
			},
			"failover": schema.SingleNestedAttribute{
				MarkdownDescription: fmt.Sprintf("How clients fail over between backends. Default: by `%s`, with outlier detection of %d consecutive 5xx errors, `%s` interval, `%s` ejection, %d%% max ejection.",
					virtualdestination.FailoverModes[0], *virtualdestination.DefaultOutlierDetection.Consecutive5xxErrors, virtualdestination.DefaultOutlierDetection.Interval,
					virtualdestination.DefaultOutlierDetection.BaseEjectionTime, *virtualdestination.DefaultOutlierDetection.MaxEjectionPercent),
				Optional: true,
				Attributes: map[string]schema.Attribute{
					"mode": schema.StringAttribute{
						MarkdownDescription: enumDescription("`priority`: backends in `priority` order; `locality`: nearest region first. Default `"+virtualdestination.FailoverModes[0]+"`.", virtualdestination.FailoverModes),
						Optional:            true,
						Validators:          []validator.String{oneOfValidator(virtualdestination.FailoverModes...)},
					},
					"outlier_detection": outlierDetectionAttribute("When a backend counts as failed. Failover needs it. Unset: the defaults of each field below."),
				},
			},
			"clients": schema.SingleNestedAttribute{
				MarkdownDescription: "Where the hostname is called from. ServiceEntries go only to these clusters (default: every registered cluster), exported to `namespaces` (default: all).",
				Optional:            true,
				Attributes: withAttributes(placementAttributes("client clusters", "every registered cluster is a client"), map[string]schema.Attribute{
					"namespaces": schema.ListAttribute{MarkdownDescription: "Namespaces that may call the hostname (ServiceEntry `exportTo`). Default: every namespace (`[\"*\"]`).", Optional: true, ElementType: types.StringType},
				}),
			},
			"vip": schema.StringAttribute{
				MarkdownDescription: "Virtual IP of the hostname in every client cluster. Default: derived from the hostname, stable across plans and states, in 241.0.0.0 to 254.255.255.254 (reserved, never routed; Istio allocates from 240.240.0.0/16 itself). " +
					"Sidecars tell TCP services apart by this address, so two virtual destinations with one VIP fail at plan, naming both; set `vip` on one of them to resolve it.",
				Optional: true,
				Computed: true,
			},
			"objects": objectsAttribute("for `name = \"user\"`: `east/ServiceEntry.networking.istio.io/istio-system/vd-user` and `east/DestinationRule.networking.istio.io/istio-system/vd-user` in each client cluster, the objects of each backend cluster's east-west gateway, and the record `east/ConfigMap/mesh-intent-records/vd-user` in every cluster the virtual destination reaches."),
			"routing": routingAttribute("virtual_destination"),
		},
	}
}

// intent is where mesh_virtual_destination's attributes become translator
// fields.
func (m *virtualDestinationModel) intent() virtualdestination.Intent {
	in := virtualdestination.Intent{
		Name:      m.Name,
		Hostname:  m.Hostname,
		Namespace: m.Namespace,
	}
	for _, p := range m.Ports {
		in.Ports = append(in.Ports, virtualdestination.Port{Number: p.Number, Protocol: p.Protocol, TargetPort: p.TargetPort})
	}
	for _, b := range m.Backends {
		vb := virtualdestination.Backend{Cluster: b.Cluster, Namespace: b.Namespace, Service: b.Service, Weight: b.Weight, ExcludeFor: b.ExcludeFor.placement(), ServiceAccount: deref(b.ServiceAccount)}
		if b.Priority != nil {
			vb.Priority = *b.Priority
		}
		in.Backends = append(in.Backends, vb)
	}
	if f := m.Failover; f != nil {
		in.Failover = &virtualdestination.Failover{}
		if f.Mode != nil {
			in.Failover.Mode = *f.Mode
		}
		in.Failover.OutlierDetection = f.OutlierDetection.vd()
	}
	if c := m.Clients; c != nil {
		in.Clients = virtualdestination.Clients{
			Placement:  translate.Placement{Clusters: c.Clusters, ClusterSelector: c.ClusterSelector},
			Namespaces: c.Namespaces,
		}
	}
	return in
}

func (o *outlierDetectionModel) vd() *virtualdestination.OutlierDetection {
	if o == nil {
		return nil
	}
	return &virtualdestination.OutlierDetection{
		Consecutive5xxErrors: o.Consecutive5xxErrors,
		Interval:             deref(o.Interval),
		BaseEjectionTime:     deref(o.BaseEjectionTime),
		MaxEjectionPercent:   o.MaxEjectionPercent,
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func (m *virtualDestinationModel) spec(_ context.Context, data *providerData, ph phase) (intentSpec, diag.Diagnostics) {
	if m.VIP.IsNull() || m.VIP.IsUnknown() {
		m.VIP = types.StringValue(virtualdestination.VIP(m.Hostname))
	}
	in := m.intent()
	in.VIP = m.VIP.ValueString()
	var diags diag.Diagnostics
	// Only plans are remembered: a refresh reads the state of a virtual
	// destination the plan may rename or re-host (replaced), and an apply
	// deletes the old one while it creates the new one.
	if data != nil && ph == planPhase {
		if at, summary, err := data.Destinations.Remember(in); err != nil {
			addAttrError(&diags, path.Root(at), summary, err.Error())
		}
	}
	if data != nil && ph == statePhase && data.Destinations != nil && ownerIDOf(m.ID) != "" {
		// A refresh reads this state's instance, tainted ones included,
		// whose replacement Terraform plans as a create without the prior
		// state: its records are this resource's own leftovers, never
		// another virtual destination's (checkHostnameRecords).
		data.Destinations.NotePrior(m.Hostname, ownerIDOf(m.ID))
	}
	return intentSpec{
		Owner:      engine.Owner{Kind: intentkind.VirtualDestination.Owner, Name: m.Name, ID: ownerIDOf(m.ID)},
		Kinds:      intentkind.VirtualDestination.Writes,
		ConfigKind: intentkind.VirtualDestination.ConfigKind,
		Translate: func(reg *translate.Registry) ([]translate.Object, error) {
			objs, err := virtualdestination.Translate(in, reg)
			if err != nil {
				return nil, err
			}
			return virtualdestination.WithRecords(in, objs, data.recordsNamespace())
		},
		Routing: func(reg *translate.Registry) (routing.Statement, error) {
			d, err := routing.VirtualDestination(in, reg)
			return d.Statement(), err
		},
		Case:     func() any { return in },
		Services: m.backendServices(),
		NamespaceAttr: func(cluster, namespace string) (path.Path, bool) {
			for i, b := range m.Backends {
				if b.Cluster == cluster && b.Namespace == namespace {
					return path.Root("backends").AtListIndex(i).AtName("namespace"), true
				}
			}
			return path.Path{}, false
		},
	}, diags
}

// backendServices are the Services the backends name, each with its
// attribute; a backend with a value not known yet is left out.
func (m *virtualDestinationModel) backendServices() []serviceCheck {
	var out []serviceCheck
	for i, b := range m.Backends {
		if b.Cluster == "" || b.Namespace == "" || b.Service == "" || translate.IsUnknown(b.Cluster+b.Namespace+b.Service) {
			continue
		}
		out = append(out, serviceCheck{
			Ref: engine.ServiceRef{Cluster: b.Cluster, Namespace: b.Namespace, Name: b.Service},
			At:  path.Root("backends").AtListIndex(i).AtName("service"),
		})
	}
	return out
}

func (m *virtualDestinationModel) inventory() types.Map     { return m.Objects }
func (m *virtualDestinationModel) setInventory(l types.Map) { m.Objects = l }

func (m *virtualDestinationModel) ownerID() *types.String   { return &m.ID }
func (m *virtualDestinationModel) adoptExisting() bool      { return m.Adopt.ValueBool() }
func (m *virtualDestinationModel) adoptedValue() *types.Map { return &m.Adopted }

// ModifyPlan plans the objects (intentLifecycle), then checks the
// hostname against the records other instances left in the clusters
// (checkHostnameRecords), and warns when the records move to another
// records_namespace.
func (r *virtualDestinationResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	r.intentLifecycle.ModifyPlan(ctx, req, resp)
	if req.Plan.Raw.IsNull() || resp.Diagnostics.HasError() {
		return
	}
	var name, host, planID, priorID types.String
	resp.Diagnostics.Append(resp.Plan.GetAttribute(ctx, path.Root("name"), &name)...)
	resp.Diagnostics.Append(resp.Plan.GetAttribute(ctx, path.Root("hostname"), &host)...)
	resp.Diagnostics.Append(resp.Plan.GetAttribute(ctx, path.Root("id"), &planID)...)
	var prior types.Map
	if !req.State.Raw.IsNull() {
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("id"), &priorID)...)
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("objects"), &prior)...)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(warnRecordsMove(path.Root("objects"), r.data.recordsNamespace(), entriesOf(prior))...)
	if host.IsUnknown() || host.IsNull() {
		return
	}
	resp.Diagnostics.Append(checkHostnameRecords(ctx, r.data, path.Root("hostname"), name.ValueString(), host.ValueString(), ownerIDOf(planID), ownerIDOf(priorID))...)
}
