package engine

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/structured-merge-diff/v6/value"
)

// digestLen is how many hex characters of the SHA-256 a digest keeps: 64
// bits tell any two versions of one object apart and keep state small.
const digestLen = 16

// desiredDigest digests what we send: the manifest without its identity
// (apiVersion, kind, name, namespace), which the inventory entry holds.
func desiredDigest(manifest map[string]any) (string, error) {
	body := withoutIdentity(manifest)
	return digestOf(body)
}

func withoutIdentity(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k == "apiVersion" || k == "kind" {
			continue
		}
		out[k] = v
	}
	if meta, ok := m["metadata"].(map[string]any); ok {
		rest := make(map[string]any, len(meta))
		for k, v := range meta {
			if k != "name" && k != "namespace" {
				rest[k] = v
			}
		}
		// The instance ID is identity too, and unknown while planning a
		// create: it must not make the digest unknown.
		if labels, ok := rest["labels"].(map[string]any); ok {
			rest["labels"], _ = withoutKey(labels, LabelOwnerID)
		}
		// The kept configuration (for import) is not intent: written
		// differently, it translates to the same objects.
		if annotations, ok := rest["annotations"].(map[string]any); ok {
			if trimmed, had := withoutKey(annotations, AnnotationConfig); had && len(trimmed) == 0 {
				delete(rest, "annotations")
			} else {
				rest["annotations"] = trimmed
			}
		}
		if len(rest) == 0 {
			delete(out, "metadata")
		} else {
			out["metadata"] = rest
		}
	}
	return out
}

// withoutKey returns m without key (m itself when it has no such key), and
// whether it had it.
func withoutKey(m map[string]any, key string) (map[string]any, bool) {
	if _, has := m[key]; !has {
		return m, false
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out, true
}

// digestOf hashes the canonical JSON of v (encoding/json sorts map keys).
func digestOf(v any) (string, error) {
	raw, err := canonicalJSON(v)
	if err != nil {
		return "", err
	}
	return digestOfJSON(raw), nil
}

func digestOfJSON(raw []byte) string {
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])[:digestLen]
}

// extract returns the part of v that the field set covers. It follows the
// set's own path elements, so list elements selected by key (list-type map
// in a CRD schema, such as a ServiceEntry's ports) or value are taken one
// by one: another manager's element, or a field it added inside ours, is
// not ours and stays out. A member without children is taken whole.
func extract(v any, set *fieldpath.Set) any {
	switch node := v.(type) {
	case map[string]any:
		out := map[string]any{}
		set.Members.Iterate(func(pe fieldpath.PathElement) {
			if pe.FieldName != nil {
				if val, ok := node[*pe.FieldName]; ok {
					out[*pe.FieldName] = val
				}
			}
		})
		set.Children.Iterate(func(pe fieldpath.PathElement) {
			if pe.FieldName == nil {
				return
			}
			child, _ := set.Children.Get(pe)
			if val, ok := node[*pe.FieldName]; ok {
				out[*pe.FieldName] = extract(val, child)
			}
		})
		return out
	case []any:
		var out []any
		for i, elem := range node {
			var taken any
			found := false
			set.Members.Iterate(func(pe fieldpath.PathElement) {
				if !found && elementMatches(pe, i, elem) {
					taken, found = elem, true
				}
			})
			set.Children.Iterate(func(pe fieldpath.PathElement) {
				if elementMatches(pe, i, elem) {
					child, _ := set.Children.Get(pe)
					taken, found = extract(elem, child), true
				}
			})
			if found {
				out = append(out, taken)
			}
		}
		return out
	default:
		return v
	}
}

// elementMatches reports whether a list path element selects elem, the
// i-th element of its list.
func elementMatches(pe fieldpath.PathElement, i int, elem any) bool {
	switch {
	case pe.Index != nil:
		return *pe.Index == i
	case pe.Value != nil:
		return value.Equals(*pe.Value, value.NewValueInterface(elem))
	case pe.Key != nil:
		m, ok := elem.(map[string]any)
		if !ok {
			return false
		}
		for _, f := range *pe.Key {
			got, ok := m[f.Name]
			if !ok || !value.Equals(f.Value, value.NewValueInterface(got)) {
				return false
			}
		}
		return true
	}
	return false
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

// contributionsOf are the contribution annotations of kind on live and
// the instances their labels record ("" for none, or an earlier build's
// "true"), by name; a label without an annotation is listed in ids only.
func contributionsOf(live *unstructured.Unstructured, kind string) (raws, ids map[string]string) {
	prefix := kind + contributionInfix
	raws, ids = map[string]string{}, map[string]string{}
	for k, v := range live.GetAnnotations() {
		if name, ok := strings.CutPrefix(k, prefix); ok {
			raws[name] = v
		}
	}
	for k, v := range live.GetLabels() {
		if name, ok := strings.CutPrefix(k, prefix); ok {
			if v == "true" {
				v = ""
			}
			ids[name] = v
		}
	}
	return raws, ids
}

// ComposedObject is what a reading of one composed object holds for one
// intent kind, as the protocols above the engine see it (Shared): the
// listing's composedState, or an artifact's copy.
type ComposedObject struct {
	// Contributions are the annotations, IDs the instances their labels
	// record (a label without its annotation included), by name.
	Contributions, IDs map[string]string
	// Have is the digest of the composition's spec as the object holds
	// it; Unreadable is set when its managed fields cannot be read,
	// Unheld when nobody holds the composition any more.
	Have               string
	Unreadable, Unheld bool
	// Kept is the size of the object's other annotations (keys and
	// values), which a composer's write keeps (keptAnnotations).
	Kept int
}

// Object is st as a ComposedObject.
func (st composedState) Object() ComposedObject {
	return ComposedObject{Contributions: st.contributions, IDs: st.ids, Have: st.have, Unreadable: st.unreadable, Unheld: st.unheld, Kept: st.kept}
}
