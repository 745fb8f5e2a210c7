package provider

import (
	"context"
	"sync"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

var _ datasource.DataSourceWithConfigure = &clustersDataSource{}

// NewClustersDataSource is the mesh_clusters data source.
func NewClustersDataSource() datasource.DataSource { return &clustersDataSource{} }

type clustersDataSource struct {
	data *providerData
}

type clustersDataSourceModel struct {
	Clusters types.List `tfsdk:"clusters"`
}

var clusterInfoAttrTypes = map[string]attr.Type{
	"name":               types.StringType,
	"labels":             types.MapType{ElemType: types.StringType},
	"reachable":          types.BoolType,
	"kubernetes_version": types.StringType,
	"istio_crds":         types.ListType{ElemType: types.StringType},
	"error":              types.StringType,
}

func (d *clustersDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_clusters"
}

func (d *clustersDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Reads every cluster registered in the provider block and reports whether it is reachable, its Kubernetes version and the Istio kinds it serves. " +
			"A cluster that cannot be read is reported with its error; it never fails the whole read.",
		Attributes: map[string]schema.Attribute{
			"clusters": schema.ListNestedAttribute{
				MarkdownDescription: "One entry per registered cluster, sorted by name.",
				Computed:            true,
				NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
					"name":               schema.StringAttribute{Computed: true, MarkdownDescription: "Cluster name (its key in the provider's `clusters`)."},
					"labels":             schema.MapAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Labels from the provider block."},
					"reachable":          schema.BoolAttribute{Computed: true, MarkdownDescription: "Whether the API server answered."},
					"kubernetes_version": schema.StringAttribute{Computed: true, MarkdownDescription: "Version the API server reports, e.g. `v1.36.3`."},
					"istio_crds":         schema.ListAttribute{Computed: true, ElementType: types.StringType, MarkdownDescription: "Istio kinds served, as `<apiVersion> <Kind>`."},
					"error":              schema.StringAttribute{Computed: true, MarkdownDescription: "Why the cluster could not be read; empty when it could."},
				}},
			},
		},
	}
}

func (d *clustersDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, _ *datasource.ConfigureResponse) {
	if data, ok := req.ProviderData.(*providerData); ok {
		d.data = data
	}
}

func (d *clustersDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	if d.data == nil {
		resp.Diagnostics.AddError("Provider not configured", "The mesh provider block must be configured before mesh_clusters can be read.")
		return
	}
	names := d.data.Registry.Names()
	results := make([]attr.Value, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Add(1)
		go func(i int, name string) {
			defer wg.Done()
			results[i] = d.probe(name)
		}(i, name)
	}
	wg.Wait()
	list, diags := types.ListValue(types.ObjectType{AttrTypes: clusterInfoAttrTypes}, results)
	resp.Diagnostics.Append(diags...)
	resp.Diagnostics.Append(resp.State.Set(ctx, clustersDataSourceModel{Clusters: list})...)
}

func (d *clustersDataSource) probe(name string) attr.Value {
	c := d.data.Registry.Cluster(name)
	labels := map[string]attr.Value{}
	for k, v := range c.Labels {
		labels[k] = types.StringValue(v)
	}
	info, err := d.data.Engine.Probe(name)
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	kinds := make([]attr.Value, len(info.IstioKinds))
	for i, k := range info.IstioKinds {
		kinds[i] = types.StringValue(k)
	}
	return types.ObjectValueMust(clusterInfoAttrTypes, map[string]attr.Value{
		"name":               types.StringValue(name),
		"labels":             types.MapValueMust(types.StringType, labels),
		"reachable":          types.BoolValue(info.KubernetesVersion != ""),
		"kubernetes_version": types.StringValue(info.KubernetesVersion),
		"istio_crds":         types.ListValueMust(types.StringType, kinds),
		"error":              types.StringValue(errText),
	})
}
