package provider

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/provider/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
)

// The workspace name. Traffic policies of several Terraform states compose
// on one shared object; each contribution carries the workspace name of the
// state that wrote it, for messages ("also shaped by workspace payments").
// It is never what decides ownership: that is the instance ID of the
// resource that wrote a contribution (see mesh_workspace), because every
// root left at its defaults has the same name. When set, it is also the
// identity the state's roster claims in the clusters.

func workspaceAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "Name of this Terraform state among those that compose traffic policies on the same hostnames, shown in their plans' messages: when set, every traffic policy's contribution to a shared VirtualService or DestinationRule records it (unset, contributions record none). " +
			"It never decides ownership: a contribution belongs to the resource instance that wrote it, so two states that leave this unset (both `default`) never replace or release each other's policies. " +
			"When set, it is also the identity this state's `mesh_workspace` claims in every registered cluster: a state that names an identity another state claims fails at plan, naming the claim. " +
			"Required when a cluster is delivered by pull (`delivery.oci`): it is the tag of the state's artifact for that cluster, and the publisher the artifact records. " +
			"Default: the selected Terraform workspace (`TF_WORKSPACE`, else the workspace `terraform workspace select` recorded in the working directory, else `default`), and the roster then mints an identity of its own (`<workspace>-<8 hex digits>`).",
		Optional:   true,
		Validators: []validator.String{stringvalidator.LengthBetween(1, 128)},
	}
}

// workspaceOf is the configured identity or the default.
func workspaceOf(v types.String) string {
	if s := v.ValueString(); s != "" {
		return s
	}
	return defaultWorkspace()
}

// defaultWorkspace is the Terraform workspace the provider runs in: the
// TF_WORKSPACE override, else what `terraform workspace select` wrote in
// the data directory, else "default". Terraform starts providers in the
// root module's directory, where the data directory is.
func defaultWorkspace() string {
	if ws := strings.TrimSpace(os.Getenv("TF_WORKSPACE")); ws != "" {
		return ws
	}
	dir := os.Getenv("TF_DATA_DIR")
	if dir == "" {
		dir = ".terraform"
	}
	if raw, err := os.ReadFile(filepath.Join(dir, "environment")); err == nil {
		if ws := strings.TrimSpace(string(raw)); ws != "" {
			return ws
		}
	}
	return "default"
}

// recordedWorkspace is the workspace name contributions record: the
// configured one, or none. A defaulted name ("default" in every root that
// never selected a workspace) tells nothing, and builds before 0.1 take a
// contribution that records their own workspace name, and that their
// roster does not list, for their own orphan: they would release another
// state's routes. A contribution that records none they leave alone.
func (d *providerData) recordedWorkspace() string {
	if d == nil || !d.WorkspaceExplicit {
		return ""
	}
	return d.Workspace
}
