package engine

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"

	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// Field managers of shared objects (docs/design.md, "Shared objects:
// pinning, field managers, drift by content").
//
// Every composer of a kind writes under one field manager name,
// terraform-provider-mesh/<kind>-composer, whatever the provider's
// field_manager base: states with different bases, or one state before
// and after a field_manager change, then write one field set instead of
// conflicting, and a field a removed contribution set is never left
// behind under a second composer's name. Composers of earlier builds
// (<base>/<kind>-composer) are recognized as composers and released.
//
// Manager names are chosen by any client, so they never decide drift:
// drift is decided by content (contentDigest, composedStateOf). They only
// decide which managers an apply may take fields over from, and which
// fields a restore leaves in place; there only server-side applies
// (operation Apply) count, never an update that merely carries the name.

// fieldsOf reads the field set of a managed-fields entry.
func fieldsOf(mf metav1.ManagedFieldsEntry) (*fieldpath.Set, error) {
	set := &fieldpath.Set{}
	if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.GetRawBytes())); err != nil {
		return nil, fmt.Errorf("reading managed fields of %s: %w", mf.Manager, err)
	}
	return set, nil
}

// intentManager reports whether m is the field manager of the intent kind
// and name, under any field_manager base (Owner.FieldManager).
func intentManager(m, kind, name string) bool {
	return kind != "" && name != "" && strings.HasSuffix(m, "/"+kind+"."+name)
}

// composerManager is the field manager of every composer of o's kind.
func (o Owner) composerManager() string { return ManagedByValue + composerSuffix(o.Kind) }

// composerKindOf returns the kind whose composer manager m names (any
// base), or "".
func composerKindOf(m string) string {
	i := strings.LastIndex(m, "/")
	if i < 0 || !strings.HasSuffix(m, "-composer") {
		return ""
	}
	return strings.TrimSuffix(m[i+1:], "-composer")
}

// contributingKinds are the kinds of intents that contribute to live: a
// composed kind (internal/intentkind) that writes objects of live's kind,
// with a contribution annotation and its label on live, the annotation
// one its composer (composers, by kind) decodes and composes into an
// object of live's identity. Only on such an
// object are a composer's fields the composition's (issue 36, item 3): a
// composer's name and a contribution label put onto another intent's own
// object (a mesh_cluster's deny-all policy) hide nothing.
func contributingKinds(live *unstructured.Unstructured, composers map[string]composition.Composer) map[string]bool {
	out := map[string]bool{}
	gvk := live.GroupVersionKind()
	for k := range live.GetLabels() {
		i := strings.Index(k, contributionInfix)
		if i <= 0 || out[k[:i]] {
			continue
		}
		raw, ok := live.GetAnnotations()[k]
		if !ok {
			continue
		}
		if ik, ok := intentkind.ByOwner(k[:i]); ok && ik.Composed && slices.Contains(ik.Writes, gvk) && composesInto(composers[k[:i]], live, k[i+len(contributionInfix):], raw) {
			out[k[:i]] = true
		}
	}
	return out
}

// composesInto reports whether raw, the contribution named name on live,
// decodes (as that name's) and composes into an object of live's
// identity, in some cluster: a made-up annotation, or a real one put onto
// an object its policy does not write, honours no composer (issue 36).
func composesInto(composer composition.Composer, live *unstructured.Unstructured, name, raw string) bool {
	if composer == nil {
		return false
	}
	c, err := composer.Decode(raw)
	if err != nil || c == nil || (c.Name() != "" && c.Name() != name) {
		return false
	}
	gvk := live.GroupVersionKind()
	return composer.Targets(translate.Key{APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: live.GetNamespace(), Name: live.GetName()}, c)
}

// composerEntry reports whether mf is a composer's server-side apply of a
// kind that contributes to live.
func composerEntry(live *unstructured.Unstructured, kinds map[string]bool, mf metav1.ManagedFieldsEntry) bool {
	k := composerKindOf(mf.Manager)
	return mf.Operation == metav1.ManagedFieldsOperationApply && k != "" && kinds[k]
}

