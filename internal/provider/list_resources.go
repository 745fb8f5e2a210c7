package provider

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/list"
	listschema "github.com/hashicorp/terraform-plugin-framework/list/schema"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
)

// List resources (Terraform 1.14 and later: `list` blocks, terraform
// query): the intents of one kind the registered clusters hold. Every
// intent this provider applied keeps its configuration in the clusters
// (discovery.ConfigAnnotation, the contributions of traffic policies), which is how
// import rebuilds a resource by name; a list finds the names, then imports
// and reads each exactly as `terraform import` would (ImportState, then
// Read), so that the resource object it returns with include_resource is
// the state an import makes, and configuration generated from it
// (terraform query -generate-config-out) plans with no changes.
//
// An intent whose objects cannot be imported (several instances, kept
// configurations that disagree, objects without an instance ID) is not
// listed: a warning says why, as its import would. A cluster that cannot
// be searched fails the list, since what it holds could be missing.

var (
	_ provider.ProviderWithListResources = &meshProvider{}
	_ list.ListResourceWithConfigure     = &intentList{}
)

// ListResources are the list resources, one per intent kind.
func (p *meshProvider) ListResources(_ context.Context) []func() list.ListResource {
	return []func() list.ListResource{
		func() list.ListResource {
			return &intentList{newResource: NewVirtualDestinationResource, hostnames: vdHostnames}
		},
		func() list.ListResource {
			return &intentList{newResource: NewTrafficPolicyResource, hostnames: destinationHostnames}
		},
		func() list.ListResource {
			return &intentList{newResource: NewAccessPolicyResource, hostnames: destinationHostnames}
		},
	}
}

// listableIntent is an intent resource as a list uses it.
type listableIntent interface {
	resource.ResourceWithConfigure
	resource.ResourceWithImportState
	importTargetOf() importTarget
	// importListed is ImportState by name for an intent the list found,
	// from the instances found: no second search of every cluster.
	importListed(ctx context.Context, name string, found map[string]discovery.Instance, resp *resource.ImportStateResponse)
}

func (l *intentLifecycle[M, P]) importTargetOf() importTarget { return l.importer }

// intentList lists the intents of the kind newResource makes.
type intentList struct {
	newResource func() resource.Resource
	// hostnames are the hostnames an intent's state is about (the
	// hostname filter).
	hostnames func(ctx context.Context, state tfsdk.State) []string
	data      *providerData
}

type intentListConfig struct {
	Name     types.String `tfsdk:"name"`
	Hostname types.String `tfsdk:"hostname"`
	Cluster  types.String `tfsdk:"cluster"`
}

func (l *intentList) Metadata(ctx context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	l.newResource().Metadata(ctx, req, resp)
}

func (l *intentList) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if data, ok := req.ProviderData.(*providerData); ok {
		l.data = data
	}
}

func (l *intentList) ListResourceConfigSchema(_ context.Context, _ list.ListResourceSchemaRequest, resp *list.ListResourceSchemaResponse) {
	resp.Schema = listschema.Schema{
		MarkdownDescription: "The intents of this kind that the registered clusters hold, found by the configuration each keeps there and imported as `terraform import` would. " +
			"Every filter set must match. Needs Terraform 1.14 or later (`list` blocks, `terraform query`).",
		Attributes: map[string]listschema.Attribute{
			"name": listschema.StringAttribute{
				MarkdownDescription: "Only the intent of this name.",
				Optional:            true,
				Validators:          []validator.String{dnsLabelValidator{}},
			},
			"hostname": listschema.StringAttribute{
				MarkdownDescription: "Only intents about this hostname: a virtual destination's `hostname`; a policy's `destination.virtual_destination`, or `<service>.<namespace>.svc.cluster.local` for a service destination.",
				Optional:            true,
			},
			"cluster": listschema.StringAttribute{
				MarkdownDescription: "Only intents with objects in this registered cluster.",
				Optional:            true,
				Validators:          []validator.String{dnsLabelValidator{}},
			},
		},
	}
}

