package provider

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// A cluster's delivery: push (server-side apply from this run, the
// default) or pull through Flux (its objects published as an OCI
// artifact). The engine carries the objects to the sink the registry
// names (engine.Delivery); no resource knows which one a cluster uses.

type deliveryModel struct {
	OCI types.Object `tfsdk:"oci"`
}

type ociModel struct {
	Repository       types.String `tfsdk:"repository"`
	Insecure         types.Bool   `tfsdk:"insecure"`
	DockerConfigFile types.String `tfsdk:"docker_config_file"`
	Username         types.String `tfsdk:"username"`
	Password         types.String `tfsdk:"password"`
	Token            types.String `tfsdk:"token"`
	Retired          types.Bool   `tfsdk:"retired"`
}

func deliveryAttribute() schema.SingleNestedAttribute {
	return schema.SingleNestedAttribute{
		MarkdownDescription: "How the cluster receives its objects. Unset: push, by server-side apply from the Terraform run through `kubernetes`. " +
			"With `oci`, the cluster is delivered by pull: apply publishes the cluster's objects as an OCI artifact in Flux's format (`flux push artifact`'s media types), and Flux's source- and kustomize-controller in the cluster pull and apply it. " +
			"The objects, their keys in `objects` and their digests are the same as by push, so switching a cluster between the two changes no object in the plan. " +
			"A pull cluster needs no `kubernetes` connection: plans and applies succeed while the registry answers, whether or not its API server can be reached.",
		Optional: true,
		Attributes: map[string]schema.Attribute{
			"oci": schema.SingleNestedAttribute{
				MarkdownDescription: "Publish the cluster's objects to an OCI repository. The tag is this state's `workspace` (one artifact per cluster and state, so Terraform's state lock is the only writer's lock); the artifact records it, and a second state that would publish the same artifact fails naming both. " +
					"Traffic policies are composed in the artifact as on a push cluster, by one state per object: let every state publish its artifact for a cluster to the same repository, so that another state's policy on the same destination is a plan error naming the first (guide: Clusters the runner cannot reach). " +
					"Credentials, at most one kind (a docker config file, `username` and `password`, or `token`), are read at every run and never stored in state, the artifact or a message. None: anonymous.",
				Required: true,
				Attributes: map[string]schema.Attribute{
					"repository": schema.StringAttribute{
						MarkdownDescription: "The repository, with its registry host and without tag, digest or scheme: `registry.example.com/mesh/east`.",
						Required:            true,
					},
					"insecure": schema.BoolAttribute{
						MarkdownDescription: "Reach the registry over plain HTTP. Default `false`.",
						Optional:            true,
					},
					"docker_config_file": schema.StringAttribute{
						MarkdownDescription: "A docker `config.json` whose `auths` entry for the registry holds the credentials (credential helpers are not run). Unset: no credentials from a file.",
						Optional:            true,
					},
					"username": schema.StringAttribute{
						MarkdownDescription: "User name for the registry, with `password`. Unset: no user name.",
						Optional:            true,
					},
					"password": schema.StringAttribute{
						MarkdownDescription: "Password for the registry, with `username`. Unset: no password.",
						Optional:            true,
						Sensitive:           true,
					},
					"token": schema.StringAttribute{
						MarkdownDescription: "A registry bearer token. Unset: no token (with no other credentials, the registry is asked anonymously).",
						Optional:            true,
						Sensitive:           true,
					},
					"retired": schema.BoolAttribute{
						MarkdownDescription: "Deliver the cluster by push again (through `kubernetes`), and empty this artifact of the state's objects: each intent's next apply writes its objects by server-side apply, then removes them from the artifact, so Flux, while it still reconciles it, applies nothing of this state again; " +
							"a refresh shows objects the artifact still holds as drift. Remove the block once a plan shows no change. Set the Kustomization's `prune` to `false` first (docs/guides: Clusters the runner cannot reach), or Flux deletes the objects push now writes as they leave the artifact. Default `false`.",
						Optional: true,
					},
				},
			},
		},
	}
}