// ownerEntry reports whether mf is a server-side apply by the field
// manager (any base) of the intent whose owner labels live carries.
func ownerEntry(live *unstructured.Unstructured, mf metav1.ManagedFieldsEntry) bool {
	return mf.Operation == metav1.ManagedFieldsOperationApply && intentManager(mf.Manager, live.GetLabels()[LabelOwnerKind], live.GetLabels()[LabelOwnerName])
}

// contentSet is the set of fields that make up the content of live for
// one writer: the fields it applied itself (mine, its metadata included),
// and every field outside metadata that any manager holds, except those
// held only by entries skip leaves to another writer's own check. Fields
// nobody holds (server defaults) and others' labels and annotations are
// not content.
func contentSet(live *unstructured.Unstructured, mine string, skip func(metav1.ManagedFieldsEntry) bool) (set *fieldpath.Set, mineApplied bool, err error) {
	out := &fieldpath.Set{}
	var others []*fieldpath.Set
	for _, mf := range live.GetManagedFields() {
		if mf.Subresource != "" || mf.FieldsV1 == nil {
			continue
		}
		own := mf.Manager == mine && mf.Operation == metav1.ManagedFieldsOperationApply
		if !own && skip != nil && skip(mf) {
			continue
		}
		set, err := fieldsOf(mf)
		if err != nil {
			return nil, false, err
		}
		if own {
			mineApplied = true
			out = out.Union(set)
		} else {
			others = append(others, set)
		}
	}
	// Others count within the content the intent writes (spec, data):
	// never metadata or status, nor a field of the object's own the
	// intent does not set (a ConfigMap made immutable).
	var content []string
	top := func(pe fieldpath.PathElement) {
		if pe.FieldName != nil {
			if n := *pe.FieldName; n != "metadata" && n != "status" && !slices.Contains(content, n) {
				content = append(content, n)
			}
		}
	}
	out.Children.Iterate(top)
	out.Members.Iterate(top)
	for _, set := range others {
		if mine == "" {
			// No intent's own fields to bound them (a composed object,
			// read as a whole): everything outside metadata and status.
			out = out.Union(withoutTop(set, "metadata", "status"))
			continue
		}
		out = out.Union(onlyTop(set, content))
	}
	return out, mineApplied, nil
}

// onlyTop is set within the top-level fields names.
func onlyTop(set *fieldpath.Set, names []string) *fieldpath.Set {
	keep := &fieldpath.Set{}
	for _, n := range names {
		n := n
		pe := fieldpath.PathElement{FieldName: &n}
		if child, ok := set.Children.Get(pe); ok {
			child.Iterate(func(p fieldpath.Path) { keep.Insert(append(fieldpath.Path{pe}, p...)) })
		}
		if set.Members.Has(pe) {
			keep.Insert(fieldpath.Path{pe})
		}
	}
	return keep
}

// withoutTop is set without the top-level fields names.
func withoutTop(set *fieldpath.Set, names ...string) *fieldpath.Set {
	return set.Difference(onlyTop(set, names))
}

// contentDigest digests live as the intent whose field manager is manager
// would see it: its own applied fields and everything any other manager
// set outside metadata, except what a composer of a contributing kind
// alone holds (the composition's own check reads that).
func contentDigest(live *unstructured.Unstructured, manager string) (string, error) {
	return contentDigestOf(live, manager, nil)
}

// contentDigestOf is contentDigest with the composers that tell which
// contributions compose into live (Engine.Composers).
func contentDigestOf(live *unstructured.Unstructured, manager string, composers map[string]composition.Composer) (string, error) {
	kinds := contributingKinds(live, composers)
	set, owned, err := contentSet(live, manager, func(mf metav1.ManagedFieldsEntry) bool { return composerEntry(live, kinds, mf) })
	if err != nil {
		return "", err
	}
	if !owned {
		// We own nothing any more: someone took every field over.
		return digestOf(map[string]any{"ownedFields": "none"})
	}
	u, ok := extract(live.Object, set).(map[string]any)
	if !ok {
		return "", fmt.Errorf("reading the live object: unexpected shape")
	}
	return digestOf(withoutIdentity(u))
}

// composerSuffix ends the field manager of every composer of kind,
// whatever the field_manager base of the writer.
func composerSuffix(kind string) string { return "/" + kind + "-composer" }
