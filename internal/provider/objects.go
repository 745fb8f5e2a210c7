package provider

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/render"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
)

// The objects attribute: the inventory of what an intent owns, a map from
// each object's identity (engine.Entry.StateKey: cluster, kind and group,
// namespace, name) to its digest. A plan shows a changed object as a changed
// value under its own key, added and removed objects as added and removed
// keys; and a key costs less state than an object of six attributes.

// objectsPlanNote ends every resource's description: how a plan shows
// what changes where, with lines of that resource's own objects (each
// "op key = digest"; the keys as objectsAttribute describes them).
func objectsPlanNote(lines ...string) string {
	width := 0
	for _, l := range lines {
		_, key, _ := strings.Cut(l, " ")
		key, _, _ = strings.Cut(key, " = ")
		width = max(width, len(key))
	}
	var b strings.Builder
	b.WriteString("\n\n`objects` maps each owned object, by `<cluster>/<Kind>.<group>/<namespace>/<name>`, to its digest, " +
		"so a plan names every object that changes and the cluster it is in, and hides the others:\n\n" +
		"```text\n" +
		"      ~ objects = {\n")
	for _, l := range lines {
		op, rest, _ := strings.Cut(l, " ")
		key, value, _ := strings.Cut(rest, " = ")
		fmt.Fprintf(&b, "          %s %-*s = %s\n", op, width, key, value)
	}
	b.WriteString("            # (4 unchanged elements hidden)\n" +
		"        }\n" +
		"```\n\n" +
		"`make render` in the repository prints the content of each object a configuration plans, per cluster, as YAML, without contacting a cluster.")
	return b.String()
}

func objectsAttribute(examples string) schema.MapAttribute {
	return schema.MapAttribute{
		MarkdownDescription: "The Istio objects this intent owns: one key per object and cluster, " +
			"`<cluster>/<Kind>.<group>/<namespace>/<name>` (`<Kind>` alone for core kinds), " + examples + " " +
			"The value is the object's digest (16 hex digits of a SHA-256 over the fields this intent owns). " +
			"Planned from the translation without contacting any cluster, so a plan names each object that changes, by key; " +
			"refreshed from the clusters, so objects deleted or changed out of band show up in the next plan. " +
			"A digest is unknown until apply when its object's content depends on values known only then.",
		Computed:    true,
		ElementType: types.StringType,
	}
}

// intentSpec is what a resource hands to the shared lifecycle: who owns the
// objects, which kinds it may emit, and how to translate it.
type intentSpec struct {
	Owner     engine.Owner
	Kinds     []k8sschema.GroupVersionKind
	Translate func(reg *translate.Registry) ([]translate.Object, error)
	// ConfigKind is the kind of the objects that keep the intent's
	// configuration (intent_config.go); composed intents keep it in their
	// contribution instead.
	ConfigKind string
	// KeptConfig is, at plan, the configuration (JSON) the apply will
	// keep for import (withConfig): no part of a digest, so the plan does
	// without it, but the limits it checks count it (checkLimits).
	KeptConfig string
	// Routing, when set, states where the intent sends requests (the
	// routing attribute, routing.go).
	Routing func(reg *translate.Registry) (routing.Statement, error)
	// Case is the translator's input in the golden cases' format (the
	// intent of internal/translate/<intent>/testdata/<case>.yaml), which
	// a plan writes under MESH_CASES_DIR (cases.go).
	Case func() any
	// ComposedCase, when the intent composes with others planned in this
	// run, names and gives the case of all of them composed (cases.go).
	ComposedCase func() (string, any)
	// NamespaceAttr, when set, names the attribute that puts objects in
	// a cluster's namespace (a virtual destination's backends[i].namespace),
	// for the plan's error when that namespace does not exist.
	NamespaceAttr func(cluster, namespace string) (path.Path, bool)
	// Services, when set, are the Kubernetes Services the intent routes
	// to, each with the attribute that names it, for the plan's warning
	// when one does not exist (checkServices).
	Services []serviceCheck
	// DestinationService, when set, is the Service a policy's
	// destination names (destination.service): it is checked in every
	// cluster the intent writes an object to (checkServices).
	DestinationService *serviceCheck
	// Adopted are, at apply, the hand-written objects the plan recorded
	// for adoption (the adopted attribute): the only ones the apply may
	// delete.
	Adopted []engine.HandWritten
}

