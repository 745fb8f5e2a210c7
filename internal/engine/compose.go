package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// Composed objects are shared by several intents of one kind, e.g. the
// VirtualService of a destination that several traffic policies shape:
// Istio keeps only one VirtualService per host for sidecars, so the
// policies must meet in one object. Each intent stores its contribution
// in an annotation of the object; whoever writes recomposes the object
// from every contribution, under one shared field manager, guarded by the
// object's resourceVersion so that concurrent writers never lose each
// other's contribution. What a contribution holds is the intent kind's
// composer's to say (package composition); the engine reads and writes
// the annotations, and keeps those it does not compose byte for byte.

// Composition makes an owner's objects composed.
type Composition struct {
	// Composer decodes, composes and digests the contributions of the
	// owner's kind.
	Composer composition.Composer
	// Contribution is what this intent adds to the objects of each
	// cluster, typed and encoded (the annotation value stored there).
	Contribution composition.Part
	// Own says whether an instance ID is one this Terraform state holds:
	// a contribution of the same name from such an instance (this
	// resource's previous instance, being replaced) is replaced; from any
	// other instance it is a conflict, whatever workspace it names, since
	// two states may carry one workspace name.
	Own func(id string) bool
	// Orphan, set by a roster, says whether a contribution is an orphan of
	// its state (verdict.go): by its instance label, and by what its
	// content says (its name, the workspace it names), so that a label
	// changed by hand does not make another state's contribution one.
	Orphan func(c LiveContribution) bool
	// Owned says whether an object is another intent's own, which this
	// contribution only joins (a virtual destination's DestinationRule):
	// a composer never creates it. Nil: none is.
	Owned func(key translate.Key) bool
}

// ContributionKey is the annotation (and label) key of an intent's
// contribution: <kind>.mesh-intent.io/<name>.
func (o Owner) ContributionKey() string { return o.Kind + ".mesh-intent.io/" + o.Name }

// compose writes one composed object with this intent's contribution set
// (remove false) or removed (remove true).
func (e *Engine) compose(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, entry Entry, remove bool) *Error {
	doing := "Applying"
	if remove {
		doing = "Releasing"
	}
	if owner.Composition == nil || owner.Composition.Composer == nil {
		// Nothing can recompose the object without this contribution: a
		// release now would leave its settings behind untracked.
		return &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: doing + " " + entry.String(),
			Detail: fmt.Sprintf("%s is shared by several %ss, and the provider has no composer to rewrite it without %s (an internal error: the resource was read without its composition). "+
				"Nothing was written; run the command again, and report it if it persists.", entry, owner.Kind, owner)}
	}
	err := e.retryConflicts(ctx, func(attempt int) (bool, error) {
		err := e.composeOnce(ctx, ri, owner, entry, remove)
		if err == nil {
			return true, nil
		}
		if _, ok := err.(*Error); ok {
			return true, err // explained already (a field conflict, not ours)
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) && !uidRefused(err) {
			return true, err
		}
		logEntry(ctx, "composed object changed by another writer: reading it again", owner, entry, "attempt", attempt+1)
		return false, err // someone else wrote in between: read again
	})
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return e
	}
	return objectError(entry, doing, err)
}