func (l *intentList) List(ctx context.Context, req list.ListRequest, stream *list.ListResultsStream) {
	var cfg intentListConfig
	diags := req.Config.Get(ctx, &cfg)
	if diags.HasError() {
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	r, ok := l.newResource().(listableIntent)
	if !ok {
		diags.AddError("Not listable", "This resource type cannot be listed. This is a bug in the provider.")
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	r.Configure(ctx, resource.ConfigureRequest{ProviderData: l.data}, &resource.ConfigureResponse{})
	t := r.importTargetOf()
	if l.data == nil || l.data.RegistryUnknown || len(l.data.Registry.Names()) == 0 {
		diags.AddError("Listing needs the clusters",
			"The provider's clusters are not known (values known only after apply) or none is registered, so there is nowhere to look for intents.")
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	if c := cfg.Cluster.ValueString(); c != "" && !slices.Contains(l.data.Registry.Names(), c) {
		diags.AddAttributeError(path.Root("cluster"), "Unknown cluster",
			l.data.Registry.UnknownCluster(c)+" Fix the name, or list without cluster.")
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	found, unreachable := discovery.ListIntents(ctx, l.data.Engine, l.data.Registry.Names(), t.kind)
	if len(unreachable) > 0 {
		sort.Strings(unreachable)
		diags.AddError("Listing could not search every cluster",
			fmt.Sprintf("Listing the %s intents needs every registered cluster, and these could not be searched: %s.", t.kind.Owner, strings.Join(unreachable, "; ")))
		stream.Results = list.ListResultsStreamDiagnostics(diags)
		return
	}
	names := make([]string, 0, len(found))
	for name, listed := range found {
		if cfg.Name.ValueString() != "" && name != cfg.Name.ValueString() {
			continue
		}
		if cfg.Cluster.ValueString() != "" && !listed.Clusters[cfg.Cluster.ValueString()] {
			continue
		}
		names = append(names, name)
	}
	sort.Strings(names)
	stream.Results = func(push func(list.ListResult) bool) {
		pushed := int64(0)
		for _, name := range names {
			if req.Limit > 0 && pushed >= req.Limit {
				return
			}
			result, ok := l.listOne(ctx, r, t, name, found[name].Instances, cfg.Hostname.ValueString(), req)
			if !ok {
				continue
			}
			if result.Identity != nil {
				pushed++
			}
			if !push(result) {
				return
			}
		}
	}
}

// listOne imports (from the instances the list found) and reads the
// intent name as terraform import would; ok is false when it is filtered
// out by hostname.
func (l *intentList) listOne(ctx context.Context, r listableIntent, t importTarget, name string, found map[string]discovery.Instance, hostname string, req list.ListRequest) (list.ListResult, bool) {
	result := req.NewListResult(ctx)
	imported := resource.ImportStateResponse{
		State:    tfsdk.State{Schema: req.ResourceSchema, Raw: tftypes.NewValue(req.ResourceSchema.Type().TerraformType(ctx), nil)},
		Identity: &tfsdk.ResourceIdentity{Schema: req.ResourceIdentitySchema, Raw: tftypes.NewValue(req.ResourceIdentitySchema.Type().TerraformType(ctx), nil)},
	}
	r.importListed(ctx, name, found, &imported)
	if imported.Diagnostics.HasError() {
		return list.ListResult{Diagnostics: notListed(t.kind.Owner, name, imported.Diagnostics)}, true
	}
	read := resource.ReadResponse{
		State:    tfsdk.State{Schema: imported.State.Schema, Raw: imported.State.Raw.Copy()},
		Identity: &tfsdk.ResourceIdentity{Schema: imported.Identity.Schema, Raw: imported.Identity.Raw.Copy()},
	}
	r.Read(ctx, resource.ReadRequest{State: imported.State, Identity: imported.Identity}, &read)
	diags := append(imported.Diagnostics, read.Diagnostics...)
	if diags.HasError() {
		return list.ListResult{Diagnostics: notListed(t.kind.Owner, name, diags)}, true
	}
	hosts := l.hostnames(ctx, read.State)
	if hostname != "" && !slices.Contains(hosts, hostname) {
		return list.ListResult{}, false
	}
	result.Identity = read.Identity
	result.DisplayName = name
	if len(hosts) > 0 {
		result.DisplayName += " (" + strings.Join(hosts, ", ") + ")"
	}
	if req.IncludeResource {
		result.Resource = &tfsdk.Resource{Schema: read.State.Schema, Raw: read.State.Raw}
	}
	result.Diagnostics = diags
	return result, true
}

// notListed turns the errors that kept an intent from being imported into
// warnings: the list goes on without it.
func notListed(kind, name string, diags diag.Diagnostics) diag.Diagnostics {
	var out diag.Diagnostics
	for _, d := range diags {
		if d.Severity() == diag.SeverityError {
			out.AddWarning(fmt.Sprintf("%s %q not listed: %s", kind, name, d.Summary()), d.Detail())
		} else {
			out.Append(d)
		}
	}
	return out
}

// vdHostnames is a virtual destination's hostname.
func vdHostnames(ctx context.Context, state tfsdk.State) []string {
	var host types.String
	if state.GetAttribute(ctx, path.Root("hostname"), &host).HasError() || host.ValueString() == "" {
		return nil
	}
	return []string{host.ValueString()}
}

// destinationHostnames is the hostname a policy's destination names: the
// virtual destination's, or the service's cluster-local name.
func destinationHostnames(ctx context.Context, state tfsdk.State) []string {
	var vd, svc, ns types.String
	dest := path.Root("destination")
	if state.GetAttribute(ctx, dest.AtName("virtual_destination"), &vd).HasError() ||
		state.GetAttribute(ctx, dest.AtName("service"), &svc).HasError() ||
		state.GetAttribute(ctx, dest.AtName("namespace"), &ns).HasError() {
		return nil
	}
	switch {
	case vd.ValueString() != "":
		return []string{vd.ValueString()}
	case svc.ValueString() != "":
		return []string{svc.ValueString() + "." + ns.ValueString() + ".svc.cluster.local"}
	}
	return nil
}
