package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/function"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
	"github.com/mesh-intent/terraform-provider-mesh/internal/runstate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

var (
	_ provider.Provider                   = &meshProvider{}
	_ provider.ProviderWithValidateConfig = &meshProvider{}
	_ provider.ProviderWithFunctions      = &meshProvider{}
)

// New returns the provider factory for providerserver.
func New(version string) func() provider.Provider {
	return func() provider.Provider { return &meshProvider{version: version} }
}

type meshProvider struct {
	version string
}

type providerModel struct {
	Clusters       types.Map    `tfsdk:"clusters"`
	FieldManager   types.String `tfsdk:"field_manager"`
	ForceConflicts types.Bool   `tfsdk:"force_conflicts"`
	RequestTimeout types.String `tfsdk:"request_timeout"`
	Retired        types.Set    `tfsdk:"retired_clusters"`
	RecordsNS      types.String `tfsdk:"records_namespace"`
	Workspace      types.String `tfsdk:"workspace"`
}

// providerData is what Configure hands to every resource and data source.
type providerData struct {
	// Registry is the topology the translator needs; its values may be
	// translate.Unknown placeholders at plan time.
	Registry *translate.Registry
	// RegistryUnknown is set when even the set of clusters is not known.
	RegistryUnknown bool
	Clients         *kubeclient.Set
	Engine          *engine.Engine
	// Destinations indexes the virtual destinations seen in this run.
	Destinations *runstate.DestinationIndex
	// TrafficPolicies indexes the traffic policies planned in this run.
	TrafficPolicies *runstate.TrafficPolicyIndex
	// Roster is what this run's mesh_workspace lists
	// (workspace_resource.go).
	Roster *runstate.WorkspaceRoster
	// Retired are clusters gone for good: objects listed there are
	// forgotten, never contacted (see forgetRetired).
	Retired map[string]bool
	// RetiredUnknown is set when retired_clusters is known only after
	// apply: the removed-cluster check waits (checkRemovedClusters).
	RetiredUnknown bool
	// RecordsNamespace is the namespace of virtual destination records.
	RecordsNamespace string
	// Planned tells which intent planned each object in this run.
	Planned *runstate.PlannedObjects
	// Workspace is the workspace name composed contributions carry
	// (workspace.go); WorkspaceExplicit is set when the configuration gives
	// it, which makes it the roster's identity.
	Workspace         string
	WorkspaceExplicit bool
	// Version is this provider's version (New), recorded in the
	// contributions it writes and named when it cannot read another's.
	Version string
}

// claims reads and writes workspace claims through the run's engine.
func (d *providerData) claims() shareddata.Claims { return shareddata.Claims{Engine: d.Engine} }

// records looks virtual destinations' records up through the run's
// engine.
func (d *providerData) records() shareddata.Records { return shareddata.Records{Engine: d.Engine} }

// recordsNamespace is where virtual destination records are written and
// read.
func (d *providerData) recordsNamespace() string {
	if d == nil || d.RecordsNamespace == "" {
		return virtualdestination.DefaultRecordsNamespace
	}
	return d.RecordsNamespace
}

func (p *meshProvider) Metadata(_ context.Context, _ provider.MetadataRequest, resp *provider.MetadataResponse) {
	resp.TypeName = "mesh"
	resp.Version = p.version
}

