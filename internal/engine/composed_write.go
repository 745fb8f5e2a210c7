package engine

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// The writes of a composed object, whatever composes it (Shared): created
// first when it does not exist, applied by the composer's field manager
// pinned to the version read, the fields of earlier builds' composers
// released, other managers' spec fields removed, and contributions
// forgotten in one pinned patch. These stay in the engine: they are
// server-side apply, not the contributions' protocol.

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