// serviceCheck is a Service an intent routes to and the attribute that
// names it (a virtual destination's backends[i].service).
type serviceCheck struct {
	Ref engine.ServiceRef
	At  path.Path
}

func gvk(apiVersion, kind string) k8sschema.GroupVersionKind {
	return k8sschema.FromAPIVersionAndKind(apiVersion, kind)
}

// planObjects computes the planned objects attribute from the
// translation. Translation errors become attribute errors. It writes to
// no cluster: a composed intent reads the objects it shares
// (checkComposition); where the clusters answer, what apply would refuse
// is checked (checkNamespaces: namespaces that do not exist, objects of
// our names that are not ours), and hand-written VirtualServices and
// DestinationRules on the intent's hosts are a warning
// (engine.ForeignRoutes), unless adopt_existing takes them over
// (planAdoption). prior is the objects attribute in state; importedAdopt
// is set for a state imported with adopt: and not applied since. It also
// returns what the apply is to take over, for the adopted attribute.
func planObjects(ctx context.Context, data *providerData, spec intentSpec, prior types.Map, importedAdopt bool) (types.Map, adoption, diag.Diagnostics) {
	if data == nil || data.RegistryUnknown {
		return types.MapUnknown(types.StringType), undecidedAdoption(spec.Owner), adoptionUndecided(spec.Owner, "the provider's clusters")
	}
	objs, err := spec.Translate(data.Registry)
	if errors.Is(err, translate.ErrUnknownPlacement) {
		return types.MapUnknown(types.StringType), undecidedAdoption(spec.Owner), adoptionUndecided(spec.Owner, "the clusters this intent's objects go to")
	}
	if err != nil {
		return types.MapUnknown(types.StringType), adoption{}, translateDiagnostics(err)
	}
	desired, err := engine.Plan(spec.Owner, objs)
	if err != nil {
		var d diag.Diagnostics
		d.AddError("Rendering objects", err.Error())
		return types.MapUnknown(types.StringType), adoption{}, d
	}
	entries := engine.Entries(desired)
	if err := data.Planned.Claim(spec.Owner, entries); err != nil {
		var d diag.Diagnostics
		addAttrError(&d, path.Root("name"), "Two intents write the same object", err.Error())
		return types.MapUnknown(types.StringType), adoption{}, d
	}
	if err := render.Planned(spec.Owner, desired); err != nil {
		var d diag.Diagnostics
		d.AddError("Writing the rendered objects", fmt.Sprintf("%s is set, and the objects of %s could not be written there: %v.", render.DirEnv, spec.Owner, err))
		return types.MapUnknown(types.StringType), adoption{}, d
	}
	if err := writeCase(spec, data.Registry); err != nil {
		var d diag.Diagnostics
		d.AddError("Writing the translator's input", fmt.Sprintf("%s is set, and the translator's input of %s could not be written there: %v.", CasesDirEnv, spec.Owner, err))
		return types.MapUnknown(types.StringType), adoption{}, d
	}
	shared := sharedContributions(ctx, data, spec.Owner, entries)
	// The limits are those of what the apply writes: with the
	// configuration it keeps for import.
	keeping, err := spec.keeping()
	if err != nil {
		var d diag.Diagnostics
		d.AddError("Recording the configuration", fmt.Sprintf("The configuration of %s cannot be kept for import: %v.", spec.Owner, err))
		return types.MapUnknown(types.StringType), adoption{}, d
	}
	diags := checkLimits(data, keeping, entries, shared)
	diags.Append(checkKeptAnnotations(spec, desired)...)
	if diags.HasError() {
		return types.MapUnknown(types.StringType), adoption{}, diags
	}
	diags.Append(checkComposition(data, spec.Owner, entries, shared)...)
	diags.Append(checkDelivery(ctx, data, spec.Owner, entries)...)
	if diags.HasError() {
		return types.MapUnknown(types.StringType), adoption{}, diags
	}
	diags.Append(checkNamespaces(ctx, data, spec, desired, entriesOf(prior))...)
	if diags.HasError() {
		return types.MapUnknown(types.StringType), adoption{}, diags
	}
	var adopting adoption
	if data.Engine != nil {
		adopted, a, undecided, d := planAdoption(ctx, data, spec, desired, importedAdopt)
		adopting = adoption{Objects: a, Undecided: undecided, Takes: engine.TakesOver(desired)}
		diags.Append(d...)
		if diags.HasError() {
			return types.MapUnknown(types.StringType), adoption{}, diags
		}
		var found []string
		for _, f := range data.Engine.ForeignRoutes(ctx, desired) {
			if !adopted[f] {
				found = append(found, f)
			}
		}
		if len(found) > 0 {
			diags.AddAttributeWarning(path.Root("name"), "Hand-written Istio objects on the host of "+intentkind.ResourceOf(spec.Owner.Kind, spec.Owner.Name), engine.ForeignRoutesHint(found))
		}
	}
	diags.Append(checkServices(ctx, data, spec, desired)...)
	if len(adopting.Objects) > 0 && !prior.IsNull() {
		// Already applied (an adoption whose delete failed, or an object
		// written since): the objects may stay as they are, but the apply
		// must run to take the hand-written ones over.
		return types.MapUnknown(types.StringType), adopting, diags
	}
	l, d := entriesValue(entries)
	return l, adopting, append(diags, d...)
}