// composeOnce writes one composed object from a fresh read: it reads the
// object (readComposed), gathers the contributions this write keeps and
// removes by their verdicts (gatherContributions), composes them with
// this intent's (composedSpec), and writes the result pinned to the
// version read (writeComposed). An error that is a conflict makes the
// caller (compose) read again.
func (e *Engine) composeOnce(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, entry Entry, remove bool) error {
	live, write, err := readComposed(ctx, ri, owner, entry, remove)
	if err != nil || !write {
		return err
	}
	if !remove && live != nil {
		// A Kustomization applies it: composing here would fight Flux
		// (sink_flux.go; the plan refuses it first).
		if c, cerr := e.Clients.Get(entry.Cluster); cerr == nil {
			// A warning (the Kustomization could not be read, or is on
			// another cluster) was the plan's; the write proceeds.
			if ferr, _ := e.fluxApplied(ctx, c.Dynamic, owner, entry, live.GetLabels(), "compose its contribution into"); ferr != nil {
				return ferr
			}
		}
	}
	g, err := gatherContributions(ctx, owner, entry, live, remove)
	if err != nil || !g.write {
		return err
	}
	if !remove {
		g.contributions[owner.Name] = owner.Composition.Contribution.For(entry.Cluster)
	}
	manifest, err := composedSpec(owner, entry, g.contributions)
	if err != nil {
		return err
	}
	if manifest == nil {
		// No contribution is left.
		if live == nil {
			return nil
		}
		if live.GetLabels()[LabelOwnerKind] == "" {
			// Nobody else holds the object: it goes.
			uid, rv := live.GetUID(), live.GetResourceVersion()
			return ri.Delete(ctx, entry.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
		}
		// Its owner (a virtual destination) holds it: written without
		// contributions.
		manifest = map[string]any{"apiVersion": entry.APIVersion, "kind": entry.Kind,
			"metadata": map[string]any{"name": entry.Name, "namespace": entry.Namespace}}
	}
	prefix := owner.Kind + contributionInfix
	kept := 0
	if live != nil {
		kept = keptAnnotations(live, owner.Kind)
	}
	if err := annotationsWithin(entry, prefix, g.contributions, kept); err != nil {
		return err // the plan checks it first (Limits)
	}
	if live != nil && len(g.gone) > 0 {
		if live, err = forgetAndRewrite(ctx, ri, live, prefix, g.gone, owner.composerManager(), manifest); err != nil {
			return err
		}
	}
	labelContributions(manifest, owner, g.contributions, live, remove)
	return e.writeComposed(ctx, ri, owner, entry, live, manifest, g.adopting)
}

// readComposed reads the composed object entry names: nil when it does
// not exist. write is false when there is nothing to do (a release from
// an object that is gone). An object another intent owns (Owned) is
// never created here: made by a composer it would have no owner (issue
// 36), so its absence is an error saying to apply that intent first.
func readComposed(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, entry Entry, remove bool) (live *unstructured.Unstructured, write bool, err error) {
	live, err = ri.Get(ctx, entry.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && isMissingResource(err):
		return nil, false, err
	case apierrors.IsNotFound(err):
		if remove {
			return nil, false, nil
		}
		if owner.Composition.Owned != nil && owner.Composition.Owned(entry.Key()) {
			// Another intent's object, which that intent creates: made
			// here it would have no owner (issue 36).
			return nil, false, &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Applying " + entry.String(),
				Detail: fmt.Sprintf("%s belongs to the intent %s joins (its virtual destination), and it does not exist: that intent is not applied in cluster %s, or was destroyed. "+
					"Nothing was written. Apply the destination first (reference it as mesh_virtual_destination.<name>.hostname so Terraform orders it), or remove this %s.",
					entry, owner, entry.Cluster, strings.ReplaceAll(owner.Kind, "-", " "))}
		}
		return nil, true, nil
	case err != nil:
		return nil, false, err
	}
	return live, true, nil
}

// gathered is what a composed write keeps of the object it read.
type gathered struct {
	// contributions are the other contributions the write keeps, as read
	// (byte for byte), by name.
	contributions map[string]composition.Encoded
	// gone are contributions on the object that this write removes: ours
	// when releasing, and those not to be trusted.
	gone []string
	// adopting is set when the object was not written by the provider
	// and the intent adopts it: what it holds now is nobody's
	// contribution.
	adopting bool
	// write is false when there is nothing to write: a release whose
	// contribution another instance holds now.
	write bool
}