func (p *meshProvider) Schema(_ context.Context, _ provider.SchemaRequest, resp *provider.SchemaResponse) {
	resp.Schema = schema.Schema{
		MarkdownDescription: "Turns multi-cluster service-mesh intent into Istio configuration on every registered cluster. " +
			"The provider block is the cluster registry: how to reach each cluster (evaluated on every run, never stored in state) " +
			"and the topology facts the translator needs.",
		Attributes: map[string]schema.Attribute{
			"clusters": schema.MapNestedAttribute{
				MarkdownDescription: "The clusters of the mesh, keyed by name. The name is how every resource refers to a cluster; it must be a DNS label. " +
					"Where each cluster's connection leads is checked at plan, before anything is read or written, by reading the kubeconfig files (no cluster is contacted): " +
					"two clusters that reach one API server (the same address, CA and `tls_server_name`, however written) are a plan error naming both, " +
					"and so is a cluster whose kubeconfig context cannot be chosen safely (see `config_context`).",
				Required:     true,
				NestedObject: schema.NestedAttributeObject{Attributes: clusterAttributes()},
			},
			"field_manager": schema.StringAttribute{
				MarkdownDescription: "Base name of the server-side-apply field managers. Each intent applies as `<field_manager>/<kind>.<name>`; changing it migrates ownership on the next apply (the former manager's fields are taken over and released). " +
					"Objects shared by traffic policies are written by one composer per kind, `terraform-provider-mesh/<kind>-composer`, whatever this base, so states with different bases, and a change of this setting, compose on the same objects. Default `terraform-provider-mesh`.",
				Optional:   true,
				Validators: []validator.String{stringvalidator.LengthBetween(1, 80)},
			},
			"force_conflicts": schema.BoolAttribute{
				MarkdownDescription: "Take ownership of fields that another field manager applied. Default `false`: such a conflict fails the apply with an error naming the object, fields and manager.",
				Optional:            true,
			},
			"request_timeout": schema.StringAttribute{
				MarkdownDescription: "Timeout of each request to a cluster, as a Go duration (`30s`, `2m`). Default `30s`. It bounds the whole run: a cluster that does not answer within it once is not asked again until the next Terraform command (every later request to it fails at once, naming it), and an exec credential plugin that has not finished within it is stopped.",
				Optional:            true,
				Validators:          []validator.String{durationValidator{}},
			},
			"records_namespace": schema.StringAttribute{
				MarkdownDescription: "Namespace, in every cluster, of the records virtual destinations leave for the policies planned later or in another state (ConfigMaps). Records are read from this namespace only; anything elsewhere is ignored. " +
					"It must exist in every cluster, and is the only place the provider needs ConfigMap access (a Role, see examples/rbac). Default `" + virtualdestination.DefaultRecordsNamespace + "`. " +
					"Every record names the instance that wrote it: records of one hostname by two instances, or that disagree, are a plan error. " +
					"Every state that reads a virtual destination's records must use the same value. Changing it moves the records: the next apply of each virtual destination writes its record in the new namespace and deletes the old one (its plan warns, naming both); grant the provider ConfigMap access in both namespaces for that apply.",
				Optional:   true,
				Validators: []validator.String{dnsLabelValidator{}},
			},
			"workspace": workspaceAttribute(),
			"retired_clusters": schema.SetAttribute{
				MarkdownDescription: "Clusters that are gone for good (decommissioned, deleted together with their objects), by the names they had in `clusters`. Unset: none. " +
					"Objects that resources still list in these clusters are dropped from state with a warning, without contacting the cluster, " +
					"instead of failing because the cluster is no longer registered. Nothing is deleted there: use it only for clusters that no longer exist, " +
					"or delete their objects yourself. A name cannot be both in `clusters` and here.",
				Optional:    true,
				ElementType: types.StringType,
			},
		},
	}
}