// adoption is what a plan records for the apply to take over (the
// adopted attribute): Objects, or, when the plan cannot look (Undecided:
// the clusters not known yet, or one that cannot be listed), nothing
// known: the apply's plan, with the clusters known, records them.
type adoption struct {
	Objects   []engine.HandWritten
	Undecided bool
	// Takes, when set, says whether the plan's objects still take over a
	// hand-written object: a record in state is carried forward only
	// while they do (planAdopted).
	Takes func(engine.HandWritten) bool
}

// undecidedAdoption is the adoption of a plan that cannot look at the
// clusters: undecided for an intent with adopt_existing.
func undecidedAdoption(owner engine.Owner) adoption {
	return adoption{Undecided: owner.Adopt}
}

// adoptionUndecided is the plan's warning on adopt_existing while what
// (the clusters) is not known: adoption is decided by the apply.
func adoptionUndecided(owner engine.Owner, what string) diag.Diagnostics {
	var diags diag.Diagnostics
	if !owner.Adopt {
		return diags
	}
	diags.AddAttributeWarning(path.Root("adopt_existing"), "Adoption decided at apply for "+intentkind.ResourceOf(owner.Kind, owner.Name),
		"adopt_existing takes over the hand-written VirtualServices and DestinationRules on this intent's hosts, and "+what+" are not known until apply, so this plan cannot name them: adopted is known after apply, "+
			"and the apply deletes each hand-written object it takes over only if unchanged since the apply read it (UID and resourceVersion preconditions). "+
			"To review them first, apply what the clusters depend on (terraform apply -target=<the mesh_cluster resources or the provider's inputs>), then run terraform plan: it names each object adopted.")
	return diags
}

