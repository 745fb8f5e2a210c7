package engine

import (
	"crypto/sha256"
	"encoding/hex"

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