// gatherContributions sorts the contributions on live (nil: none) by
// their one verdict (verdict.go, the plan's too): kept, removed, or an
// error that stops the write. An object the provider did not write is an
// error unless the intent adopts it.
func gatherContributions(ctx context.Context, owner Owner, entry Entry, live *unstructured.Unstructured, remove bool) (gathered, error) {
	contributions := map[string]composition.Encoded{}
	g := gathered{contributions: contributions, write: true}
	if live == nil {
		return g, nil
	}
	if labels := live.GetLabels(); labels[LabelManagedBy] != ManagedByValue {
		if !owner.Adopt || remove {
			return g, &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Applying " + entry.String(),
				Detail: fmt.Sprintf("%s already exists and was not created by terraform-provider-mesh, so the provider leaves it untouched. "+
					"Delete or rename it, or take it over by setting adopt_existing = true on the resource (it is then rewritten to the composition, keeping its identity).", entry)}
		}
		g.adopting = true // what it holds now is nobody's contribution
	}
	// One verdict per contribution (verdict.go), the plan's too, weighed
	// as a publish to an artifact weighs them (weigh).
	w, werr := owner.weigh(ctx, entry, owner.contributionsOn(entry, live), remove)
	if werr != nil {
		return g, werr
	}
	if w.skip {
		return gathered{}, nil
	}
	g.contributions, g.gone = w.contributions, w.gone
	return g, nil
}

// composedSpec is the object the contributions compose to, by the
// intent kind's composer; nil when there is none (no contribution left).
func composedSpec(owner Owner, entry Entry, contributions map[string]composition.Encoded) (map[string]any, error) {
	manifest, err := owner.Composition.Composer.Compose(entry.Key(), composition.Contributions(contributions))
	if err != nil {
		return nil, &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Composing " + entry.String(), Detail: err.Error(), Err: err}
	}
	if len(contributions) == 0 {
		return nil, nil
	}
	return manifest, nil
}

// labelContributions sets the composed manifest's labels and annotations:
// every contribution it holds, as read (byte for byte), labelled with its
// instance as live has it, and this intent's own with its instance.
func labelContributions(manifest map[string]any, owner Owner, contributions map[string]composition.Encoded, live *unstructured.Unstructured, remove bool) {
	prefix := owner.Kind + contributionInfix
	meta := manifest["metadata"].(map[string]any)
	labels := map[string]any{LabelManagedBy: ManagedByValue}
	annotations := map[string]any{}
	for name, c := range contributions {
		labels[prefix+name] = "true"
		if live != nil {
			if id, ok := live.GetLabels()[prefix+name]; ok {
				labels[prefix+name] = id // keep every contributor's instance
			}
		}
		annotations[prefix+name] = c.Raw // as read: byte for byte
	}
	if !remove {
		labels[owner.ContributionKey()] = owner.idValue()
	}
	meta["labels"], meta["annotations"] = labels, annotations
}

// writeComposed writes manifest as the composed object: created first
// when live is nil, then applied by the composer's field manager pinned
// to the version read; then the fields of earlier builds' composers are
// released and fields other managers set in the spec removed
// (restoreComposedSpec).
func (e *Engine) writeComposed(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, entry Entry, live *unstructured.Unstructured, manifest map[string]any, adopting bool) error {
	manager := owner.composerManager()
	meta := manifest["metadata"].(map[string]any)
	forceOurs := e.ForceConflicts
	if live == nil {
		// Create first, so two writers cannot both believe they created
		// it; the loser reads it again and recomposes. The object is
		// created with its whole composed content: Istio's validation
		// refuses a VirtualService without routes or a DestinationRule
		// without host, so there is no empty object to create first.
		// The create records the composer as an updater; the apply
		// below makes it the applier (forced, as it is its own field
		// set), so that drift is read from the composer's applied fields.
		// (What the create holds is removed explicitly when released:
		// forgetContributions.)
		created, err := ri.Create(ctx, &unstructured.Unstructured{Object: manifest}, metav1.CreateOptions{FieldManager: manager})
		if err != nil {
			return err
		}
		live, forceOurs = created, true
	}
	// Pinned to the object read, by version and UID: if another writer
	// deleted it meanwhile (its last contribution released), the apply is
	// a conflict and the compose reads again, rather than creating it anew.
	meta["resourceVersion"] = live.GetResourceVersion()
	meta["uid"] = string(live.GetUID())
	obj := &unstructured.Unstructured{Object: manifest}
	res, err := ri.Apply(ctx, entry.Name, obj, metav1.ApplyOptions{FieldManager: manager, Force: forceOurs})
	if managers, fields := conflictManagers(err); len(managers) > 0 {
		// Our own intents (a virtual destination's fields in its
		// DestinationRule) and plain edits may be taken over; another
		// tool's server-side apply is a conflict the user decides.
		if !adopting && !e.oursOrEdits(live, managers) {
			return conflictError(entry, managers, fields, err)
		}
		res, err = ri.Apply(ctx, entry.Name, obj, metav1.ApplyOptions{FieldManager: manager, Force: true})
	}
	if err != nil || res == nil {
		return err
	}
	// Composers of earlier builds wrote under <base>/<kind>-composer:
	// their fields are released, so that what a contribution no longer
	// asks for does not stay behind under their name.
	if res, err = releaseFormerComposers(ctx, ri, res, formerComposers(owner, manager, live, res), entry); err != nil {
		return err
	}
	return e.restoreComposedSpec(ctx, ri, owner, entry, res, obj)
}

