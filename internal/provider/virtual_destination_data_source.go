package provider

import (
	"context"
	"fmt"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

var _ datasource.DataSourceWithConfigure = &virtualDestinationDataSource{}

// NewVirtualDestinationDataSource is the mesh_virtual_destination data
// source: a virtual destination owned by another Terraform state, read from
// its records, so that a team's workspace can attach policies to a
// platform-owned destination without sharing state.
func NewVirtualDestinationDataSource() datasource.DataSource { return &virtualDestinationDataSource{} }

type virtualDestinationDataSource struct {
	data *providerData
}

type vdDataModel struct {
	Hostname  string            `tfsdk:"hostname"`
	Name      types.String      `tfsdk:"name"`
	Namespace types.String      `tfsdk:"namespace"`
	Ports     []vdDataPortModel `tfsdk:"ports"`
	Backends  []vdDataBackend   `tfsdk:"backends"`
}

type vdDataPortModel struct {
	Number   int64  `tfsdk:"number"`
	Protocol string `tfsdk:"protocol"`
}

type vdDataBackend struct {
	Cluster   string `tfsdk:"cluster"`
	Namespace string `tfsdk:"namespace"`
	Service   string `tfsdk:"service"`
	Priority  int64  `tfsdk:"priority"`
}

func (d *virtualDestinationDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_virtual_destination"
}

func (d *virtualDestinationDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	computed := func(desc string) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Computed: true}
	}
	resp.Schema = schema.Schema{
		MarkdownDescription: "A virtual destination managed elsewhere (another Terraform state, another team), read from the record it leaves in the records namespace of the registered clusters. " +
			"Policies in this state can then refer to `data.mesh_virtual_destination.<x>.hostname` without sharing the owner's state.",
		Attributes: map[string]schema.Attribute{
			"hostname":  schema.StringAttribute{MarkdownDescription: "Global hostname of the virtual destination, e.g. `user.global`.", Required: true},
			"name":      computed("Name of the `mesh_virtual_destination`."),
			"namespace": computed("Namespace of its client-side objects."),
			"ports": schema.ListNestedAttribute{MarkdownDescription: "Its ports.", Computed: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"number":   schema.Int64Attribute{Computed: true, MarkdownDescription: "Port number."},
				"protocol": schema.StringAttribute{Computed: true, MarkdownDescription: "Protocol."},
			}}},
			"backends": schema.ListNestedAttribute{MarkdownDescription: "Its backends, in failover order.", Computed: true, NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
				"cluster":   schema.StringAttribute{Computed: true, MarkdownDescription: "Cluster of the backend."},
				"namespace": schema.StringAttribute{Computed: true, MarkdownDescription: "Namespace of its service."},
				"service":   schema.StringAttribute{Computed: true, MarkdownDescription: "Its Kubernetes service."},
				"priority":  schema.Int64Attribute{Computed: true, MarkdownDescription: "Failover priority, lowest first."},
			}}},
		},
	}
}

func (d *virtualDestinationDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if data, ok := req.ProviderData.(*providerData); ok {
		d.data = data
	}
}

func (d *virtualDestinationDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m vdDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	at := path.Root("hostname")
	in, found, ignored, err := lookupVirtualDestination(ctx, d.data, m.Hostname)
	warnIgnoredRecords(&resp.Diagnostics, at, m.Hostname, d.data.recordsNamespace(), ignored)
	if d, conflict := recordsConflictDiagnostics(at, err); conflict {
		resp.Diagnostics.Append(d...)
		return
	}
	switch {
	case err != nil:
		addAttrError(&resp.Diagnostics, at, "Virtual destination not readable", fmt.Sprintf("The record of %q could not be read: %v. Check that the registered clusters answer and that the provider may read ConfigMaps in namespace %q.", m.Hostname, err, d.data.recordsNamespace()))
		return
	case !found:
		addAttrError(&resp.Diagnostics, at, "No such virtual destination",
			fmt.Sprintf("No virtual destination with hostname %q: none is planned in this configuration, and no registered cluster has its record in namespace %q. "+
				"Apply the state that owns it first, and check that this provider registers at least one of its clusters.", m.Hostname, d.data.recordsNamespace()))
		return
	}
	m.Name = types.StringValue(in.Name)
	ns := in.Namespace
	if ns == "" {
		ns = translate.DefaultIstioNS
	}
	m.Namespace = types.StringValue(ns)
	m.Ports = nil
	for _, p := range in.Ports {
		m.Ports = append(m.Ports, vdDataPortModel{Number: p.Number, Protocol: p.Protocol})
	}
	m.Backends = nil
	for _, b := range in.Backends {
		m.Backends = append(m.Backends, vdDataBackend{Cluster: b.Cluster, Namespace: b.Namespace, Service: b.Service, Priority: b.Priority})
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
