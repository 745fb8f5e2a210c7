package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// Import of an intent resource by name: `terraform import
// mesh_virtual_destination.user user` (or an import block). The provider
// looks in every registered cluster for the objects an intent of that name
// wrote, takes the configuration it kept there (intent_config.go) and its
// instance ID, and Read then lists its objects: the resource is adopted as
// it is, and a configuration equal to the imported one plans no change.
//
// The id `adopt:<name>` instead starts managing an intent whose objects
// this provider did not write (hand-written Istio objects of the same
// names): the state holds only the name and adopt_existing = true, the
// configuration says the rest, and the apply after it rewrites those
// objects in place. Without that prefix such objects are refused.

var (
	_ resource.ResourceWithImportState = &virtualDestinationResource{}
	_ resource.ResourceWithImportState = &trafficPolicyResource{}
	_ resource.ResourceWithImportState = &accessPolicyResource{}
)

// importTarget says where an intent kind's objects and configuration are.
type importTarget struct {
	// kind says which objects import searches (Writes) and where the
	// configuration is kept: a composed kind's in the contribution
	// annotation, the others' in ConfigAnnotation on ConfigKind objects.
	kind intentkind.Kind
	// plainName is the name hand-written objects of this intent would
	// have, to say so when they are found; empty if not known from the
	// name alone.
	plainName func(name string) string
}

// adoptPrefix marks an import id that adopts objects this provider did not
// write.
const adoptPrefix = "adopt:"

type foundInstance struct {
	// configs maps each kept configuration found to the objects keeping
	// it; objects lists every object of the instance.
	configs map[string][]string
	objects []string
}

// noInstanceID is how found names objects that carry no instance ID: the
// owner-id label missing, or a contribution label of "true".
const noInstanceID = ""

// chooseImport decides what an import of kind name takes from the
// instances found: exactly one instance, with an ID, keeping one
// configuration. Anything else is refused (summary and detail say why and
// what to do), never resolved by which object was found first: an instance
// without an ID would become an owner of every instance's objects of that
// name (a selector without an ID matches them all), and one of several
// instances or configurations is a guess.
func chooseImport(kind, name string, found map[string]foundInstance) (id, config, summary, detail string) {
	if f, ok := found[noInstanceID]; ok {
		return "", "", "Objects without an instance ID",
			fmt.Sprintf("%s %q has objects that carry the provider's labels but no instance ID (label %s): %s. This provider always writes one, so they were written or edited by someone else, "+
				"and importing them would make the resource the owner of every instance's objects of that name. They are not imported. "+
				"Delete them (or give them back their %s label, from the state that owns them: its next apply writes it) and import again.",
				kind, name, engine.LabelOwnerID, strings.Join(f.objects, ", "), engine.LabelOwnerID)
	}
	if len(found) > 1 {
		var ids []string
		for id, f := range found {
			ids = append(ids, fmt.Sprintf("instance %s (%s)", id, strings.Join(f.objects, ", ")))
		}
		sort.Strings(ids)
		return "", "", "More than one instance to import",
			fmt.Sprintf("Several %s intents named %q, from different Terraform states or replaced resources, have objects in the clusters: %s. "+
				"Import one by deleting the other's objects, or rename one in its own state first.", kind, name, strings.Join(ids, "; "))
	}
	var f foundInstance
	for id, f = range found {
	}
	switch len(f.configs) {
	case 0:
		return "", "", "Nothing to rebuild the configuration from",
			fmt.Sprintf("%s %q (instance %s) has objects (%s), but none keeps its configuration: they were written by an earlier provider version, which did not keep it. "+
				"The next change applied to the resource from the state that owns it keeps it. If that state is lost, delete these objects and apply the configuration again.", kind, name, id, strings.Join(f.objects, ", "))
	case 1:
		for config = range f.configs {
		}
		return id, config, "", ""
	}
	var variants []string
	for _, where := range f.configs {
		variants = append(variants, strings.Join(where, ", "))
	}
	sort.Strings(variants)
	return "", "", "Kept configurations disagree",
		fmt.Sprintf("The objects of %s %q (instance %s) keep %d different configurations, one per group: %s. An apply of it did not finish, or someone edited them, and which is right cannot be told. "+
			"Apply the state that owns it again (its apply rewrites every one), or delete the objects that are wrong, and import again.", kind, name, id, len(f.configs), strings.Join(variants, "; "))
}

