package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/defaults"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
)

// Import of an intent resource by name: `terraform import
// mesh_virtual_destination.user user` (or an import block). The provider
// looks in every registered cluster for the objects an intent of that name
// wrote, takes the configuration it kept there and its instance ID (the
// package discovery finds them and decides), and Read then lists its
// objects: the resource is adopted as it is, and a configuration equal to
// the imported one plans no change.
//
// The id `adopt:<name>` instead starts managing an intent whose objects
// this provider did not write: the state holds only the name and
// adopt_existing = true, the configuration says the rest, and the apply
// after it rewrites hand-written objects of the intent's names in place
// and replaces hand-written VirtualServices and DestinationRules of other
// names on its hosts (planAdoption, which fails the plan when there is
// nothing to adopt). Without that prefix such objects are refused.

var (
	_ resource.ResourceWithImportState = &virtualDestinationResource{}
	_ resource.ResourceWithImportState = &trafficPolicyResource{}
	_ resource.ResourceWithImportState = &accessPolicyResource{}
)

// importTarget says where an intent kind's objects and configuration are.
type importTarget struct {
	// kind says which objects import searches (Writes) and where the
	// configuration is kept: a composed kind's in the contribution
	// annotation, the others' in discovery.ConfigAnnotation on ConfigKind
	// objects.
	kind intentkind.Kind
	// plainName is the name hand-written objects of this intent would
	// have, to say so when they are found; empty if not known from the
	// name alone.
	plainName func(name string) string
}

// adoptPrefix marks an import id that adopts objects this provider did not
// write.
const adoptPrefix = "adopt:"

func (l *intentLifecycle[M, P]) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	l.importState(ctx, req, resp, identityName, func(requested, instance string, byIdentity bool) {
		l.importByName(ctx, resp, requested, instance, byIdentity)
	})
}

// importByName imports the intent requested (a name, or adopt:<name> as
// an import ID), the instance given when the identity names one.
func (l *intentLifecycle[M, P]) importByName(ctx context.Context, resp *resource.ImportStateResponse, requested, instance string, byIdentity bool) {
	t := l.importer
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
	found, plain, unreachable := discovery.SearchInstances(ctx, l.data.Engine, l.data.Registry.Names(), t.kind, t.plainName, name)
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
		l.importFound(ctx, name, instance, found, resp)
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
		} else {
			// The hosts are in the configuration, which an import does
			// not see: the plan looks (planAdoption), and fails when it
			// finds nothing to adopt.
			resp.Diagnostics.AddWarning("Adoption decided by the plan",
				fmt.Sprintf("No object of the names %s %q writes exists without the %s label in %s. "+
					"The plan looks for hand-written VirtualServices and DestinationRules on the hosts of its configuration: it names those the apply takes over, "+
					"and fails, writing nothing, when they cannot be adopted or there is nothing to adopt.",
					t.kind.Owner, name, engine.LabelManagedBy, strings.Join(l.data.Registry.Names(), ", ")))
		}
	}
}

// importFound makes the state of the intent name from the instances
// found in the clusters: the one instance named (any, when instance is
// empty), from the configuration it keeps.
func (l *intentLifecycle[M, P]) importFound(ctx context.Context, name, instance string, found map[string]discovery.Instance, resp *resource.ImportStateResponse) {
	kind := l.importer.kind.Owner
	found, summary, detail := discovery.PickInstance(kind, name, instance, found)
	if summary != "" {
		resp.Diagnostics.AddError(summary, detail)
		return
	}
	id, config, summary, detail := discovery.ChooseImport(kind, name, found)
	if summary != "" {
		resp.Diagnostics.AddError(summary, detail)
		return
	}
	v, err := discovery.ConfigValue(resp.State.Schema.Type().TerraformType(ctx), config)
	if err != nil {
		resp.Diagnostics.AddError("The kept configuration cannot be read",
			fmt.Sprintf("The configuration %s %q (instance %s) kept in the clusters does not fit this provider version's schema: %v.", kind, name, id, err))
		return
	}
	resp.State.Raw = v
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), id)...)
	fillDefaults(ctx, resp)
	if kind == intentkind.TrafficPolicy.Owner && l.data.Engine != nil {
		// Another state's roster may list the instance: told, not silent.
		var live []string
		for _, c := range l.data.Registry.Names() {
			if !l.data.Retired[c] {
				live = append(live, c)
			}
		}
		claims, errs := l.data.claims().ListClaims(ctx, live)
		for _, e := range errs {
			resp.Diagnostics.AddWarning("Workspace claims not read in "+e.Cluster, e.Summary+": "+e.Detail+" Whether another state's roster lists the imported policy was not checked there.")
		}
		resp.Diagnostics.Append(importClaimedElsewhere(name, id, claims, l.data.Workspace, l.data.WorkspaceExplicit)...)
	}
}

