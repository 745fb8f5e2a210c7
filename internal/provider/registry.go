package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

type clusterModel struct {
	Kubernetes      types.Object `tfsdk:"kubernetes"`
	Network         types.String `tfsdk:"network"`
	Region          types.String `tfsdk:"region"`
	Zone            types.String `tfsdk:"zone"`
	TrustDomain     types.String `tfsdk:"trust_domain"`
	IstioVersion    types.String `tfsdk:"istio_version"`
	Labels          types.Map    `tfsdk:"labels"`
	EastWestGateway types.Object `tfsdk:"east_west_gateway"`
	Delivery        types.Object `tfsdk:"delivery"`
}

type kubernetesModel struct {
	ConfigPath           types.String `tfsdk:"config_path"`
	ConfigPaths          types.List   `tfsdk:"config_paths"`
	ConfigContext        types.String `tfsdk:"config_context"`
	Host                 types.String `tfsdk:"host"`
	Token                types.String `tfsdk:"token"`
	ClusterCACertificate types.String `tfsdk:"cluster_ca_certificate"`
	ClientCertificate    types.String `tfsdk:"client_certificate"`
	ClientKey            types.String `tfsdk:"client_key"`
	Insecure             types.Bool   `tfsdk:"insecure"`
	TLSServerName        types.String `tfsdk:"tls_server_name"`
	ProxyURL             types.String `tfsdk:"proxy_url"`
	InCluster            types.Bool   `tfsdk:"in_cluster"`
	Exec                 types.Object `tfsdk:"exec"`
}

type execModel struct {
	APIVersion types.String `tfsdk:"api_version"`
	Command    types.String `tfsdk:"command"`
	Args       types.List   `tfsdk:"args"`
	Env        types.Map    `tfsdk:"env"`
}

type gatewayModel struct {
	Address    types.String `tfsdk:"address"`
	Port       types.Int64  `tfsdk:"port"`
	TargetPort types.Int64  `tfsdk:"target_port"`
	Hosts      types.List   `tfsdk:"hosts"`
}

// clusterModels decodes the clusters map; clusters whose whole object is
// unknown come back in unknownNames.
func clusterModels(ctx context.Context, clusters types.Map) (known map[string]clusterModel, unknownNames []string, diags diag.Diagnostics) {
	known = map[string]clusterModel{}
	for name, v := range clusters.Elements() {
		obj, ok := v.(types.Object)
		if !ok || obj.IsUnknown() {
			unknownNames = append(unknownNames, name)
			continue
		}
		var c clusterModel
		diags.Append(obj.As(ctx, &c, basetypes.ObjectAsOptions{})...)
		known[name] = c
	}
	return known, unknownNames, diags
}

// buildRegistry turns the provider configuration into the translator's
// registry and the clients' connections. Values not known yet become
// translate.Unknown placeholders, so planning never needs them.
func buildRegistry(ctx context.Context, m providerModel) (*translate.Registry, map[string]kubeclient.Connection, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	if m.Clusters.IsUnknown() {
		return translate.NewRegistry(), nil, true, diags
	}
	known, unknownNames, d := clusterModels(ctx, m.Clusters)
	diags.Append(d...)
	var clusters []translate.Cluster
	conns := map[string]kubeclient.Connection{}
	for _, name := range unknownNames {
		clusters = append(clusters, translate.Cluster{
			Name: name, Network: unknownFact(name, "network"), Region: unknownFact(name, "region"),
			Zone: unknownFact(name, "zone"), TrustDomain: unknownFact(name, "trust_domain"), LabelsUnknown: true,
			IstioVersion:    unknownFact(name, "istio_version"),
			EastWestGateway: &translate.Gateway{Address: unknownFact(name, "east_west_gateway"), PortUnknown: true},
		})
		conns[name] = kubeclient.Connection{Unknown: true}
	}
	for name, c := range known {
		tc := translate.Cluster{
			Name:         name,
			Network:      fact(c.Network, name, "network"),
			Region:       fact(c.Region, name, "region"),
			Zone:         fact(c.Zone, name, "zone"),
			TrustDomain:  fact(c.TrustDomain, name, "trust_domain"),
			IstioVersion: fact(c.IstioVersion, name, "istio_version"),
		}
		tc.Labels, tc.LabelsUnknown = stringMap(c.Labels)
		tc.EastWestGateway = gatewayOf(ctx, c.EastWestGateway, name, &diags)
		clusters = append(clusters, tc)
		if c.Kubernetes.IsNull() && isPull(ctx, c) {
			// A pull cluster without a connection: nothing reaches its API
			// server, not even through the environment's kubeconfig.
			continue
		}
		conns[name] = connectionOf(ctx, name, c.Kubernetes, &diags)
	}
	return translate.NewRegistry(clusters...), conns, false, diags
}