// pullDelivery is the engine's Delivery of the configured clusters: the
// pull ones' artifacts, and the retired artifacts of clusters delivered
// by push again (engine.RetiredDelivery).
type pullDelivery struct {
	artifacts map[string]engine.PullArtifact
	retired   map[string]engine.PullArtifact
	// unknown are the pull clusters whose repository, retired or the
	// state's workspace is not known at plan (engine.UnknownDelivery).
	unknown map[string]bool
}

// Unknown reports whether cluster's delivery is not known yet: it may be
// pull, so the plan does not check it as push.
func (p *pullDelivery) Unknown(cluster string) bool {
	return p != nil && p.unknown[cluster]
}

func (p *pullDelivery) Pull(cluster string) (engine.PullArtifact, bool, error) {
	if p == nil {
		return engine.PullArtifact{}, false, nil
	}
	a, ok := p.artifacts[cluster]
	return a, ok, nil
}

func (p *pullDelivery) Retired(cluster string) (engine.PullArtifact, bool) {
	if p == nil {
		return engine.PullArtifact{}, false
	}
	a, ok := p.retired[cluster]
	return a, ok
}

// pullClusters reads the delivery of every known cluster: the pull
// ones, by name, with diagnostics at the attribute that is wrong. A value
// not known yet is skipped (a pull cluster whose repository is unknown at
// plan is checked at apply).
func pullClusters(ctx context.Context, known map[string]clusterModel, diags *diag.Diagnostics) map[string]ociModel {
	out := map[string]ociModel{}
	for name, c := range known {
		if c.Delivery.IsNull() || c.Delivery.IsUnknown() {
			continue
		}
		var d deliveryModel
		diags.Append(c.Delivery.As(ctx, &d, basetypes.ObjectAsOptions{})...)
		if d.OCI.IsNull() || d.OCI.IsUnknown() {
			continue
		}
		var o ociModel
		diags.Append(d.OCI.As(ctx, &o, basetypes.ObjectAsOptions{})...)
		out[name] = o
	}
	return out
}

// retired reports whether o is a former artifact (delivery.oci.retired):
// its cluster is delivered by push.
func (o ociModel) retired() bool { return o.Retired.ValueBool() }

// isPull reports whether c is delivered by pull: a delivery.oci block
// that is not retired (an unknown one counts as pull).
func isPull(ctx context.Context, c clusterModel) bool {
	if c.Delivery.IsNull() {
		return false
	}
	m := pullClusters(ctx, map[string]clusterModel{"c": c}, &diag.Diagnostics{})
	o, ok := m["c"]
	return !ok || !o.retired()
}

func ociPath(cluster string) path.Path {
	return clustersPath.AtMapKey(cluster).AtName("delivery").AtName("oci")
}

// validateDelivery checks each pull cluster's settings: the repository,
// one kind of credentials. It reads no file and contacts no registry.
func validateDelivery(pull map[string]ociModel, diags *diag.Diagnostics) {
	for name, o := range pull {
		at := ociPath(name)
		if !o.Repository.IsUnknown() && !o.Insecure.IsUnknown() {
			if err := oci.ParseRepository(o.Repository.ValueString(), o.Insecure.ValueBool()); err != nil {
				addAttrError(diags, at.AtName("repository"), "Invalid repository", fmt.Sprintf("Cluster %q: %v.", name, err))
			}
		}
		if anyUnknown(o.DockerConfigFile, o.Username, o.Password, o.Token) {
			continue
		}
		creds := credentialsOf(o)
		if kinds := creds.Kinds(); len(kinds) > 1 {
			addAttrError(diags, at, "Two kinds of registry credentials",
				fmt.Sprintf("Cluster %q sets %s. Set one: docker_config_file, username with password, or token.", name, strings.Join(kinds, " and ")))
		}
		if (creds.Username == "") != (creds.Password == "") {
			missing := "password"
			if creds.Username == "" {
				missing = "username"
			}
			addAttrError(diags, at.AtName(missing), "Incomplete registry credentials",
				fmt.Sprintf("Cluster %q sets one of username and password: set %s too.", name, missing))
		}
	}
}