// planAdoption checks, for an intent with adopt_existing, the hand-written
// VirtualServices and DestinationRules on its hosts of a kind it writes
// there (engine.RoutesToAdopt): those it cannot carry fail the plan, each
// named with the reason, on adopt_existing; those it takes over are a
// warning saying what the apply does to them. It returns them as the
// foreign-route warning names them (for that warning to leave them out),
// those taken over, and whether a cluster could not be listed (undecided:
// the apply's plan may find more there). A state imported with adopt:
// (importedAdopt) that finds nothing to adopt at all, neither these nor
// objects of the intent's own names, fails: an import never reports an
// adoption that adopts nothing.
func planAdoption(ctx context.Context, data *providerData, spec intentSpec, desired []engine.Desired, importedAdopt bool) (map[string]bool, []engine.HandWritten, bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	if !spec.Owner.Adopt {
		return nil, nil, false, diags
	}
	resource := intentkind.ResourceOf(spec.Owner.Kind, spec.Owner.Name)
	adopt, refuse, unreadable := data.Engine.RoutesToAdopt(ctx, desired, false)
	handled := map[string]bool{}
	for _, h := range append(append([]engine.HandWritten{}, adopt...), refuse...) {
		handled[h.String()] = true
	}
	if len(refuse) > 0 {
		addAttrError(&diags, path.Root("adopt_existing"), "Hand-written Istio objects that cannot be adopted by "+resource,
			fmt.Sprintf("adopt_existing takes over the hand-written VirtualServices and DestinationRules on this intent's hosts, replacing each with the intent's own, and these say what the intent does not:\n%s\n"+
				"Nothing is written. Make the intent say it (declare those hosts), change or delete the objects, or set adopt_existing = false to leave them beside the intent (a plan warning then names them).",
				engine.HandWrittenList(refuse)))
		return handled, nil, false, diags
	}
	undecided := len(unreadable) > 0
	// Named and recorded once, by the same intent whatever order
	// Terraform plans in (it plans each resource again at apply, in a new
	// process, and the record must not change then): a hand-written object
	// on a virtual destination's host is the virtual destination's to take
	// over, so a policy that only joins the destination's object
	// (Composition.Owned) records nothing there, and the destination is
	// the only one left to record it; between intents that own no object
	// of the other (policies sharing a composed DestinationRule on a
	// service), the first planned records it (FirstAdopter).
	var news []engine.HandWritten
	for _, h := range adopt {
		if joinsOwned(spec.Owner, desired, h) {
			continue
		}
		if _, other := data.Planned.FirstAdopter(spec.Owner, h.Key()); !other {
			news = append(news, h)
		}
	}
	if len(news) > 0 {
		diags.AddAttributeWarning(path.Root("adopt_existing"), "Hand-written Istio objects adopted by "+resource,
			fmt.Sprintf("The apply writes this intent's objects, then deletes these hand-written ones (only if unchanged since the plan: the adopted attribute records each), so that one VirtualService and one set of DestinationRules serve each host:\n%s\nRemove adopt_existing to keep them.",
				engine.HandWrittenList(news)))
	}
	if !importedAdopt || len(adopt) > 0 {
		return handled, news, undecided, diags
	}
	plain, err := data.Engine.PlainObjects(ctx, desired)
	if err != nil || len(unreadable) > 0 {
		return handled, nil, true, diags // the apply, with the clusters answering, decides
	}
	if len(plain) == 0 {
		addAttrError(&diags, path.Root("adopt_existing"), "Nothing to adopt for "+resource,
			fmt.Sprintf("%s was imported with adopt:, and no cluster has a hand-written object for it to take over: no object of the names it writes without the %s label, and no hand-written VirtualService or DestinationRule on a host it writes one for. "+
				"Nothing is written. If the hand-written objects are elsewhere (another host or cluster), make the configuration name them; if there are none, remove the import and apply to create the intent.",
				resource, engine.LabelManagedBy))
	}
	return handled, nil, false, diags
}

// joinsOwned reports whether owner's object of h's kind on h's host in
// h's cluster is one another intent owns and owner only joins (a
// policy's part of its virtual destination's DestinationRule): that
// intent adopts h, owner does not.
func joinsOwned(owner engine.Owner, desired []engine.Desired, h engine.HandWritten) bool {
	if owner.Composition == nil || owner.Composition.Owned == nil {
		return false
	}
	for _, d := range desired {
		if d.Cluster != h.Cluster || d.Kind != h.Kind || !owner.Composition.Owned(d.Key()) {
			continue
		}
		if slices.Contains(d.NamedHosts(), h.Host) {
			return true
		}
	}
	return false
}