func clusterAttributes() map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"kubernetes": schema.SingleNestedAttribute{
			MarkdownDescription: "How to reach the cluster's API server. Same attribute names as the kubernetes provider. Use `config_path` or `config_paths` (and `config_context`), or `host` with a token, client certificate or `exec` plugin. " +
				"Without it (or without any of `config_path`, `config_paths`, `host` and `in_cluster` in it), the kubeconfig comes from the environment variable `KUBE_CONFIG_PATH` or `KUBE_CONFIG_PATHS`, and the context is chosen as `config_context` describes; " +
				"with neither variable set, plan fails naming the cluster (`terraform validate` does not read the environment).",
			Optional:   true,
			Attributes: kubernetesAttributes(),
		},
		"network": schema.StringAttribute{
			MarkdownDescription: "Istio network name of the cluster (`topology.istio.io/network`), recorded for reference. The objects written do not depend on it: a client always reaches a backend in another cluster through that cluster's east-west gateway. Unset: no network is recorded, and nothing else changes.",
			Optional:            true,
		},
		"region": schema.StringAttribute{
			MarkdownDescription: "Region of the cluster, used for locality-aware routing and failover. Unset: the cluster has no locality, and locality failover (`failover.mode = \"locality\"`) refuses it as a backend.",
			Optional:            true,
		},
		"zone": schema.StringAttribute{
			MarkdownDescription: "Zone of the cluster, used for locality-aware routing. Unset: locality failover tells the clusters of one region apart by zone only where zones are set (two clusters of a region without zones rank as one zone).",
			Optional:            true,
		},
		"trust_domain": schema.StringAttribute{
			MarkdownDescription: "SPIFFE trust domain of the cluster's workloads. Access policies build principals `<trust_domain>/ns/<namespace>/sa/<service_account>` from it. Default `" + translate.DefaultTrustDomain + "`.",
			Optional:            true,
			Validators:          []validator.String{trustDomainValidator{}},
		},
		"istio_version": schema.StringAttribute{
			MarkdownDescription: "Istio minor version running in the cluster, `1.30` or `1.31` (a patch version such as `1.31.2` is accepted). Default `" + translate.DefaultIstioVersion + "`. " +
				"The translation avoids or refuses shapes known to break that version at plan, naming the upstream issue; see the supported versions in the provider documentation.",
			Optional:   true,
			Validators: []validator.String{stringvalidator.RegexMatches(istioVersionPattern, "must be a supported Istio version: "+strings.Join(translate.SupportedIstioVersions, ", ")+" (optionally with a patch number)")},
		},
		"labels": schema.MapAttribute{
			MarkdownDescription: "Labels of the cluster, matched by `cluster_selector` in placements. Keys and values follow Kubernetes label syntax. Unset: no labels, so only placements that name the cluster (`clusters`) or select every cluster include it.",
			Optional:            true,
			ElementType:         types.StringType,
			Validators:          []validator.Map{labelsValidator{}},
		},
		"delivery": deliveryAttribute(),
		"east_west_gateway": schema.SingleNestedAttribute{
			MarkdownDescription: "The cluster's east-west gateway as other networks reach it. Needed when the cluster backs a virtual destination used from another network. Unset: the cluster can back a virtual destination for its own clients only; plan refuses a virtual destination that would send another cluster's clients to it.",
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"address": schema.StringAttribute{
					MarkdownDescription: "IP address or hostname of the gateway.",
					Required:            true,
					Validators:          []validator.String{stringvalidator.LengthAtLeast(1)},
				},
				"port": schema.Int64Attribute{
					MarkdownDescription: "mTLS port of the gateway. Default `" + fmt.Sprint(translate.DefaultEastWestPort) + "`.",
					Optional:            true,
					Validators:          []validator.Int64{int64validator.Between(1, 65535)},
				},
				"target_port": schema.Int64Attribute{
					MarkdownDescription: "Port the gateway pods listen on, which `mesh_cluster`'s Gateway server binds, when a load balancer in front maps `port` to another one. Default: `port`.",
					Optional:            true,
					Validators:          []validator.Int64{int64validator.Between(1, 65535)},
				},
				"hosts": schema.ListAttribute{
					MarkdownDescription: "Hosts the gateway passes through to this cluster (its `AUTO_PASSTHROUGH` Gateway's hosts, as `mesh_cluster`'s `east_west_hosts` writes them). Default `" + hclList(translate.DefaultEastWestHosts) + "`. " +
						"A virtual destination whose hostname none of them covers cannot be reached here from another network, so plan refuses it; `mesh_cluster` refuses `east_west_hosts` that leave one of them out.",
					Optional:    true,
					ElementType: types.StringType,
				},
			},
		},
	}
}

