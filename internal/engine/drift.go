package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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

// foreignSpecFields lists the spec fields of live that managers outside
// the provider own and manager (ours) does not. The provider's own
// managers are not foreign: the composer of traffic policies shares a
// virtual destination's DestinationRule, and an intent's former managers
// (field_manager changed) are released by the next apply.
func (e *Engine) foreignSpecFields(live *unstructured.Unstructured, owner Owner, manager string) ([]foreignField, error) {
	base := e.managerBase()
	suffix := "/" + owner.Kind + "." + owner.Name
	return foreignFields(live, manager, func(m string) bool {
		return m == manager || strings.HasPrefix(m, base+"/") || strings.HasSuffix(m, suffix)
	})
}

// foreignComposedFields is the same for a composed object.
func (e *Engine) foreignComposedFields(live *unstructured.Unstructured, composer string) ([]foreignField, error) {
	return e.foreignSpecFields(live, Owner{}, composer)
}

func foreignFields(live *unstructured.Unstructured, manager string, ourManager func(string) bool) ([]foreignField, error) {
	// What any of the provider's managers holds is not foreign, even if
	// another manager holds it too (the same value applied twice).
	ours := &fieldpath.Set{}
	for _, mf := range live.GetManagedFields() {
		if !ourManager(mf.Manager) || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			return nil, fmt.Errorf("reading managed fields of %s: %w", mf.Manager, err)
		}
		ours = ours.Union(set)
	}
	var out []foreignField
	for _, mf := range live.GetManagedFields() {
		if ourManager(mf.Manager) || mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			return nil, fmt.Errorf("reading managed fields of %s: %w", mf.Manager, err)
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
// of any field they had changed is back.
func (e *Engine) restoreSpec(ctx context.Context, ri *recordingApplies, owner Owner, d Desired, manager string) *Error {
	live := ri.last
	fs, err := e.foreignSpecFields(live, owner, manager)
	if err != nil || len(fs) == 0 {
		return nil
	}
	logEntry(ctx, "restoring the declared spec: fields set by other managers are removed", owner, d.Entry, "foreign", describeForeign(fs))
	if err := removeFields(ctx, ri.ResourceInterface, live, fs, manager); err != nil {
		return objectError(d.Entry, "Restoring", fmt.Errorf("removing %s: %w", describeForeign(fs), err))
	}
	obj := withUID(d.Manifest, live.GetUID())
	if _, err := ri.ResourceInterface.Apply(ctx, d.Name, obj, metav1.ApplyOptions{FieldManager: manager, Force: true}); err != nil {
		return objectError(d.Entry, "Restoring", err)
	}
	return nil
}

// removeFields removes the given fields from live with one JSON patch.
func removeFields(ctx context.Context, ri dynamic.ResourceInterface, live *unstructured.Unstructured, fs []foreignField, manager string) error {
	ops := []map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": live.GetResourceVersion()}}
	var pointers []string
	for _, f := range fs {
		ptr, ok := pointerOf(live.Object, f.path)
		if !ok {
			continue // gone already, or not addressable: the apply below sets ours
		}
		pointers = append(pointers, ptr)
	}
	// Deepest and last first, so that removing one list element does not
	// shift the index of another.
	sort.Sort(sort.Reverse(sort.StringSlice(pointers)))
	for i, p := range pointers {
		if i > 0 && p == pointers[i-1] {
			continue
		}
		ops = append(ops, map[string]any{"op": "remove", "path": p})
	}
	if len(ops) == 1 {
		return nil
	}
	patch, err := json.Marshal(ops)
	if err != nil {
		return err
	}
	_, err = ri.Patch(ctx, live.GetName(), types.JSONPatchType, patch, metav1.PatchOptions{FieldManager: manager})
	return err
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
