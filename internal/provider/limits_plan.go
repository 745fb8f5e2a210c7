package provider

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// checkLimits fails the plan on a Kubernetes limit a write of the
// intent's objects would hit (engine.Limits): an object name over 253
// characters, a label value over 63, a field manager over 128, an
// object's annotations over 256 KiB (a composed object's, counting the
// other contributions the clusters hold now), and a traffic policy's
// contribution over the size every reader accepts. live are the
// contributions the plan found on the objects (sharedContributions): the
// ones the write keeps count. Each error names the limit, the object and
// the attribute to change. It writes nothing.
func checkLimits(data *providerData, owner engine.Owner, entries []engine.Entry, live []engine.LiveContribution) diag.Diagnostics {
	var diags diag.Diagnostics
	if data == nil || data.Engine == nil {
		return diags
	}
	base := data.Engine.FieldManager
	if base == "" {
		base = engine.ManagedByValue
	}
	for _, l := range data.Engine.Limits(owner, entries, live, shareddata.KeptByTheWrite(owner)) {
		attr, fix := path.Root("name"), ""
		switch l.Limit {
		case "field manager":
			fix = fmt.Sprintf("Shorten the provider's field_manager (%q, %d characters) or this resource's name so that the manager name fits.", base, len(base))
		case "label value":
			fix = "Shorten this resource's name."
		case "object name":
			if owner.Kind == intentkind.TrafficPolicy.Owner {
				attr = path.Root("destination")
				fix = fmt.Sprintf("Its objects are named %s<host> after the destination's hostname: use a destination whose hostname is at most %d characters long.", trafficpolicy.NamePrefix, engine.MaxNameLength-len(trafficpolicy.NamePrefix))
			} else {
				fix = "Shorten the name or hostname the object is named after."
			}
		case "annotations":
			attr = path.Root("destination")
			fix = "Each traffic policy on a destination keeps its contribution there: merge some of the policies on this destination, or narrow their sources so that fewer of them meet in one cluster."
		}
		addAttrError(&diags, attr, "Kubernetes limit exceeded: "+l.Limit, fmt.Sprintf("%s %s Nothing was written.", l.Detail, fix))
	}
	if owner.Composition != nil && owner.Kind == intentkind.TrafficPolicy.Owner {
		seen := map[string]bool{}
		for _, en := range entries {
			raw := owner.Composition.Contribution.For(en.Cluster).Raw
			if seen[raw] || len(raw) <= trafficpolicy.MaxContributionBytes {
				continue
			}
			seen[raw] = true
			addAttrError(&diags, path.Root("sources"), "Traffic policy contribution too large",
				fmt.Sprintf("The contribution this traffic policy would store on %s is %d bytes, with the configuration it keeps for import (which the apply writes in it); every provider reading it accepts at most %d, and would remove it. "+
					"Split the policy, or narrow its sources and match rules. Nothing was written.", en, len(raw), trafficpolicy.MaxContributionBytes))
		}
	}
	return diags
}

// checkKeptAnnotations fails the plan when an object of an intent that is
// not composed would carry more annotations than Kubernetes allows: its
// planned annotations and, on the objects that keep it (spec.ConfigKind),
// the configuration kept for import (spec.KeptConfig), which the apply
// adds. (A composed intent's objects are checked with their contributions
// by engine.Limits.) The error is at the attribute that makes most of the
// configuration, with the fix.
func checkKeptAnnotations(spec intentSpec, desired []engine.Desired) diag.Diagnostics {
	var diags diag.Diagnostics
	if spec.Owner.Composition != nil {
		return diags
	}
	for _, d := range desired {
		annotations, _, _ := unstructured.NestedStringMap(d.Manifest, "metadata", "annotations")
		total, kept := 0, 0
		for k, v := range annotations {
			if k == discovery.ConfigAnnotation {
				continue // replaced by the kept configuration
			}
			total += len(k) + len(v)
		}
		if spec.KeptConfig != "" && d.Kind == spec.ConfigKind {
			kept = len(discovery.ConfigAnnotation) + len(spec.KeptConfig)
		}
		if total+kept <= engine.MaxAnnotationBytes {
			continue
		}
		attr, size := largestAttribute(spec.KeptConfig)
		addAttrError(&diags, attr, "Kubernetes limit exceeded: annotations",
			fmt.Sprintf("The annotations of %s would be %d bytes: the configuration this resource keeps there for import (annotation %s, %d bytes, of which %s makes %d) and %d bytes of others; Kubernetes allows at most %d in all. "+
				"Shrink %s, or split this resource into several. Nothing was written.",
				d.Entry, total+kept, discovery.ConfigAnnotation, kept, attr, size, total, engine.MaxAnnotationBytes, attr))
	}
	return diags
}

// largestAttribute is the top-level attribute of a configuration (JSON)
// that takes the most bytes, and their number; name when there is none.
func largestAttribute(cfg string) (path.Path, int) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(cfg), &fields); err != nil || len(fields) == 0 {
		return path.Root("name"), 0
	}
	best, size := "", -1
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if len(fields[k]) > size {
			best, size = k, len(fields[k])
		}
	}
	return path.Root(best), size
}
