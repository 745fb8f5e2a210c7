package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// placementModel is the cluster placement shape every resource reuses:
// clusters by name, or by labels, or (both omitted) every cluster.
type placementModel struct {
	Clusters        []string          `tfsdk:"clusters"`
	ClusterSelector map[string]string `tfsdk:"cluster_selector"`
}

func (p *placementModel) placement() translate.Placement {
	if p == nil {
		return translate.Placement{}
	}
	return translate.Placement{Clusters: p.Clusters, ClusterSelector: p.ClusterSelector}
}

// placementAttributes are the attributes of a placement, for embedding in
// a nested object; what describes the clusters being selected.
func placementAttributes(what string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"clusters": schema.ListAttribute{
			MarkdownDescription: "Names of the " + what + " (keys of the provider's `clusters`). Naming an unregistered cluster is a plan-time error.",
			Optional:            true,
			ElementType:         types.StringType,
		},
		"cluster_selector": schema.MapAttribute{
			MarkdownDescription: "Labels the " + what + " must all carry (the provider's `clusters.<name>.labels`).",
			Optional:            true,
			ElementType:         types.StringType,
			Validators:          []validator.Map{labelsValidator{}},
		},
	}
}

func withAttributes(base map[string]schema.Attribute, more map[string]schema.Attribute) map[string]schema.Attribute {
	out := make(map[string]schema.Attribute, len(base)+len(more))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range more {
		out[k] = v
	}
	return out
}