// restoreComposedSpec sets the composed spec back to exactly the
// composition (obj) when other managers set fields in it (drift.go). Both
// writes are pinned to the version the previous one left: a contribution
// written in between makes them a conflict, and the compose starts again
// from a fresh read instead of applying a composition without it.
func (e *Engine) restoreComposedSpec(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, entry Entry, res, obj *unstructured.Unstructured) error {
	fs, ferr := e.foreignComposedFields(res)
	if ferr != nil || len(fs) == 0 {
		return nil // managed fields that do not parse: nothing to restore from them, as before the split
	}
	manager := owner.composerManager()
	logEntry(ctx, "restoring the composed spec: fields set by other managers are removed", owner, entry, "foreign", describeForeign(fs))
	patched, err := removeFields(ctx, ri, res, fs, manager)
	if err != nil {
		return err
	}
	obj.SetResourceVersion(patched.GetResourceVersion())
	obj.SetUID(patched.GetUID())
	_, err = ri.Apply(ctx, entry.Name, obj, metav1.ApplyOptions{FieldManager: manager, Force: true})
	return err
}

// formerComposers are the composers of owner's kind other than manager
// (of another field_manager base: an earlier build's) that applied to
// the objects, in order.
func formerComposers(owner Owner, manager string, objs ...*unstructured.Unstructured) []string {
	var out []string
	seen := map[string]bool{}
	for _, o := range objs {
		for _, mf := range o.GetManagedFields() {
			if mf.Operation == metav1.ManagedFieldsOperationApply && mf.Manager != manager && composerKindOf(mf.Manager) == owner.Kind && !seen[mf.Manager] {
				seen[mf.Manager] = true
				out = append(out, mf.Manager)
			}
		}
	}
	return out
}

// releaseFormerComposers applies an empty configuration as each of
// formers, pinned to live's UID and resourceVersion (a conflict makes the
// compose start again): the API server drops the fields only it held and
// its entry. It returns the object as left.
func releaseFormerComposers(ctx context.Context, ri dynamic.ResourceInterface, live *unstructured.Unstructured, formers []string, entry Entry) (*unstructured.Unstructured, error) {
	for _, m := range formers {
		empty := withUID(map[string]any{"apiVersion": entry.APIVersion, "kind": entry.Kind,
			"metadata": map[string]any{"name": entry.Name, "namespace": entry.Namespace}}, live.GetUID())
		empty.SetResourceVersion(live.GetResourceVersion())
		res, err := ri.Apply(ctx, entry.Name, empty, metav1.ApplyOptions{FieldManager: m})
		if err != nil {
			return nil, err
		}
		logEntry(ctx, "released the fields of a composer of another field_manager base", Owner{Kind: composerKindOf(m)}, entry, "former_manager", m)
		live = res
	}
	return live, nil
}