// importClaimedElsewhere warns when the claim of a workspace identity
// lists the imported traffic policy instance id: another state's roster
// holds it (issue 36, item 8), unless the identity is this provider's
// own workspace, set explicitly.
func importClaimedElsewhere(name, id string, claims []shareddata.Claim, workspace string, explicit bool) diag.Diagnostics {
	var diags diag.Diagnostics
	byIdentity := map[string][]shareddata.Claim{}
	var identities []string
	for _, c := range claims {
		if _, ok := c.Members[id]; !ok || (explicit && c.Identity == workspace) {
			continue
		}
		if byIdentity[c.Identity] == nil {
			identities = append(identities, c.Identity)
		}
		byIdentity[c.Identity] = append(byIdentity[c.Identity], c)
	}
	sort.Strings(identities)
	for _, ident := range identities {
		cs := byIdentity[ident]
		diags.AddWarning("Imported policy listed by another state's claim",
			fmt.Sprintf("Traffic policy %q (instance %s) is listed by the claim of workspace identity %q (%s, in clusters %s): the roster of the state holding that identity has it as its own. "+
				"If that state still declares it, both states now write the same contribution; remove it there (terraform state rm and the block deleted) so that only this state holds it. "+
				"If that claim is this state's own roster's, nothing is to be done.",
				name, id, ident, shareddata.ClaimName(ident), strings.Join(shareddata.ClaimClusters(cs), ", ")))
	}
	return diags
}

// importListed is importFound for an intent a list found by name, with
// the resource identity set from the state as ImportState sets it.
func (l *intentLifecycle[M, P]) importListed(ctx context.Context, name string, found map[string]discovery.Instance, resp *resource.ImportStateResponse) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	l.importFound(ctx, name, "", found, resp)
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
		var v attr.Value
		def := defaultOf(ctx, p, a)
		if def == nil || state.GetAttribute(ctx, p, &v).HasError() || !v.IsNull() {
			continue
		}
		diags.Append(state.SetAttribute(ctx, p, def)...)
	}
	return diags
}

// defaultOf is the value a plan gives the attribute a at p when the
// configuration leaves it out; nil when it has no default.
func defaultOf(ctx context.Context, p path.Path, a schema.Attribute) attr.Value {
	switch a := a.(type) {
	case schema.StringAttribute:
		if a.Default != nil {
			var d defaults.StringResponse
			a.Default.DefaultString(ctx, defaults.StringRequest{Path: p}, &d)
			return d.PlanValue
		}
	case schema.BoolAttribute:
		if a.Default != nil {
			var d defaults.BoolResponse
			a.Default.DefaultBool(ctx, defaults.BoolRequest{Path: p}, &d)
			return d.PlanValue
		}
	case schema.ListAttribute:
		if a.Default != nil {
			var d defaults.ListResponse
			a.Default.DefaultList(ctx, defaults.ListRequest{Path: p}, &d)
			return d.PlanValue
		}
	case schema.MapAttribute:
		if a.Default != nil {
			var d defaults.MapResponse
			a.Default.DefaultMap(ctx, defaults.MapRequest{Path: p}, &d)
			return d.PlanValue
		}
	}
	return nil
}