func (l *intentLifecycle[M, P]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	t := l.importer
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	requested, instance, byIdentity, diags := importName(ctx, req, identityName)
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		return
	}
	name, adopt := strings.CutPrefix(requested, adoptPrefix)
	if byIdentity && adopt {
		adopt, name = false, requested // adopt: is an import id only; the name check below refuses it
	}
	if name == "" || strings.ContainsAny(name, "/ :") {
		resp.Diagnostics.AddError("Invalid import id",
			fmt.Sprintf("The import id %q is not a name. Use the intent's name, e.g. \"user\" (the name attribute), or, as an import id, %q to adopt objects this provider did not write.", requested, adoptPrefix+"user"))
		return
	}
	if l.data == nil || l.data.RegistryUnknown || len(l.data.Registry.Names()) == 0 {
		resp.Diagnostics.AddError("Import needs the clusters",
			"The provider's clusters are not known yet (values known only after apply) or none is registered, so there is nowhere to look for the objects to import. Apply the clusters first.")
		return
	}
	found, plain, unreachable := l.searchClusters(ctx, t, name)
	if len(unreachable) > 0 {
		sort.Strings(unreachable)
		resp.Diagnostics.AddError("Import could not search every cluster",
			fmt.Sprintf("Importing %s %q needs every registered cluster, since its objects may be in any of them, and these could not be searched: %s. "+
				"Retry when they answer, or list clusters that are gone for good in the provider's retired_clusters.", t.kind.Owner, name, strings.Join(unreachable, "; ")))
		return
	}
	schemaType := resp.State.Schema.Type().TerraformType(ctx)
	switch {
	case len(found) > 0:
		found, summary, detail := pickInstance(t.kind.Owner, name, instance, found)
		if summary != "" {
			resp.Diagnostics.AddError(summary, detail)
			return
		}
		id, config, summary, detail := chooseImport(t.kind.Owner, name, found)
		if summary != "" {
			resp.Diagnostics.AddError(summary, detail)
			return
		}
		v, err := configValue(schemaType, config)
		if err != nil {
			resp.Diagnostics.AddError("The kept configuration cannot be read",
				fmt.Sprintf("The configuration %s %q (instance %s) kept in the clusters does not fit this provider version's schema: %v.", t.kind.Owner, name, id, err))
			return
		}
		resp.State.Raw = v
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
		fillDefaults(ctx, resp)
	case !adopt:
		detail := fmt.Sprintf("No %s named %q was written by this provider in any registered cluster (%s).", t.kind.Owner, name, strings.Join(l.data.Registry.Names(), ", "))
		if len(plain) > 0 {
			detail += fmt.Sprintf(" Objects with its names exist but carry no %s label, so someone else wrote them: %s. "+
				"They are not imported, so that nothing is overwritten by mistake. To bring them under this resource, write its configuration and import with the id %q "+
				"(or set adopt_existing = true and apply): apply then rewrites them to the configuration in place.",
				engine.LabelManagedBy, strings.Join(plain, ", "), adoptPrefix+name)
		}
		resp.Diagnostics.AddError("Nothing to import", detail)
		return
	default:
		resp.State.Raw = tftypes.NewValue(schemaType, nil)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("name"), name)...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), newOwnerID())...)
		resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("adopt_existing"), true)...)
		if len(plain) > 0 {
			resp.Diagnostics.AddWarning("Objects to adopt",
				fmt.Sprintf("The next apply rewrites these objects to the configuration of %s %q, in place: %s.", t.kind.Owner, name, strings.Join(plain, ", ")))
		}
	}
}