// applyObjects translates (all values are known at apply), applies and
// prunes, and returns the inventory of what exists afterwards, also on
// failure, with the clusters that failed (failedClusters).
func applyObjects(ctx context.Context, data *providerData, spec intentSpec, prior []engine.Entry) (types.Map, map[string]string, diag.Diagnostics) {
	prior, diags := forgetRetired(data, spec, prior)
	objs, err := spec.Translate(data.Registry)
	if err != nil {
		diags.Append(translateDiagnostics(err)...)
		l, d := entriesValue(prior)
		return l, nil, append(diags, d...)
	}
	desired, err := engine.Plan(spec.Owner, objs)
	if err != nil {
		diags.AddError("Rendering objects", err.Error())
		l, d := entriesValue(prior)
		return l, nil, append(diags, d...)
	}
	// A namespace that does not exist, or an object of our name that is
	// not ours, fails the intent before anything is written: a create
	// then leaves no state, so nothing is tainted.
	missing := data.Engine.MissingNamespaces(ctx, spec.Owner, desired, prior)
	var checked *engine.Checked // what the check read, so the apply does not read it again
	if len(missing) == 0 {
		checked, missing = data.Engine.CheckForeignObjects(ctx, spec.Owner, desired, prior)
	}
	if len(missing) > 0 {
		diags.Append(engineDiagnostics(missing.Err(), diag.SeverityError)...)
		l, d := entriesValue(prior)
		return l, nil, append(diags, d...)
	}
	// Hand-written VirtualServices and DestinationRules adopt_existing
	// takes over: exactly those the plan recorded (spec.Adopted), read
	// again. One edited since the plan fails before anything is written;
	// one the plan did not name is left alone; the others are deleted
	// once every write succeeded (planAdoption).
	var adopt []engine.HandWritten
	if spec.Owner.Adopt {
		resource := intentkind.ResourceOf(spec.Owner.Kind, spec.Owner.Name)
		a := data.Engine.AdoptionAtApply(ctx, desired, spec.Adopted)
		if len(a.Changed) > 0 {
			addAttrError(&diags, path.Root("adopted"), "Hand-written Istio objects changed since the plan of "+resource,
				"The plan recorded these for the apply to delete, and each was edited since (another resourceVersion), so nothing is written and none is deleted:\n"+engine.HandWrittenList(a.Changed)+
					"\nRun terraform plan again: it shows whether they can be adopted as they are now.")
			l, d := entriesValue(prior)
			return l, nil, append(diags, d...)
		}
		if len(a.Appeared) > 0 {
			diags.AddAttributeWarning(path.Root("adopted"), "Hand-written Istio objects not adopted by "+resource,
				"The plan did not name these (written, or replaced, after it), so the apply leaves them as they are:\n"+engine.HandWrittenList(a.Appeared)+
					"\nRun terraform plan again: it names them, and the apply after it takes them over.")
		}
		for _, u := range a.Unreadable {
			diags.AddWarning("Hand-written objects not looked for",
				fmt.Sprintf("adopt_existing takes over hand-written VirtualServices and DestinationRules on this intent's hosts, and this cluster could not be listed (%s); the next plan with the cluster answering shows any there.", u))
		}
		adopt = a.Delete
	}
	entries, err := data.Engine.ApplyChecked(ctx, spec.Owner, desired, prior, checked)
	diags.Append(engineDiagnostics(err, diag.SeverityError)...)
	if err == nil && len(adopt) > 0 {
		diags.Append(engineDiagnostics(data.Engine.DeleteAdopted(ctx, spec.Owner, adopt).Err(), diag.SeverityError)...)
	}
	l, d := entriesValue(entries)
	return l, failedClusters(err), append(diags, d...)
}

