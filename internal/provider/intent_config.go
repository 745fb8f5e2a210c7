package provider

import (
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// Every intent keeps its Terraform configuration in the clusters, beside
// the objects it produced, so that `terraform import` can rebuild the
// resource from the clusters alone: the package discovery says where and
// how (discovery.ConfigAnnotation, discovery.ConfigJSON); withConfig
// writes it at apply.

// adoptAttribute is the adopt_existing attribute of every intent resource.
func adoptAttribute() schema.BoolAttribute {
	return schema.BoolAttribute{
		MarkdownDescription: "Take over Istio objects this provider did not write (no `app.kubernetes.io/managed-by` label), e.g. hand-written ones being brought under management. " +
			"Objects of the names this intent writes are rewritten in place, keeping their identity (no delete, no gap in traffic). " +
			"Hand-written VirtualServices and DestinationRules of other names on a host this intent writes the same kind for, in the same cluster, are named in the plan and deleted by the apply once this intent's own objects are written (Istio's sidecars follow one VirtualService per host); " +
			"one this intent cannot carry (another host, other destinations, gateways, delegation, a workload selector, a narrower `exportTo`, other subsets) or that another tool manages or a controller owns is a plan error naming it. " +
			"Default `false`: such objects are an error (same names) or a warning (other names), and are left untouched. Objects another intent owns are never taken. " +
			"Import with the id `adopt:<name>` sets it.",
		Optional: true,
	}
}

// adoptedAttribute is the record of the hand-written VirtualServices and
// DestinationRules a plan found for adopt_existing to take over: the apply
// deletes exactly these (adoptedOf, engine.AdoptionAtApply).
func adoptedAttribute() schema.MapAttribute {
	return schema.MapAttribute{
		MarkdownDescription: "The hand-written VirtualServices and DestinationRules of other names that the plan found for `adopt_existing` to take over, " +
			"by key (`<cluster>/<Kind>.networking.istio.io/<namespace>/<name>`), each with the host it serves and the UID and resourceVersion the plan read. " +
			"The apply deletes exactly these, once this intent's objects are written, and only if each is unchanged since the plan (UID and resourceVersion preconditions). " +
			"A hand-written object on the host written or edited after the plan changes what Terraform's plan again at apply finds, so Terraform refuses the saved plan for this resource (\"Provider produced inconsistent final plan\" naming `adopted`): nothing is written or deleted for it, and the next plan names the object. " +
			"A plan that finds nothing new to adopt keeps the last record, so the plan after an adoption is empty.",
		Computed:    true,
		ElementType: types.StringType,
	}
}

// withConfig makes the spec keep the configuration cfg in the clusters
// (see the top of this file).
func (s *intentSpec) withConfig(cfg string) error {
	if cfg == "" {
		return nil
	}
	if c := s.Owner.Composition; c != nil {
		var err error
		c.Contribution, err = trafficpolicy.WithConfig(c.Contribution, cfg)
		return err
	}
	kind, inner := s.ConfigKind, s.Translate
	if kind == "" || inner == nil {
		return nil
	}
	s.Translate = func(reg *translate.Registry) ([]translate.Object, error) {
		objs, err := inner(reg)
		for _, o := range objs {
			if o.Resource.GetObjectKind().GroupVersionKind().Kind != kind {
				continue
			}
			a := o.Resource.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a[discovery.ConfigAnnotation] = cfg
			o.Resource.SetAnnotations(a)
		}
		return objs, err
	}
	return nil
}

// keeping is the owner of s as the apply writes it: a composed intent's
// contribution with KeptConfig in it (a copy: s is left as it is).
func (s intentSpec) keeping() (engine.Owner, error) {
	o := s.Owner
	if s.KeptConfig == "" || o.Composition == nil {
		return o, nil
	}
	c := *o.Composition
	var err error
	c.Contribution, err = trafficpolicy.WithConfig(c.Contribution, s.KeptConfig)
	o.Composition = &c
	return o, err
}
