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
// placementAttributes are the clusters and cluster_selector of a placement
// of what; unset says which clusters it means when neither is set.
func placementAttributes(what, unset string) map[string]schema.Attribute {
	return map[string]schema.Attribute{
		"clusters": schema.ListAttribute{
			MarkdownDescription: "Names of the " + what + " (keys of the provider's `clusters`). Naming an unregistered cluster is a plan-time error. " +
				"Unset: every registered cluster, narrowed by `cluster_selector` when that is set; with neither set, " + unset + ".",
			Optional:    true,
			ElementType: types.StringType,
		},
		"cluster_selector": schema.MapAttribute{
			MarkdownDescription: "Labels the " + what + " must all carry (the provider's `clusters.<name>.labels`); with `clusters`, a named cluster must carry them too. Unset: no label condition.",
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
