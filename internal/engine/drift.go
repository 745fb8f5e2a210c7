package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Tamper-evident drift. The digest covers the fields the provider's field
// manager owns, so a field another manager adds to an object the provider
// wrote (kubectl edit adding rules to a deny-all AuthorizationPolicy, a
// selector on a mesh-wide PeerAuthentication) would not show. Every field
// of spec is ours to decide: one that another manager set is drift,
// reported with the manager and the field path, and apply removes it.
// Labels and annotations others add (GitOps tracking, kubectl) are not
// spec and stay; server-side defaulting has no manager and is not drift.

// foreignField is one spec field another manager set.
type foreignField struct {
	Manager string
	Field   string
	path    fieldpath.Path
}

// foreignSpecFields lists the spec fields of live that no server-side
// apply of the provider's own holds: manager (ours), an intent's former
// managers (field_manager changed; the next apply releases them), and the
// composers of kinds that contribute to live (their composition is
// checked on its own). Only applies count: an update (kubectl edit) that
// carries one of these names is as foreign as any other.
func (e *Engine) foreignSpecFields(live *unstructured.Unstructured, owner Owner, manager string) ([]foreignField, error) {
	kinds := contributingKinds(live, e.Composers)
	return foreignFields(live, func(mf metav1.ManagedFieldsEntry) bool {
		if mf.Operation != metav1.ManagedFieldsOperationApply {
			return false
		}
		return mf.Manager == manager || intentManager(mf.Manager, owner.Kind, owner.Name) || composerEntry(live, kinds, mf)
	})
}

// foreignComposedFields is the same for a composed object: the composers'
// applies, and the one of the intent that owns the object (a virtual
// destination's own DestinationRule), whatever their field_manager base.
func (e *Engine) foreignComposedFields(live *unstructured.Unstructured) ([]foreignField, error) {
	kinds := contributingKinds(live, e.Composers)
	return foreignFields(live, func(mf metav1.ManagedFieldsEntry) bool {
		return composerEntry(live, kinds, mf) || ownerEntry(live, mf)
	})
}

func foreignFields(live *unstructured.Unstructured, ourManager func(metav1.ManagedFieldsEntry) bool) ([]foreignField, error) {
	// What any of the provider's managers holds is not foreign, even if
	// another manager holds it too (the same value applied twice).
	ours := &fieldpath.Set{}
	for _, mf := range live.GetManagedFields() {
		if !ourManager(mf) || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		set, err := fieldsOf(mf)
		if err != nil {
			return nil, err
		}
		ours = ours.Union(set)
	}
	var out []foreignField
	for _, mf := range live.GetManagedFields() {
		if ourManager(mf) || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		set, err := fieldsOf(mf)
		if err != nil {
			return nil, err
		}
		set = set.Difference(ours)
		// The outermost fields they own: a map they created goes whole.
		var paths []fieldpath.Path
		set.Iterate(func(p fieldpath.Path) { paths = append(paths, p.Copy()) })
		for _, p := range paths {
			if len(p) < 2 || p[0].FieldName == nil || *p[0].FieldName != "spec" || hasOwnedAncestor(set, p) {
				continue
			}
			out = append(out, foreignField{Manager: mf.Manager, Field: p.String(), path: p})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Manager != out[j].Manager {
			return out[i].Manager < out[j].Manager
		}
		return out[i].Field < out[j].Field
	})
	return out, nil
}

func describeForeign(fs []foreignField) string {
	by := map[string][]string{}
	var managers []string
	for _, f := range fs {
		if by[f.Manager] == nil {
			managers = append(managers, f.Manager)
		}
		by[f.Manager] = append(by[f.Manager], f.Field)
	}
	var parts []string
	for _, m := range managers {
		parts = append(parts, fmt.Sprintf("%s set by field manager %q", strings.Join(by[m], ", "), m))
	}
	return strings.Join(parts, "; ")
}

// ErrDrift marks the warnings refresh gives for drifted objects.
var ErrDrift = errors.New("changed outside Terraform")

// driftNote is the warning refresh gives for an object with foreign fields.
func driftNote(entry Entry, fs []foreignField) *Error {
	return &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Drift in " + entry.String(), Err: ErrDrift,
		Detail: fmt.Sprintf("%s was changed outside Terraform: %s. The next apply restores the object as declared, removing these fields.", entry, describeForeign(fs))}
}

func hasOwnedAncestor(set *fieldpath.Set, p fieldpath.Path) bool {
	for i := 1; i < len(p); i++ {
		if set.Has(p[:i]) {
			return true
		}
	}
	return false
}