// searchClusters lists, in every registered cluster, the instances of the
// intent kind t named name (by instance ID, with their kept
// configuration), and the objects with its names that this provider did
// not write.
func (l *intentLifecycle[M, P]) searchClusters(ctx context.Context, t importTarget, name string) (found map[string]foundInstance, plain, unreachable []string) {
	found = map[string]foundInstance{}
	owner := engine.Owner{Kind: t.kind.Owner, Name: name} // no ID: every instance
	if t.kind.Composed {
		owner.Composition = &engine.Composition{}
	}
	selector, contributionKey := owner.Selector(), owner.ContributionKey()
	for _, cluster := range l.data.Registry.Names() {
		for _, k := range t.kind.Writes {
			items, installed, err := l.data.Engine.Search(ctx, cluster, k, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				unreachable = append(unreachable, fmt.Sprintf("%s: %v", cluster, err))
				break
			}
			if !installed {
				continue
			}
			for _, item := range items {
				labels, annotations := item.GetLabels(), item.GetAnnotations()
				id, cfg := labels[engine.LabelOwnerID], ""
				if t.kind.Composed {
					id = labels[contributionKey]
					if id == "true" { // a contribution label without an ID (Owner.idValue)
						id = noInstanceID
					}
					cfg, _ = trafficpolicy.KeptConfig(annotations[contributionKey])
				} else if k.Kind == t.kind.ConfigKind {
					cfg = annotations[ConfigAnnotation]
				}
				where := fmt.Sprintf("%s %s/%s in %s", k.Kind, item.GetNamespace(), item.GetName(), cluster)
				f := found[id]
				f.objects = append(f.objects, where)
				if cfg != "" {
					if f.configs == nil {
						f.configs = map[string][]string{}
					}
					f.configs[cfg] = append(f.configs[cfg], where)
				}
				found[id] = f
			}
			if t.plainName == nil || k.Kind == "ConfigMap" {
				continue
			}
			all, _, err := l.data.Engine.Search(ctx, cluster, k, metav1.ListOptions{FieldSelector: "metadata.name=" + t.plainName(name)})
			if err != nil {
				unreachable = append(unreachable, fmt.Sprintf("%s: %v", cluster, err))
				break
			}
			for _, item := range all {
				if item.GetLabels()[engine.LabelManagedBy] != engine.ManagedByValue {
					plain = append(plain, fmt.Sprintf("%s %s/%s in %s", k.Kind, item.GetNamespace(), item.GetName(), cluster))
				}
			}
		}
	}
	return found, plain, unreachable
}

// fillDefaults sets the attributes with a default that an imported
// configuration left out (it keeps what was written, not what was
// planned), as a plan would.
func fillDefaults(ctx context.Context, resp *resource.ImportStateResponse) {
	resp.Diagnostics.Append(fillStateDefaults(ctx, &resp.State)...)
}

// fillStateDefaults sets, in a state built from a configuration, the
// top-level attributes with a default that are null.
func fillStateDefaults(ctx context.Context, state *tfsdk.State) diag.Diagnostics {
	var diags diag.Diagnostics
	for name, a := range state.Schema.GetAttributes() {
		p := path.Root(name)
		switch a := a.(type) {
		case schema.StringAttribute:
			var v types.String
			if a.Default == nil || state.GetAttribute(ctx, p, &v).HasError() || !v.IsNull() {
				continue
			}
			var d defaults.StringResponse
			a.Default.DefaultString(ctx, defaults.StringRequest{Path: p}, &d)
			diags.Append(state.SetAttribute(ctx, p, d.PlanValue)...)
		case schema.BoolAttribute:
			var v types.Bool
			if a.Default == nil || state.GetAttribute(ctx, p, &v).HasError() || !v.IsNull() {
				continue
			}
			var d defaults.BoolResponse
			a.Default.DefaultBool(ctx, defaults.BoolRequest{Path: p}, &d)
			diags.Append(state.SetAttribute(ctx, p, d.PlanValue)...)
		}
	}
	return diags
}