func unknownFact(cluster, attr string) string {
	return translate.Unknown(fmt.Sprintf("clusters[%q].%s", cluster, attr))
}

func fact(v types.String, cluster, attr string) string {
	if v.IsUnknown() {
		return unknownFact(cluster, attr)
	}
	return v.ValueString()
}

// stringMap returns a map's values, and whether any of them is unknown.
func stringMap(m types.Map) (map[string]string, bool) {
	if m.IsUnknown() {
		return nil, true
	}
	out := map[string]string{}
	for k, v := range m.Elements() {
		s, ok := v.(types.String)
		if !ok || s.IsUnknown() {
			return nil, true
		}
		out[k] = s.ValueString()
	}
	return out, false
}

func stringList(l types.List) ([]string, bool) {
	if l.IsUnknown() {
		return nil, true
	}
	var out []string
	for _, v := range l.Elements() {
		s, ok := v.(types.String)
		if !ok || s.IsUnknown() {
			return nil, true
		}
		out = append(out, s.ValueString())
	}
	return out, false
}

func gatewayOf(ctx context.Context, o types.Object, cluster string, diags *diag.Diagnostics) *translate.Gateway {
	if o.IsNull() {
		return nil
	}
	if o.IsUnknown() {
		return &translate.Gateway{Address: unknownFact(cluster, "east_west_gateway.address"), PortUnknown: true}
	}
	var g gatewayModel
	diags.Append(o.As(ctx, &g, basetypes.ObjectAsOptions{})...)
	out := &translate.Gateway{Address: fact(g.Address, cluster, "east_west_gateway.address"), Port: translate.DefaultEastWestPort}
	switch {
	case g.Port.IsUnknown():
		out.PortUnknown = true
	case !g.Port.IsNull():
		out.Port = uint32(g.Port.ValueInt64())
	}
	if g.TargetPort.IsUnknown() {
		out.PortUnknown = true
	} else if !g.TargetPort.IsNull() {
		out.TargetPort = uint32(g.TargetPort.ValueInt64())
	}
	if !g.Hosts.IsNull() {
		hosts, unknown := stringList(g.Hosts)
		out.Hosts, out.HostsUnknown = hosts, unknown
	}
	return out
}

// connectionOf reads the kubernetes block. Any unknown value makes the
// whole connection unknown: a half-known connection could reach the wrong
// cluster.
func connectionOf(ctx context.Context, name string, o types.Object, diags *diag.Diagnostics) kubeclient.Connection {
	if o.IsUnknown() {
		return kubeclient.Connection{Unknown: true}
	}
	if o.IsNull() {
		return envConnection(kubeclient.Connection{Name: name})
	}
	var k kubernetesModel
	diags.Append(o.As(ctx, &k, basetypes.ObjectAsOptions{})...)
	paths, pathsUnknown := stringList(k.ConfigPaths)
	if pathsUnknown || anyUnknown(k.ConfigPath, k.ConfigContext, k.Host, k.Token, k.ClusterCACertificate, k.ClientCertificate,
		k.ClientKey, k.Insecure, k.TLSServerName, k.ProxyURL, k.InCluster, k.Exec) {
		return kubeclient.Connection{Unknown: true}
	}
	conn := kubeclient.Connection{
		Name:                 name,
		ConfigPaths:          paths,
		ConfigPath:           k.ConfigPath.ValueString(),
		ConfigContext:        k.ConfigContext.ValueString(),
		Host:                 k.Host.ValueString(),
		Token:                k.Token.ValueString(),
		ClusterCACertificate: k.ClusterCACertificate.ValueString(),
		ClientCertificate:    k.ClientCertificate.ValueString(),
		ClientKey:            k.ClientKey.ValueString(),
		Insecure:             k.Insecure.ValueBool(),
		TLSServerName:        k.TLSServerName.ValueString(),
		ProxyURL:             k.ProxyURL.ValueString(),
		InCluster:            k.InCluster.ValueBool(),
	}
	if !k.Exec.IsNull() {
		var e execModel
		diags.Append(k.Exec.As(ctx, &e, basetypes.ObjectAsOptions{})...)
		args, argsUnknown := stringList(e.Args)
		env, envUnknown := stringMap(e.Env)
		if argsUnknown || envUnknown || anyUnknown(e.APIVersion, e.Command) {
			return kubeclient.Connection{Unknown: true}
		}
		conn.Exec = &kubeclient.Exec{APIVersion: e.APIVersion.ValueString(), Command: e.Command.ValueString(), Args: args, Env: env}
	}
	return envConnection(conn)
}