func credentialsOf(o ociModel) oci.Credentials {
	return oci.Credentials{DockerConfigFile: o.DockerConfigFile.ValueString(), Username: o.Username.ValueString(),
		Password: o.Password.ValueString(), Token: o.Token.ValueString()}
}

// tagPattern is an OCI tag.
var tagPattern = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// buildDelivery names each pull cluster's artifact: its repository, and
// this state's workspace as tag and publisher. Pull needs an explicit
// workspace: every state left at its defaults is "default", and two
// states publishing one artifact would remove each other's objects.
func buildDelivery(pull map[string]ociModel, workspace string, explicit, workspaceUnknown bool, diags *diag.Diagnostics) *pullDelivery {
	if len(pull) == 0 {
		return nil
	}
	if workspaceUnknown {
		d := &pullDelivery{unknown: map[string]bool{}}
		for name := range pull {
			d.unknown[name] = true
		}
		return d
	}
	var names []string
	for n := range pull {
		names = append(names, n)
	}
	sort.Strings(names)
	if !explicit {
		addAttrError(diags, path.Root("workspace"), "Pull delivery needs a workspace",
			fmt.Sprintf("Clusters %s are delivered by pull, whose artifact is named by this state's workspace (its tag) so that each state publishes its own. "+
				"Set workspace in the provider block to a name no other state uses (it is claimed like mesh_workspace's identity).", strings.Join(names, ", ")))
		return nil
	}
	if !tagPattern.MatchString(workspace) {
		addAttrError(diags, path.Root("workspace"), "Workspace cannot name an artifact",
			fmt.Sprintf("Workspace %q is the tag of the pull clusters' artifacts: use letters, digits, '_', '.' and '-' (not first), at most 128 characters.", workspace))
		return nil
	}
	d := &pullDelivery{artifacts: map[string]engine.PullArtifact{}, retired: map[string]engine.PullArtifact{}, unknown: map[string]bool{}}
	byTarget := map[string][]string{}
	for name, o := range pull {
		if o.Repository.IsUnknown() || o.Retired.IsUnknown() {
			d.unknown[name] = true
			continue
		}
		a := engine.PullArtifact{
			Target: oci.Target{Repository: o.Repository.ValueString(), Tag: workspace, Insecure: o.Insecure.ValueBool(),
				Credentials: credentialsOf(o)},
			Publisher: workspace,
		}
		if o.retired() {
			d.retired[name] = a
			continue
		}
		d.artifacts[name] = a
		byTarget[a.Target.Normalized()] = append(byTarget[a.Target.Normalized()], name)
	}
	// Two pull clusters on one artifact would remove each other's objects
	// at every publish (an object's labels do not name its cluster).
	for target, cs := range byTarget {
		if len(cs) < 2 {
			continue
		}
		sort.Strings(cs)
		addAttrError(diags, ociPath(cs[1]).AtName("repository"), "Two pull clusters on one artifact",
			fmt.Sprintf("Clusters %s are both delivered through artifact %s (repository and this state's workspace as tag). Give each pull cluster its own repository, e.g. registry.example.com/mesh/%s.",
				strings.Join(cs, " and "), target, cs[1]))
	}
	return d
}

// checkDelivery fails the plan on what the clusters' delivery refuses
// (engine.PlanErrors: a traffic policy's object that another state
// composes on a pull cluster; an object a Flux Kustomization applies on a
// push cluster), at the attribute that places the objects there, and
// warns where a pull cluster could not be checked.
func checkDelivery(ctx context.Context, data *providerData, owner engine.Owner, entries []engine.Entry) diag.Diagnostics {
	var diags diag.Diagnostics
	if data == nil || data.Engine == nil {
		return diags
	}
	at := path.Root("name")
	if owner.Kind == intentkind.TrafficPolicy.Owner {
		at = path.Root("sources")
	}
	errs, warnings := data.Engine.PlanErrors(ctx, owner, entries)
	for _, err := range errs {
		addAttrError(&diags, at, err.Summary, err.Detail)
	}
	for _, w := range warnings {
		diags.AddAttributeWarning(at, w.Summary, w.Detail)
	}
	return diags
}
