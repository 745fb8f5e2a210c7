package provider

import (
	"context"
	"fmt"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/identityschema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// Resource identity (Terraform 1.12 and later): what names a resource in
// the mesh, independently of any cluster, so that an import block can say
// `identity = { name = "user" }` and terraform query can hand out what it
// lists. The kind is the resource type; within a kind:
//
//   - an intent (mesh_virtual_destination, mesh_traffic_policy,
//     mesh_access_policy) is its name, the key of every object it writes,
//     and its instance ID (the id attribute), which tells apart the
//     same-named intents of different states or a replaced resource. An
//     import gives the name, and the instance ID when the clusters hold
//     several instances of that name: it imports that one.
//   - mesh_cluster is the cluster's name (its key in the provider's
//     clusters): the resource is the mesh's footprint in that cluster.
//   - mesh_workspace is the workspace identity it claims (its id).
//
// Each identity attribute is the resource attribute of the same name, so
// the identity is read from the state (identityFromState) after every
// create, read, update and import; it never changes over a resource's
// life (the instance ID is minted at create, the names force a new one).

var (
	_ resource.ResourceWithIdentity = &virtualDestinationResource{}
	_ resource.ResourceWithIdentity = &trafficPolicyResource{}
	_ resource.ResourceWithIdentity = &accessPolicyResource{}
	_ resource.ResourceWithIdentity = &clusterResource{}
	_ resource.ResourceWithIdentity = &workspaceResource{}
)

// Identity attribute names.
const (
	identityName = "name"
	identityID   = "id"
)

// IdentitySchema of an intent: its name and instance ID.
func (l *intentLifecycle[M, P]) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			identityName: identityschema.StringAttribute{
				RequiredForImport: true,
				Description:       "The intent's name (the name attribute), unique among the intents of its kind in the mesh.",
			},
			identityID: identityschema.StringAttribute{
				OptionalForImport: true,
				Description: "The instance ID (the id attribute) of the resource that wrote the intent's objects. " +
					"An import that gives it imports that instance only; without it, the one instance the clusters hold.",
			},
		},
	}
}

// IdentitySchema of mesh_cluster: the cluster's name.
func (r *clusterResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			identityName: identityschema.StringAttribute{
				RequiredForImport: true,
				Description:       "The cluster's key in the provider's clusters (the name attribute).",
			},
		},
	}
}

// IdentitySchema of mesh_workspace: the workspace identity it claims.
func (r *workspaceResource) IdentitySchema(_ context.Context, _ resource.IdentitySchemaRequest, resp *resource.IdentitySchemaResponse) {
	resp.IdentitySchema = identityschema.Schema{
		Attributes: map[string]identityschema.Attribute{
			identityID: identityschema.StringAttribute{
				RequiredForImport: true,
				Description:       "The workspace identity the roster claims (the id attribute).",
			},
		},
	}
}

// identityFromState sets every attribute of identity from the state's
// root attribute of the same name. It does nothing when there is no
// identity to set (a Terraform that does not know identities still gets
// one; the framework passes nil only without an identity schema), when
// diags already holds an error (the state may be half written) or when
// the state is null. Deferred at the top of each operation, it sees the
// operation's final state.
func identityFromState(ctx context.Context, state *tfsdk.State, identity *tfsdk.ResourceIdentity, diags *diag.Diagnostics) {
	if identity == nil || state == nil || state.Raw.IsNull() || diags.HasError() {
		return
	}
	names := make([]string, 0, len(identity.Schema.GetAttributes()))
	for name := range identity.Schema.GetAttributes() {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		var v types.String
		diags.Append(state.GetAttribute(ctx, path.Root(name), &v)...)
		if v.IsUnknown() {
			diags.AddError("Resource identity not known",
				fmt.Sprintf("The %s attribute, part of the resource's identity, is not known after the operation. This is a bug in the provider.", name))
		}
		if diags.HasError() {
			return
		}
		diags.Append(identity.SetAttribute(ctx, path.Root(name), v)...)
	}
}

// importName is what an import asks for: the import ID (`terraform import`
// or an import block's id), else the identity's name attribute (an import
// block's identity), with its instance ID if given. attr names the
// identity attribute holding the name.
func importName(ctx context.Context, req resource.ImportStateRequest, attr string) (name, instance string, byIdentity bool, diags diag.Diagnostics) {
	if req.ID != "" || req.Identity == nil || req.Identity.Raw.IsNull() {
		return req.ID, "", false, nil
	}
	var n, id types.String
	diags.Append(req.Identity.GetAttribute(ctx, path.Root(attr), &n)...)
	if _, ok := req.Identity.Schema.GetAttributes()[identityID]; ok && attr != identityID {
		diags.Append(req.Identity.GetAttribute(ctx, path.Root(identityID), &id)...)
	}
	if diags.HasError() {
		return "", "", true, diags
	}
	if n.ValueString() == "" {
		diags.AddAttributeError(path.Root(attr), "Missing identity attribute",
			fmt.Sprintf("Importing by identity needs the %s attribute of the identity.", attr))
	}
	return n.ValueString(), id.ValueString(), true, diags
}