// restoreSpec removes the fields other managers set in the spec of an
// object we just applied (a JSON patch of those fields alone, guarded by
// resourceVersion, so the provider needs no update verb and the fields of
// its other managers stay), then applies again, so that the declared value
// of any field they had changed is back. That apply is pinned to the UID
// and resourceVersion the patch left: a composer that wrote in between
// (the object may be a virtual destination's DestinationRule, shared)
// makes it a conflict, and the restore starts again from a fresh read.
func (e *Engine) restoreSpec(ctx context.Context, ri *recordingApplies, owner Owner, d Desired, manager string) *Error {
	live := ri.last
	var failed *Error
	err := e.retryConflicts(ctx, func(attempt int) (bool, error) {
		if attempt > 0 {
			var err error
			if live, err = ri.ResourceInterface.Get(ctx, d.Name, metav1.GetOptions{}); err != nil {
				failed = objectError(d.Entry, "Restoring", err)
				return true, nil
			}
			if live.GetUID() != ri.last.GetUID() {
				failed = objectError(d.Entry, "Restoring", fmt.Errorf("%w: the object was replaced while it was being restored; apply again", errNotOurs))
				return true, nil
			}
		}
		fs, err := e.foreignSpecFields(live, owner, manager)
		if err != nil || len(fs) == 0 {
			return true, nil
		}
		logEntry(ctx, "restoring the declared spec: fields set by other managers are removed", owner, d.Entry, "foreign", describeForeign(fs))
		patched, err := removeFields(ctx, ri.ResourceInterface, live, fs, manager)
		if err == nil {
			obj := withUID(d.Manifest, live.GetUID())
			obj.SetResourceVersion(patched.GetResourceVersion())
			_, err = ri.ResourceInterface.Apply(ctx, d.Name, obj, metav1.ApplyOptions{FieldManager: manager, Force: true})
		}
		switch {
		case err == nil:
			return true, nil
		case !apierrors.IsConflict(err):
			failed = objectError(d.Entry, "Restoring", fmt.Errorf("removing %s: %w", describeForeign(fs), err))
			return true, nil
		}
		return false, err // changed in between: read again
	})
	if failed != nil {
		return failed
	}
	if err != nil {
		return objectError(d.Entry, "Restoring", err)
	}
	return nil
}

// removeFields removes the given fields from live with one JSON patch
// that holds only if live is still the object's version (UID and
// resourceVersion), and returns the object it leaves (live itself when
// there is nothing to remove).
func removeFields(ctx context.Context, ri dynamic.ResourceInterface, live *unstructured.Unstructured, fs []foreignField, manager string) (*unstructured.Unstructured, error) {
	ops := pinOps(live)
	var pointers []string
	for _, f := range fs {
		ptr, ok := pointerOf(live.Object, f.path)
		if !ok {
			continue // gone already, or not addressable: the apply below sets ours
		}
		pointers = append(pointers, ptr)
	}
	for _, p := range backToFront(pointers) {
		ops = append(ops, map[string]any{"op": "remove", "path": p})
	}
	if len(ops) == len(pinOps(live)) {
		return live, nil
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return pinnedPatch(ctx, ri, live, patch, manager)
}

// backToFront orders JSON pointers for removal one after another, each
// once: the last element of a list first and, within one element, its
// fields before the element itself, so that no removal shifts the index
// of a pointer still to come. List indices compare as numbers: as strings
// "/9" sorts after "/11", and removing the tenth element first would move
// the twelfth to where the eleventh was, which would go instead.
func backToFront(pointers []string) []string {
	sort.Slice(pointers, func(i, j int) bool { return removedBefore(pointers[i], pointers[j]) })
	return slices.Compact(pointers)
}

// removedBefore tells whether pointer a is removed before pointer b: at
// their first different segment a's is the greater (numerically when both
// are list indices), or b leads to a (a is inside it).
func removedBefore(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for k := 0; k < len(as) && k < len(bs); k++ {
		if as[k] == bs[k] {
			continue
		}
		an, aerr := strconv.Atoi(as[k])
		bn, berr := strconv.Atoi(bs[k])
		if aerr == nil && berr == nil {
			return an > bn
		}
		return as[k] > bs[k]
	}
	return len(as) > len(bs)
}

// pinnedPatch sends a JSON patch that starts with pinOps. The API server
// answers a failed test with 422: that is the object having changed, a
// conflict, and the writer reads it again.
func pinnedPatch(ctx context.Context, ri dynamic.ResourceInterface, live *unstructured.Unstructured, patch []byte, manager string) (*unstructured.Unstructured, error) {
	out, err := ri.Patch(ctx, live.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: manager})
	if apierrors.IsInvalid(err) {
		gvk := live.GroupVersionKind()
		return nil, apierrors.NewConflict(schema.GroupResource{Group: gvk.Group, Resource: gvk.Kind}, live.GetName(), fmt.Errorf("it changed since it was read: %w", err))
	}
	return out, err
}

// pinOps are the JSON patch tests that pin a patch to live's UID and
// resourceVersion.
func pinOps(live *unstructured.Unstructured) []map[string]any {
	return []map[string]any{
		{"op": "test", "path": "/metadata/uid", "value": string(live.GetUID())},
		{"op": "test", "path": "/metadata/resourceVersion", "value": live.GetResourceVersion()},
	}
}

// pointerOf turns a managed-fields path into a JSON pointer into obj.
func pointerOf(obj map[string]any, p fieldpath.Path) (string, bool) {
	var b strings.Builder
	var cur any = obj
	for _, pe := range p {
		switch {
		case pe.FieldName != nil:
			m, ok := cur.(map[string]any)
			if !ok {
				return "", false
			}
			if cur, ok = m[*pe.FieldName]; !ok {
				return "", false
			}
			b.WriteString("/" + strings.NewReplacer("~", "~0", "/", "~1").Replace(*pe.FieldName))
		default:
			l, ok := cur.([]any)
			if !ok {
				return "", false
			}
			found := -1
			for i, el := range l {
				if elementMatches(pe, i, el) {
					found = i
					break
				}
			}
			if found < 0 {
				return "", false
			}
			cur = l[found]
			fmt.Fprintf(&b, "/%d", found)
		}
	}
	return b.String(), true
}