// readObjects refreshes the inventory from the clusters the intent targets
// and the clusters it already has objects in. Unreachable clusters keep
// their entries and warn; they are returned (failedClusters), for the plan
// to re-check their objects (recheckUnreadable).
//
// An import has no prior inventory, so it looks in every registered cluster.
func readObjects(ctx context.Context, data *providerData, spec intentSpec, prior []engine.Entry, importing bool) (types.Map, map[string]string, diag.Diagnostics) {
	prior, diags := forgetRetired(data, spec, prior)
	var clusters []string
	if importing {
		clusters = data.Registry.Names()
	} else if objs, err := spec.Translate(data.Registry); err == nil {
		seen := map[string]bool{}
		for _, o := range objs {
			if !seen[o.Cluster] {
				seen[o.Cluster] = true
				clusters = append(clusters, o.Cluster)
			}
		}
	}
	entries, errs := data.Engine.Read(ctx, spec.Owner, spec.Kinds, clusters, prior)
	diags.Append(engineDiagnostics(errs.Err(), diag.SeverityWarning)...)
	l, d := entriesValue(entries)
	return l, failedClusters(errs.Err()), append(diags, d...)
}

// deleteObjects removes every owned object.
func deleteObjects(ctx context.Context, data *providerData, spec intentSpec, prior []engine.Entry) (types.Map, diag.Diagnostics) {
	prior, diags := forgetRetired(data, spec, prior)
	left, err := data.Engine.Delete(ctx, spec.Owner, prior)
	diags.Append(engineDiagnostics(err, diag.SeverityError)...)
	l, d := entriesValue(left)
	return l, append(diags, d...)
}

// forgetRetired drops the entries in retired clusters (the provider's
// retired_clusters), with a warning naming them: those clusters are gone,
// so their objects can be neither read nor deleted, and keeping them
// would fail every apply and destroy of the intent.
func forgetRetired(data *providerData, spec intentSpec, prior []engine.Entry) ([]engine.Entry, diag.Diagnostics) {
	var diags diag.Diagnostics
	if data == nil || len(data.Retired) == 0 {
		return prior, diags
	}
	var kept []engine.Entry
	forgotten := map[string][]string{}
	var clusters []string
	for _, e := range prior {
		if !data.Retired[e.Cluster] {
			kept = append(kept, e)
			continue
		}
		if forgotten[e.Cluster] == nil {
			clusters = append(clusters, e.Cluster)
		}
		forgotten[e.Cluster] = append(forgotten[e.Cluster], e.Kind+" "+e.Namespace+"/"+e.Name)
	}
	sort.Strings(clusters)
	for _, c := range clusters {
		objs := forgotten[c]
		diags.AddWarning(fmt.Sprintf("Forgetting %d objects of %s in retired cluster %s", len(objs), spec.Owner, c),
			fmt.Sprintf("Cluster %s is in the provider's retired_clusters, so %s no longer tracks its objects there, and they were not deleted: %s. "+
				"If the cluster still exists, delete them there yourself.", c, spec.Owner, strings.Join(objs, ", ")))
	}
	return kept, diags
}

func entriesValue(es []engine.Entry) (types.Map, diag.Diagnostics) {
	elems := make(map[string]attr.Value, len(es))
	for _, e := range es {
		digest := types.StringValue(e.Digest)
		if e.Digest == "" {
			digest = types.StringUnknown()
		}
		elems[e.StateKey()] = digest
	}
	return types.MapValue(types.StringType, elems)
}