// forgetAndRewrite removes the contributions of names from live (their
// annotations and labels: a composer's apply alone would not remove a
// field another manager, or the create that made the object, also holds)
// and rewrites the spec to manifest's composition of the others, in one
// JSON patch pinned to live's UID and resourceVersion. The composer's
// apply that follows then records the same content as its own. So an
// interrupt between the two leaves a consistent object: the composition
// of exactly the contributions it still records.
func forgetAndRewrite(ctx context.Context, ri dynamic.ResourceInterface, live *unstructured.Unstructured, prefix string, names []string, manager string, manifest map[string]any) (*unstructured.Unstructured, error) {
	ops := pinOps(live)
	esc := strings.NewReplacer("~", "~0", "/", "~1")
	for _, n := range names {
		if _, ok := live.GetAnnotations()[prefix+n]; ok {
			ops = append(ops, map[string]any{"op": "remove", "path": "/metadata/annotations/" + esc.Replace(prefix+n)})
		}
		if _, ok := live.GetLabels()[prefix+n]; ok {
			ops = append(ops, map[string]any{"op": "remove", "path": "/metadata/labels/" + esc.Replace(prefix+n)})
		}
	}
	if len(ops) == len(pinOps(live)) {
		return live, nil
	}
	spec, err := rewrittenSpec(live, manifest)
	if err != nil {
		return nil, err
	}
	if spec != nil {
		ops = append(ops, map[string]any{"op": "add", "path": "/spec", "value": spec})
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return pinnedPatch(ctx, ri, live, patch, manager)
}

// rewrittenSpec is what the composer's apply of manifest makes of live's
// spec: the fields only composers hold are dropped (the composition of
// before), the fields others hold stay (a virtual destination's own), and
// manifest's spec is merged over them. Nil when live has no spec and
// manifest none either.
func rewrittenSpec(live *unstructured.Unstructured, manifest map[string]any) (map[string]any, error) {
	cur := live.DeepCopy()
	composers, others := &fieldpath.Set{}, &fieldpath.Set{}
	for _, mf := range cur.GetManagedFields() {
		if mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		set, err := fieldsOf(mf)
		if err != nil {
			return nil, err
		}
		if composerKindOf(mf.Manager) != "" {
			composers = composers.Union(set)
		} else {
			others = others.Union(set)
		}
	}
	only := composers.Difference(others)
	var paths []fieldpath.Path
	only.Iterate(func(p fieldpath.Path) {
		if len(p) >= 2 && p[0].FieldName != nil && *p[0].FieldName == "spec" && !hasOwnedAncestor(only, p) {
			paths = append(paths, p.Copy())
		}
	})
	// Back to front, as removeFields removes them.
	var pointers []string
	for _, p := range paths {
		if ptr, ok := pointerOf(cur.Object, p); ok {
			pointers = append(pointers, ptr)
		}
	}
	for _, ptr := range backToFront(pointers) {
		removeAt(cur.Object, ptr)
	}
	spec, _ := cur.Object["spec"].(map[string]any)
	want, _ := manifest["spec"].(map[string]any)
	if spec == nil && want == nil {
		return nil, nil
	}
	return mergeMaps(spec, want), nil
}

// removeAt removes the value at a JSON pointer (as pointerOf makes them)
// from obj, in memory; a list keeps its other elements in order.
func removeAt(obj map[string]any, ptr string) {
	unesc := strings.NewReplacer("~1", "/", "~0", "~")
	without(obj, strings.Split(strings.TrimPrefix(ptr, "/"), "/"), unesc)
}

// without is node with the value at path parts removed (node itself, or
// a shorter list), or node unchanged when the path does not lead there.
func without(node any, parts []string, unesc *strings.Replacer) any {
	switch n := node.(type) {
	case map[string]any:
		k := unesc.Replace(parts[0])
		if len(parts) == 1 {
			delete(n, k)
		} else if child, ok := n[k]; ok {
			n[k] = without(child, parts[1:], unesc)
		}
		return n
	case []any:
		i, err := strconv.Atoi(parts[0])
		if err != nil || i < 0 || i >= len(n) {
			return n
		}
		if len(parts) == 1 {
			return append(append([]any{}, n[:i]...), n[i+1:]...)
		}
		n[i] = without(n[i], parts[1:], unesc)
		return n
	}
	return node
}

// mergeMaps is base with over merged in: maps merge, anything else (lists
// included: Istio's lists are atomic) is replaced.
func mergeMaps(base, over map[string]any) map[string]any {
	out := make(map[string]any, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for k, v := range over {
		bm, bok := out[k].(map[string]any)
		om, ook := v.(map[string]any)
		if bok && ook {
			out[k] = mergeMaps(bm, om)
			continue
		}
		out[k] = v
	}
	return out
}

// WorkspaceName shows a workspace identity in messages.
func WorkspaceName(ws string) string {
	if ws == "" {
		return "(none recorded: its provider's workspace was not set, or an earlier build wrote it)"
	}
	return fmt.Sprintf("%q", ws)
}

// oursOrEdits reports whether every manager is one of this provider's
// (this base's intents, a composer of any base, or the intent that owns
// the object, whatever its base) or only ever updated the object (kubectl
// edit, patch).
func (e *Engine) oursOrEdits(live *unstructured.Unstructured, managers []string) bool {
	base := e.managerBase()
	applied := map[string]bool{}
	kind, name := live.GetLabels()[LabelOwnerKind], live.GetLabels()[LabelOwnerName]
	for _, mf := range live.GetManagedFields() {
		if mf.Operation == metav1.ManagedFieldsOperationApply {
			applied[mf.Manager] = true
		}
	}
	for _, m := range managers {
		ours := strings.HasPrefix(m, base+"/") || composerKindOf(m) != "" || intentManager(m, kind, name)
		if !ours && applied[m] {
			return false
		}
	}
	return true
}

// contributionDigest is the digest of an intent's part in a composed
// object, in its canonical form (Composer.Canonical): what it asked for,
// not the composition of everyone's.
func contributionDigest(canonical string) (string, error) {
	return digestOf(map[string]any{"contribution": canonical})
}

// partDigest is the digest of raw, o's contribution as stored on an
// object, in the canonical form o's composer gives it.
func (o Owner) partDigest(raw string) (string, error) {
	if o.Composition != nil && o.Composition.Composer != nil {
		raw = o.Composition.Composer.Canonical(raw)
	}
	return contributionDigest(raw)
}

// digestDrifted marks a composed object whose composed fields were changed
// by someone else: no plan produces it, so the plan rewrites the object.
const digestDrifted = "drifted"

// Refresh reports a composed object whose composition was edited by
// someone else (a kubectl edit of a route's timeout) as drifted: the
// fields the composer owns differ from what composing its contributions
// gives. It reads the object from the listing (listcache.go).

// composedState is what that check needs of a live composed object, for
// one kind of intent: the contributions and the composer's fields.
type composedState struct {
	// contributions are the annotations, ids the instances their labels
	// record (a label without its annotation included), by name.
	contributions, ids map[string]string
	// have is the digest of the composer's spec fields; unreadable is set
	// when its managed fields cannot be read, unheld when nobody holds
	// the composition any more.
	have               string
	unreadable, unheld bool
	// foreign are spec fields managers outside the provider set.
	foreign []foreignField
	// kept is the size of the object's other annotations (keys and
	// values), which a composer's write keeps (keptAnnotations).
	kept int
}

func (e *Engine) composedStateOf(live *unstructured.Unstructured, kind string) composedState {
	st := composedState{}
	st.contributions, st.ids = contributionsOf(live, kind)
	st.kept = keptAnnotations(live, kind)
	st.foreign, _ = e.foreignComposedFields(live)
	// The composition is read by content: every field outside metadata
	// that any manager holds, whatever its name, except what the intent
	// owning the object alone holds (its own check reads that). Nobody
	// applying as a composer means nobody holds the composition any more.
	held := false
	for _, mf := range live.GetManagedFields() {
		held = held || (mf.Operation == metav1.ManagedFieldsOperationApply && composerKindOf(mf.Manager) == kind)
	}
	content, _, err := contentSet(live, "", func(mf metav1.ManagedFieldsEntry) bool { return ownerEntry(live, mf) })
	switch {
	case err != nil:
		st.unreadable = true
	case !held:
		st.unheld = true
	default:
		got, _ := extract(live.Object, content).(map[string]any)
		st.have, _ = digestOf(map[string]any{"spec": got["spec"]})
	}
	return st
}

func (e *Engine) composedDriftedFrom(owner Owner, entry Entry, st composedState) bool {
	// What the next writer composes: by the verdicts it will reach
	// (verdict.go), those of any name but this one's, which it writes.
	trusted := map[string]composition.Contribution{}
	for _, v := range Judge(Owner{Kind: owner.Kind, Composition: owner.Composition}, owner.liveContributions(entry, st)) {
		switch v.Standing {
		case Unreadable:
			return false // what it composes to is the newer writer's to say
		case Untrusted:
			return true // the next writer removes it
		default:
			trusted[v.Name] = v.Contribution
		}
	}
	manifest, err := owner.Composition.Composer.Compose(entry.Key(), trusted)
	if err != nil || manifest == nil {
		return false // composing fails or yields nothing: the next apply says so
	}
	if st.unreadable || st.unheld {
		return st.unheld // nobody holds the composition any more
	}
	want, _ := digestOf(map[string]any{"spec": manifest["spec"]})
	return want != st.have
}

// weighed is what one write of a composed object makes of the
// contributions found on it (verdict.go): those it composes besides its
// own, and those it removes; skip when the write has nothing to do (the
// name is another instance's now, and this write releases).
type weighed struct {
	contributions map[string]composition.Encoded
	gone          []string
	skip          bool
}

// weigh applies owner's verdicts to the contributions found on entry, for
// a write that sets (remove false) or releases (remove true) owner's
// contribution. Every writer of a composed object weighs the same way:
// server-side apply to a cluster (composeOnce) and a publish to an
// artifact (composeInArtifact).
func (owner Owner) weigh(ctx context.Context, entry Entry, found []LiveContribution, remove bool) (weighed, *Error) {
	w := weighed{contributions: map[string]composition.Encoded{}}
	for _, v := range Judge(owner, found) {
		switch v.Standing {
		case Mine:
			if remove {
				w.gone = append(w.gone, v.Name)
			}
		case Held:
			if remove {
				// Another instance of this state's contributes now
				// (create_before_destroy made it first): only this
				// instance's contribution is this release's to remove.
				return weighed{skip: true}, nil
			}
			logEntry(ctx, "replacing this state's previous instance of the same name", owner, entry, "leftover_instance", v.ID)
		case Theirs, Orphan:
			w.contributions[v.Name] = composition.Encoded{Contribution: v.Contribution, Raw: v.Raw}
		case Taken:
			if remove {
				// Another instance of the name contributes now (this
				// one was replaced): nothing of ours is left to release.
				return weighed{skip: true}, nil
			}
			return weighed{}, v.err(entry)
		case Undecided:
			if remove {
				// An earlier build's contribution of this name, which
				// recorded no instance: this intent's, released.
				w.gone = append(w.gone, v.Name)
				continue
			}
			return weighed{}, v.err(entry)
		case Unreadable:
			// Written by a newer provider: kept as it is, and the
			// object is not written.
			return weighed{}, v.err(entry)
		case Untrusted:
			if v.Name == owner.Name && !remove {
				continue // replaced by this intent's
			}
			logEntry(ctx, "contribution not composed and removed: "+v.Untrusted, owner, entry, "annotation", v.Annotation(owner.Kind))
			w.gone = append(w.gone, v.Name)
		}
	}
	return w, nil
}