// Environment variables, as the kubernetes provider reads them, stand in
// for the kubeconfig of every cluster whose settings name no API server
// (no config_path, config_paths, host or in_cluster). Variables that name
// one server (KUBE_HOST, KUBE_TOKEN, KUBE_CTX, ...) are not read: in a
// registry of several clusters one value would send every cluster's
// objects to one API server. The context is the one named like the
// cluster, unless config_context says otherwise.
const (
	envConfigPath  = "KUBE_CONFIG_PATH"
	envConfigPaths = "KUBE_CONFIG_PATHS"
)

// envKubeconfig returns the kubeconfig files the environment names.
func envKubeconfig() (path string, paths []string) {
	if p := os.Getenv(envConfigPath); p != "" {
		return p, nil
	}
	for _, p := range filepath.SplitList(os.Getenv(envConfigPaths)) {
		if p != "" {
			paths = append(paths, p)
		}
	}
	return "", paths
}

func envConnection(c kubeclient.Connection) kubeclient.Connection {
	if c.ConfigPath != "" || len(c.ConfigPaths) > 0 || c.Host != "" || c.InCluster {
		return c
	}
	c.ConfigPath, c.ConfigPaths = envKubeconfig()
	return c
}

func anyUnknown(vs ...attr.Value) bool {
	for _, v := range vs {
		if v.IsUnknown() {
			return true
		}
	}
	return false
}

// checkTargets checks, at plan and before anything connects, where each
// known cluster's connection leads (kubeclient.Check reads the kubeconfig
// files offline): a cluster that names no server, one whose kubeconfig
// context cannot be chosen safely (config_context missing from the files,
// or none given in a kubeconfig other clusters share and no context named
// like it), and two clusters that reach one API server. These depend on
// the environment (variables, files), so they are checked here and not by
// ValidateConfig: terraform validate needs no credentials.
func checkTargets(ctx context.Context, m providerModel, conns map[string]kubeclient.Connection) diag.Diagnostics {
	var diags diag.Diagnostics
	if m.Clusters.IsNull() || m.Clusters.IsUnknown() {
		return diags
	}
	known, _, d := clusterModels(ctx, m.Clusters)
	diags.Append(d...)
	entry := func(name string) path.Path {
		if c, ok := known[name]; ok && !c.Kubernetes.IsNull() {
			return clustersPath.AtMapKey(name).AtName("kubernetes")
		}
		return clustersPath.AtMapKey(name)
	}
	names := make([]string, 0, len(conns))
	for name := range conns {
		names = append(names, name)
	}
	sort.Strings(names)
	checked := map[string]kubeclient.Connection{}
	for _, name := range names {
		c := conns[name]
		if c.Unknown {
			continue
		}
		if c.Host == "" && c.ConfigPath == "" && len(c.ConfigPaths) == 0 && !c.InCluster {
			addAttrError(&diags, entry(name), "No way to connect",
				fmt.Sprintf("Cluster %q names no API server: its kubernetes settings have no config_path, config_paths, host or in_cluster, and neither %s nor %s is set in the environment. ", name, envConfigPath, envConfigPaths)+
					"Set config_path or config_paths (kubeconfig files, with config_context), or host with credentials (token, client_certificate and client_key, or exec), "+
					"or export "+envConfigPath+" or "+envConfigPaths+" for every cluster that names no server. "+
					"The provider never falls back to the credentials of the machine it runs on; set in_cluster = true to use the service account of the pod Terraform runs in.")
			continue
		}
		checked[name] = c
	}
	for _, p := range kubeclient.Check(checked) {
		switch {
		case p.Context != nil && p.Context.Context != "":
			addAttrError(&diags, entry(p.Cluster).AtName("config_context"), "Kubeconfig context not found",
				fullStop(fmt.Sprintf("Cluster %q: %v", p.Cluster, p.Err)))
		case p.Context != nil:
			addAttrError(&diags, entry(p.Cluster), "No kubeconfig context for the cluster",
				capitalise(p.Err.Error())+" Nothing was written to any cluster.")
		case p.Clear != nil:
			at := entry(p.Cluster)
			if c := conns[p.Cluster]; c.Host != "" {
				at = at.AtName("host")
			}
			addAttrError(&diags, at, "Token over plain HTTP",
				fullStop(fmt.Sprintf("Cluster %q: %v", p.Cluster, p.Err))+" Nothing was written to any cluster.")
		default:
			addAttrError(&diags, entry(p.Cluster), "Two clusters on one API server",
				fmt.Sprintf("%s Nothing was written to any cluster.", capitalise(p.Err.Error())))
		}
	}
	return diags
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// fullStop ends s with a full stop unless it already ends a sentence.
func fullStop(s string) string {
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "!") {
		return s
	}
	return s + "."
}