// planAdopted sets the planned adopted attribute: unknown while the plan
// cannot look (the apply's plan decides), the objects the apply is to
// take over, or, when there are none, the record in state (the last
// adoption, so that the plan after an adoption shows no change), of which
// only what the plan's objects still take over is carried forward.
func planAdopted(ctx context.Context, planned *types.Map, adopting adoption, state tfsdk.State) diag.Diagnostics {
	if adopting.Undecided {
		*planned = types.MapUnknown(types.StringType)
		return nil
	}
	if len(adopting.Objects) > 0 {
		elems := make(map[string]attr.Value, len(adopting.Objects))
		for _, h := range adopting.Objects {
			elems[h.Key()] = types.StringValue(h.Stamp())
		}
		v, diags := types.MapValue(types.StringType, elems)
		*planned = v
		return diags
	}
	*planned = types.MapNull(types.StringType)
	if state.Raw.IsNull() {
		return nil
	}
	var recorded types.Map
	if diags := state.GetAttribute(ctx, path.Root("adopted"), &recorded); diags.HasError() {
		return diags
	}
	if adopting.Takes == nil || recorded.IsNull() || recorded.IsUnknown() {
		*planned = recorded
		return nil
	}
	kept := map[string]attr.Value{}
	for k, v := range recorded.Elements() {
		s, _ := v.(types.String)
		if h, err := engine.HandWrittenFromRecord(k, s.ValueString()); err == nil && adopting.Takes(h) {
			kept[k] = v
		}
	}
	if len(kept) == 0 {
		return nil
	}
	v, diags := types.MapValue(types.StringType, kept)
	*planned = v
	return diags
}

