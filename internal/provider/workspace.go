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

// The workspace identity. Traffic policies of several Terraform states
// compose on one shared object; each contribution says which workspace
// wrote it, so that a plan can tell its own leftovers (a resource
// destroyed or forgotten, then declared again under the same name) from
// another team's policy, and list who else shapes a hostname. Terraform
// tells a provider neither its workspace nor its state, so the identity is
// a provider setting, defaulting to the selected workspace's name.

func workspaceAttribute() schema.StringAttribute {
	return schema.StringAttribute{
		MarkdownDescription: "Identity of this Terraform state among those that compose traffic policies on the same hostnames. " +
			"Every traffic policy's contribution to a shared VirtualService or DestinationRule records it. " +
			"A contribution of the same name from another instance is replaced when it carries this workspace (a leftover of this state: a policy destroyed, removed with `terraform state rm`, or lost with the state, then declared again) " +
			"and is a plan error naming both workspaces otherwise; contributions of other workspaces on the hostnames a policy shapes are listed as plan warnings. " +
			"Default: the selected Terraform workspace (`TF_WORKSPACE`, else the workspace `terraform workspace select` recorded in the working directory, else `default`). " +
			"Separate root modules that compose on the same hostnames each need their own value, e.g. `workspace = \"payments-prod\"`, since all of them start in the workspace `default`.",
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