func kubernetesAttributes() map[string]schema.Attribute {
	str := func(desc string, sensitive bool, v ...validator.String) schema.StringAttribute {
		return schema.StringAttribute{MarkdownDescription: desc, Optional: true, Sensitive: sensitive, Validators: v}
	}
	return map[string]schema.Attribute{
		"config_path": str("Path to a kubeconfig file. `~` is expanded. Default: the environment variable `KUBE_CONFIG_PATH`, when none of `config_paths`, `host` and `in_cluster` is set; otherwise no kubeconfig is read. "+
			"A file that other registered clusters read too (by path, symbolic links resolved) is shared: each cluster needs its own context there (see `config_context`).", false),
		"config_paths": schema.ListAttribute{
			MarkdownDescription: "Kubeconfig files merged as kubectl merges `KUBECONFIG` (the first file that sets a value wins). Instead of `config_path`. Default: the environment variable `KUBE_CONFIG_PATHS` (a list separated like `PATH`), when neither `KUBE_CONFIG_PATH` nor any of `config_path`, `host` and `in_cluster` is set. " +
				"If any of the files is read by another registered cluster too, the kubeconfig is shared (see `config_context`).",
			Optional:    true,
			ElementType: types.StringType,
			Validators:  []validator.List{listvalidator.SizeAtLeast(1), listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))},
		},
		"config_context": str("Context to use from the kubeconfig; a context the files do not have is a plan error listing those they have. "+
			"Default: the context named like the cluster (its key in `clusters`) if the kubeconfig has one. Otherwise, the file's current context, but only when the kubeconfig is the cluster's own and has that one context: "+
			"no other registered cluster reads any of its files and it holds a single context (one file per cluster, as `aws eks update-kubeconfig --kubeconfig <file>` or a per-cluster `KUBECONFIG` writes it). "+
			"A kubeconfig with several contexts (the default `~/.kube/config`, where the current context follows `kubectl config use-context`) needs `config_context` or a context named like the cluster, even for one registered cluster. "+
			"In a kubeconfig shared with other registered clusters (`~/.kube/config` for several, or `KUBE_CONFIG_PATH` for every cluster) the current context is never used on its own: "+
			"a cluster with neither `config_context` nor a context named like it is a plan error that names it and lists the file's contexts, and nothing is written to any cluster.", false),
		"host":                   str("URL of the API server, e.g. `https://203.0.113.1:6443`. Overrides the kubeconfig's server. Unset: the kubeconfig's server.", false, urlValidator{schemes: []string{"https", "http"}}),
		"token":                  str("Bearer token. Unset: the kubeconfig's credentials, a client certificate or `exec`.", true),
		"cluster_ca_certificate": str("PEM-encoded CA bundle that signs the API server's certificate. Unset: the kubeconfig's, else the system's trusted roots.", false, pemValidator{}),
		"client_certificate":     str("PEM-encoded client certificate (with `client_key`). Unset: the kubeconfig's, if any.", false, pemValidator{}),
		"client_key":             str("PEM-encoded client key (with `client_certificate`). Unset: the kubeconfig's, if any.", true, pemValidator{}),
		"insecure":               schema.BoolAttribute{MarkdownDescription: "Skip verification of the API server's certificate, and allow a `token` over plain `http://`. Only for tests. Default `false`.", Optional: true},
		"in_cluster": schema.BoolAttribute{
			MarkdownDescription: "Connect with the service account of the pod Terraform runs in (its token and the cluster's in-cluster address). Default `false`: the provider never falls back to in-cluster credentials on its own, so a cluster whose settings are empty is an error rather than a connection to wherever the runner happens to be. Cannot be combined with `config_path` or `host`.",
			Optional:            true,
		},
		"tls_server_name": str("Server name to verify the API server's certificate against. Unset: the kubeconfig's, else the host name of the server URL.", false),
		"proxy_url":       str("URL of a proxy to reach the API server through (http, https or socks5). Sensitive: it may carry the proxy's credentials. Unset: the kubeconfig's `proxy-url`, else the `HTTPS_PROXY` and `NO_PROXY` environment variables, as kubectl uses them.", true, urlValidator{schemes: []string{"http", "https", "socks5"}}),
		"exec": schema.SingleNestedAttribute{
			MarkdownDescription: "Exec credential plugin (as in a kubeconfig user), e.g. `aws eks get-token` or `gke-gcloud-auth-plugin`. Runs on every apply; its output is never stored. Unset: no plugin runs, unless the kubeconfig's user names one.",
			Optional:            true,
			Attributes: map[string]schema.Attribute{
				"api_version": schema.StringAttribute{
					MarkdownDescription: "API version of the ExecCredential the plugin prints: `client.authentication.k8s.io/v1` or `client.authentication.k8s.io/v1beta1`.",
					Required:            true,
					Validators:          []validator.String{stringvalidator.OneOf("client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1")},
				},
				"command": schema.StringAttribute{MarkdownDescription: "Command to run.", Required: true, Validators: []validator.String{stringvalidator.LengthAtLeast(1)}},
				"args":    schema.ListAttribute{MarkdownDescription: "Arguments. Sensitive: plugins take secrets (a role, a key file) on their command line. Unset: none.", Optional: true, ElementType: types.StringType, Sensitive: true},
				"env":     schema.MapAttribute{MarkdownDescription: "Environment variables to set for the command, on top of Terraform's environment. Sensitive. Unset: the plugin gets Terraform's environment as it is.", Optional: true, ElementType: types.StringType, Sensitive: true},
			},
		},
	}
}