// adoptedOf reads the adopted attribute back; an entry that does not read
// is left out (the apply then deletes nothing for it).
func adoptedOf(m types.Map) []engine.HandWritten {
	if m.IsNull() || m.IsUnknown() {
		return nil
	}
	var out []engine.HandWritten
	for k, v := range m.Elements() {
		s, _ := v.(types.String)
		h, err := engine.HandWrittenFromRecord(k, s.ValueString())
		if err != nil {
			continue
		}
		out = append(out, h)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// entriesOf reads the objects attribute back into entries, sorted by
// cluster, kind, namespace and name. A key the engine cannot read (none
// that it wrote) is left out.
func entriesOf(m types.Map) []engine.Entry {
	if m.IsNull() || m.IsUnknown() {
		return nil
	}
	out := make([]engine.Entry, 0, len(m.Elements()))
	for k, v := range m.Elements() {
		d, _ := v.(types.String)
		e, err := engine.EntryFromStateKey(k, d.ValueString())
		if err != nil {
			continue
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key().Less(out[j].Key()) })
	return out
}

// translateDiagnostics ties each translation error to its attribute.
func translateDiagnostics(err error) diag.Diagnostics {
	var diags diag.Diagnostics
	var list translate.Errors
	var one *translate.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = translate.Errors{one}
	default:
		diags.AddError("Translation failed", err.Error())
		return diags
	}
	for _, e := range list {
		if len(e.Path) == 0 {
			diags.AddError(e.Summary, e.Detail)
			continue
		}
		addAttrError(&diags, attrPath(e.Path), e.Summary, e.Detail)
	}
	return diags
}

func attrPath(p translate.Path) path.Path {
	var out path.Path
	for i, s := range p {
		switch {
		case s.Index != nil:
			out = out.AtListIndex(*s.Index)
		case s.Key != nil:
			out = out.AtMapKey(*s.Key)
		case i == 0:
			out = path.Root(s.Attr)
		default:
			out = out.AtName(s.Attr)
		}
	}
	return out
}

// engineDiagnostics turns engine errors into one diagnostic each; a
// cluster an apply kept unchanged because it could not be reached is a
// warning whatever the severity.
func engineDiagnostics(err error, severity diag.Severity) diag.Diagnostics {
	var diags diag.Diagnostics
	if err == nil {
		return diags
	}
	var list engine.Errors
	if !errors.As(err, &list) {
		list = engine.Errors{{Summary: "Mesh operation failed", Detail: err.Error()}}
	}
	for _, e := range list {
		if errors.Is(e.Err, engine.ErrUnchangedUnreachable) {
			// An apply that had nothing to change in a cluster it could
			// not reach (engine/outage.go): the other clusters went on.
			diags.AddWarning(e.Summary, e.Detail)
		} else if severity == diag.SeverityWarning && errors.Is(e.Err, engine.ErrDrift) {
			diags.AddWarning(e.Summary, e.Detail)
		} else if severity == diag.SeverityWarning {
			diags.AddWarning(e.Summary, e.Detail+" The previous inventory of this cluster is kept.")
		} else {
			diags.AddError(e.Summary, e.Detail)
		}
	}
	return diags
}

// checkServices warns, where the clusters answer and the provider may
// read Services, about each Service the intent routes to that does not
// exist (engine.MissingServices), on the attribute that names it: the
// apply would succeed, and requests routed there fail.
func checkServices(ctx context.Context, data *providerData, spec intentSpec, desired []engine.Desired) diag.Diagnostics {
	var diags diag.Diagnostics
	services := spec.Services
	if d := spec.DestinationService; d != nil {
		for _, c := range clustersOf(desired) {
			services = append(services, serviceCheck{Ref: engine.ServiceRef{Cluster: c, Namespace: d.Ref.Namespace, Name: d.Ref.Name}, At: d.At})
		}
	}
	if data == nil || data.Engine == nil || len(services) == 0 {
		return diags
	}
	at := map[engine.ServiceRef]path.Path{}
	var refs []engine.ServiceRef
	for _, s := range services {
		if _, dup := at[s.Ref]; !dup {
			at[s.Ref] = s.At
			refs = append(refs, s.Ref)
		}
	}
	for _, e := range data.Engine.MissingServices(ctx, spec.Owner, refs) {
		for _, s := range services {
			if s.Ref.Cluster == e.Cluster && "Service "+s.Ref.String() == e.Object {
				addAttrWarning(&diags, at[s.Ref], e.Summary, e.Detail)
				break
			}
		}
	}
	return diags
}

// destinationService is the Service a policy's destination names
// (destination.service in destination.namespace), for checkServices; nil
// for a virtual destination or a value not known yet.
func destinationService(service, namespace *string) *serviceCheck {
	if service == nil || namespace == nil || *service == "" || *namespace == "" || translate.IsUnknown(*service+*namespace) {
		return nil
	}
	return &serviceCheck{Ref: engine.ServiceRef{Namespace: *namespace, Name: *service}, At: path.Root("destination").AtName("service")}
}

// clustersOf lists, sorted, the clusters desired objects go to.
func clustersOf(desired []engine.Desired) []string {
	var out []string
	for _, d := range desired {
		out = append(out, d.Cluster)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// checkNamespaces fails the plan, where the clusters answer, for each
// namespace the intent's new objects go to that does not exist
// (engine.MissingNamespaces): the apply would be refused there. The error
// is on the attribute that names the namespace when the intent says which
// (intentSpec.NamespaceAttr), else on objects. Then, for each new object
// whose name someone else's object already has (engine.ForeignObjects),
// on name, with the fix (adopt_existing, rename, delete).
func checkNamespaces(ctx context.Context, data *providerData, spec intentSpec, desired []engine.Desired, prior []engine.Entry) diag.Diagnostics {
	var diags diag.Diagnostics
	if data == nil || data.Engine == nil {
		return diags
	}
	for _, e := range data.Engine.MissingNamespaces(ctx, spec.Owner, desired, prior) {
		at := path.Root("objects")
		var missing *engine.NamespaceMissing
		if errors.As(e.Err, &missing) && spec.NamespaceAttr != nil {
			if p, ok := spec.NamespaceAttr(missing.Cluster, missing.Namespace); ok {
				at = p
			}
		}
		addAttrError(&diags, at, "Namespace missing in cluster "+e.Cluster, e.Detail)
	}
	if diags.HasError() {
		return diags
	}
	// The names of an intent's objects follow from its name.
	for _, e := range data.Engine.ForeignObjects(ctx, spec.Owner, desired, prior) {
		diags.AddAttributeError(path.Root("name"), "Object not ours in cluster "+e.Cluster, e.Detail) // the apply's own words
	}
	return diags
}
