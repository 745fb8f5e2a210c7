package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"k8s.io/apimachinery/pkg/util/validation"
)

// ValidateConfig checks what single-attribute validators cannot: how the
// attributes of one cluster fit together. Values not known yet (a cluster
// created in the same apply) are skipped, never rejected. Nothing here
// reads the environment or the file system, so terraform validate passes
// without credentials; where a connection leads (environment variables,
// kubeconfig files and their contexts) is checked at plan, by Configure
// (checkTargets).
func (p *meshProvider) ValidateConfig(ctx context.Context, req provider.ValidateConfigRequest, resp *provider.ValidateConfigResponse) {
	var m providerModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || m.Clusters.IsNull() || m.Clusters.IsUnknown() {
		return
	}
	if len(m.Clusters.Elements()) == 0 {
		addAttrError(&resp.Diagnostics, clustersPath, "No clusters",
			"The provider needs at least one cluster in clusters, e.g. clusters = { east = { kubernetes = { config_path = \"~/.kube/config\", config_context = \"east\" } } }.")
		return
	}
	known, _, diags := clusterModels(ctx, m.Clusters)
	resp.Diagnostics.Append(diags...)
	for name, c := range known {
		at := clustersPath.AtMapKey(name)
		if errs := validation.IsDNS1123Label(name); len(errs) > 0 {
			addAttrError(&resp.Diagnostics, at, "Invalid cluster name",
				fmt.Sprintf("Cluster name %q must be a DNS label (lowercase letters, digits and '-', at most 63 characters): it becomes part of labels and object names. %s.", name, strings.Join(errs, "; ")))
		}
		validateConnection(ctx, c, at.AtName("kubernetes"), &resp.Diagnostics)
	}
	validateDelivery(pullClusters(ctx, known, &resp.Diagnostics), &resp.Diagnostics)
	if !m.Retired.IsNull() && !m.Retired.IsUnknown() {
		for _, v := range m.Retired.Elements() {
			name, ok := v.(types.String)
			if !ok || name.IsUnknown() || name.IsNull() {
				continue
			}
			if _, registered := known[name.ValueString()]; registered {
				addAttrError(&resp.Diagnostics, path.Root("retired_clusters").AtSetValue(name), "Cluster both registered and retired",
					fmt.Sprintf("Cluster %q is in clusters and in retired_clusters. Retire a cluster only once it is gone: remove it from clusters, or from retired_clusters to keep managing its objects.", name.ValueString()))
			}
		}
	}
}

func validateConnection(ctx context.Context, c clusterModel, at path.Path, diags *diag.Diagnostics) {
	if c.Kubernetes.IsNull() || c.Kubernetes.IsUnknown() {
		return
	}
	var k kubernetesModel
	diags.Append(c.Kubernetes.As(ctx, &k, basetypes.ObjectAsOptions{})...)
	// An empty string is as good as unset: config_path = "" must not
	// fall through to whatever the environment offers.
	set := func(v interface {
		IsNull() bool
		IsUnknown() bool
	}) bool {
		if s, ok := v.(types.String); ok && !s.IsUnknown() {
			return s.ValueString() != ""
		}
		return !v.IsNull()
	}
	inCluster := k.InCluster.ValueBool()
	if inCluster && (set(k.ConfigPath) || set(k.ConfigPaths) || set(k.Host)) {
		addAttrError(diags, at.AtName("in_cluster"), "Contradictory connection settings",
			"in_cluster = true connects with the pod's own service account and address; remove config_path, config_paths and host, or in_cluster.")
	}
	if set(k.ConfigPath) && set(k.ConfigPaths) {
		addAttrError(diags, at.AtName("config_paths"), "Contradictory connection settings",
			"config_path and config_paths both name kubeconfig files; use one of them.")
	}
	// An explicit empty config_path does not fall through to the
	// environment either: it is a mistake, not an absence.
	emptyPath := !k.ConfigPath.IsNull() && !k.ConfigPath.IsUnknown() && k.ConfigPath.ValueString() == ""
	named := set(k.ConfigPath) || set(k.ConfigPaths) || set(k.Host) || inCluster || k.InCluster.IsUnknown()
	if !named && emptyPath {
		addAttrError(diags, at, "No way to connect",
			"config_path is an empty string, which names no kubeconfig (and does not fall back to the environment). "+
				"Set config_path or config_paths (kubeconfig files, with config_context), or host with credentials (token, client_certificate and client_key, or exec); "+
				"or remove config_path to take the kubeconfig from "+envConfigPath+" or "+envConfigPaths+". "+
				"The provider never falls back to the credentials of the machine it runs on; set in_cluster = true to use the service account of the pod Terraform runs in.")
	}
	// Without a server named, the kubeconfig may come from the
	// environment, which Configure checks at plan.
	if set(k.ConfigContext) && !set(k.ConfigPath) && !set(k.ConfigPaths) && named {
		addAttrError(diags, at.AtName("config_context"), "Context without kubeconfig",
			"config_context selects a context of the kubeconfig in config_path or config_paths; set one of them too.")
	}
	if set(k.Exec) && set(k.Token) {
		addAttrError(diags, at.AtName("exec"), "Contradictory credentials",
			"Both token and exec are set, and only one can authenticate the requests. Remove token to use the exec plugin, or remove exec.")
	}
	if set(k.ClientCertificate) != set(k.ClientKey) {
		missing := "client_key"
		if !set(k.ClientCertificate) {
			missing = "client_certificate"
		}
		addAttrError(diags, at.AtName(missing), "Incomplete client certificate",
			"client_certificate and client_key go together: set both, or neither.")
	}
	if k.Insecure.ValueBool() && set(k.ClusterCACertificate) {
		addAttrError(diags, at.AtName("insecure"), "Contradictory TLS settings",
			"insecure = true skips verifying the server, so cluster_ca_certificate would be ignored. Remove one of them (prefer keeping the CA).")
	}
	if set(k.Token) && !k.Insecure.ValueBool() && !k.Host.IsUnknown() && strings.HasPrefix(strings.ToLower(k.Host.ValueString()), "http://") {
		addAttrError(diags, at.AtName("host"), "Token over plain HTTP",
			"host is an http:// URL and a token is set: the token would cross the network in clear text. Use https://, or set insecure = true if this is a test cluster on a trusted network.")
	}
	if set(k.Host) && !set(k.ConfigPath) && !set(k.Token) && !set(k.Exec) && !set(k.ClientCertificate) {
		addAttrError(diags, at.AtName("host"), "No credentials",
			"host is set without credentials. Add token, client_certificate and client_key, or exec (or use config_path).")
	}
}