func (p *meshProvider) Configure(ctx context.Context, req provider.ConfigureRequest, resp *provider.ConfigureResponse) {
	// Which build serves this run, in Terraform's log (TF_LOG=INFO): the
	// version stamped at build (make install, goreleaser), "dev" otherwise.
	tflog.Info(ctx, "terraform-provider-mesh "+p.version, map[string]any{"version": p.version})
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	reg, conns, unknown, diags := buildRegistry(ctx, m)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Where each cluster's connection leads is checked here, at plan and
	// before any resource reads or writes: a cluster reached through
	// another's context or API server fails the run, not one cluster.
	resp.Diagnostics.Append(checkTargets(ctx, m, conns)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout := kubeclient.DefaultTimeout
	if d, err := time.ParseDuration(m.RequestTimeout.ValueString()); err == nil && d > 0 {
		timeout = d
	}
	clients := kubeclient.NewSet(conns, timeout)
	data := &providerData{
		Registry:          reg,
		RegistryUnknown:   unknown,
		Clients:           clients,
		Destinations:      &runstate.DestinationIndex{},
		Planned:           &runstate.PlannedObjects{},
		TrafficPolicies:   &runstate.TrafficPolicyIndex{},
		Roster:            &runstate.WorkspaceRoster{},
		RecordsNamespace:  m.RecordsNS.ValueString(),
		Workspace:         workspaceOf(m.Workspace),
		WorkspaceExplicit: m.Workspace.ValueString() != "",
		Version:           p.version,
		Engine: &engine.Engine{
			RecordsNamespace: m.RecordsNS.ValueString(),
			Clients:          clients,
			FieldManager:     m.FieldManager.ValueString(),
			ForceConflicts:   m.ForceConflicts.ValueBool(),
			// Objects several intents share are composed from their
			// contributions (one verdict on each).
			Shared: shareddata.Compositions{},
			// Which contributions compose into the objects they are on
			// (a composer's fields are honoured only there).
			Composers: map[string]composition.Composer{
				intentkind.TrafficPolicy.Owner: &trafficpolicy.Composer{Registry: reg, Version: providerVersion(p.version)},
			},
		},
	}
	if !m.Clusters.IsNull() && !m.Clusters.IsUnknown() {
		known, _, d := clusterModels(ctx, m.Clusters)
		resp.Diagnostics.Append(d...)
		pull := pullClusters(ctx, known, &resp.Diagnostics)
		validateDelivery(pull, &resp.Diagnostics)
		if delivery := buildDelivery(pull, data.Workspace, data.WorkspaceExplicit, m.Workspace.IsUnknown(), &resp.Diagnostics); delivery != nil {
			data.Engine.Delivery = delivery
		}
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if !m.Retired.IsNull() && !m.Retired.IsUnknown() {
		data.Retired = map[string]bool{}
		for _, v := range m.Retired.Elements() {
			if s, ok := v.(types.String); ok && !s.IsUnknown() && !s.IsNull() {
				data.Retired[s.ValueString()] = true
			} else if ok && s.IsUnknown() {
				data.RetiredUnknown = true
			}
		}
	}
	data.RetiredUnknown = data.RetiredUnknown || m.Retired.IsUnknown()
	// Configure runs once per run (plan, apply): the checks that wait for
	// an unknown registry are named here, once, not by every resource.
	if summary, detail := waitsForApplyWarning(unknown, data.RetiredUnknown); summary != "" {
		resp.Diagnostics.AddWarning(summary, detail)
	}
	resp.ResourceData = data
	resp.DataSourceData = data
	resp.ListResourceData = data
}

func (p *meshProvider) Resources(_ context.Context) []func() resource.Resource {
	return []func() resource.Resource{
		NewClusterResource,
		NewVirtualDestinationResource,
		NewAccessPolicyResource,
		NewTrafficPolicyResource,
		NewWorkspaceResource,
	}
}

func (p *meshProvider) DataSources(_ context.Context) []func() datasource.DataSource {
	return []func() datasource.DataSource{
		NewClustersDataSource,
		NewVirtualDestinationDataSource,
		NewRenderedObjectsDataSource,
	}
}

// Functions are the provider's functions (Terraform 1.8, OpenTofu 1.7).
func (p *meshProvider) Functions(_ context.Context) []func() function.Function {
	return []func() function.Function{NewRoutingSummaryFunction}
}

var clustersPath = path.Root("clusters")

// istioVersionPattern accepts the supported Istio minors, with or without
// a patch number.
var istioVersionPattern = regexp.MustCompile(`^1\.(30|31)(\.[0-9]+)?$`)
