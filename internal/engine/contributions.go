package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
)

// Which contributions a writer composes. Every writer of a composed object
// republishes the contributions it finds there, so a contribution is
// trusted only when the provider wrote it: its annotation must be held by
// a composer's field manager alone (anything that can edit the object
// could otherwise inject routes every writer would re-publish as its
// own), and the intent's Check must accept it (size, schema, a valid
// intent). An untrusted contribution is never composed: the next writer
// removes it with its label, and its owner's refresh sees it changed.

// composerSuffix ends the field manager of every composer of kind,
// whatever the field_manager base of the writer.
func composerSuffix(kind string) string { return "/" + kind + "-composer" }

// annotationWriters lists the managers holding annotation key of live.
func annotationWriters(live *unstructured.Unstructured, key string) ([]string, error) {
	p := fieldpath.MakePathOrDie("metadata", "annotations", key)
	var out []string
	for _, mf := range live.GetManagedFields() {
		if mf.FieldsV1 == nil || mf.Subresource != "" {
			continue
		}
		set := &fieldpath.Set{}
		if err := set.FromJSON(bytes.NewReader(mf.FieldsV1.Raw)); err != nil {
			return nil, fmt.Errorf("reading managed fields of %s: %w", mf.Manager, err)
		}
		if set.Has(p) {
			out = append(out, mf.Manager)
		}
	}
	return out, nil
}

// handWritten says who other than a composer wrote the contribution
// annotation key, or "" when only composers did.
func handWritten(live *unstructured.Unstructured, kind, key string) string {
	writers, err := annotationWriters(live, key)
	if err != nil {
		return err.Error()
	}
	var others []string
	for _, w := range writers {
		if !strings.HasSuffix(w, composerSuffix(kind)) {
			others = append(others, fmt.Sprintf("field manager %q", w))
		}
	}
	if len(writers) == 0 {
		others = append(others, "no field manager")
	}
	if len(others) == 0 {
		return ""
	}
	return "it was written by " + strings.Join(others, " and ") + ", not by terraform-provider-mesh"
}

// untrusted says why a contribution found on live must not be composed,
// or "" when it may.
func (o Owner) untrusted(live *unstructured.Unstructured, key, raw string) string {
	if why := handWritten(live, o.Kind, key); why != "" {
		return why
	}
	if o.Composition != nil && o.Composition.Check != nil {
		if _, err := o.Composition.Check(raw); err != nil {
			return err.Error()
		}
	}
	return ""
}

// untrustedIn is untrusted for a contribution of a listed object.
func (o Owner) untrustedIn(st composedState, name, raw string) string {
	if why := st.handWritten[name]; why != "" {
		return why
	}
	if o.Composition != nil && o.Composition.Check != nil {
		if _, err := o.Composition.Check(raw); err != nil {
			return err.Error()
		}
	}
	return ""
}

// workspaceOf is the workspace a contribution says it comes from, "" when
// it does not say or cannot be read.
func (o Owner) workspaceOf(raw string) string {
	if o.Composition == nil || o.Composition.Check == nil {
		return ""
	}
	ws, _ := o.Composition.Check(raw)
	return ws
}

// forgetContributions removes the contribution annotations and labels of
// names from live with one merge patch carrying its resourceVersion (a
// concurrent writer makes it a conflict, and the compose is retried): a
// composer's apply alone would not remove a field another manager (or the
// create that made the object) also holds.
func forgetContributions(ctx context.Context, ri dynamic.ResourceInterface, live *unstructured.Unstructured, prefix string, names []string, manager string) (*unstructured.Unstructured, error) {
	annotations, labels := map[string]any{}, map[string]any{}
	for _, n := range names {
		if _, ok := live.GetAnnotations()[prefix+n]; ok {
			annotations[prefix+n] = nil
		}
		if _, ok := live.GetLabels()[prefix+n]; ok {
			labels[prefix+n] = nil
		}
	}
	if len(annotations)+len(labels) == 0 {
		return live, nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": live.GetResourceVersion(), "annotations": annotations, "labels": labels}})
	if err != nil {
		return nil, err
	}
	return ri.Patch(ctx, live.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: manager})
}

// LiveContribution is one contribution found on a composed object.
type LiveContribution struct {
	Entry Entry
	// Name is the intent's name, ID its instance ("" when not recorded).
	Name, ID string
	// Raw is the contribution as stored; Workspace the workspace it says
	// it comes from.
	Raw, Workspace string
	// Untrusted says why it is not composed (hand-written, or refused by
	// the intent's Check); empty when it is.
	Untrusted string
}

// Annotation is the annotation key that holds it.
func (c LiveContribution) Annotation(kind string) string { return kind + contributionInfix + c.Name }

// Contributions lists the contributions of owner's kind on the live
// objects of entries, from the process's latest listings, stale or not
// (listedSnapshot): plan uses them to compose with what other states
// contributed; the apply composes again with what the object holds then. A cluster that
// cannot be read is an error of its own; the others are still listed.
func (e *Engine) Contributions(ctx context.Context, owner Owner, entries []Entry) ([]LiveContribution, []*Error) {
	var out []LiveContribution
	var errs []*Error
	failed := map[string]bool{}
	for _, en := range entries {
		if failed[en.Cluster] {
			continue
		}
		c, err := e.Clients.Get(en.Cluster)
		if err != nil {
			failed[en.Cluster] = true
			errs = append(errs, clusterError(en.Cluster, "Reading composed objects", err))
			continue
		}
		l, lerr := e.listedSnapshot(ctx, c.Dynamic, en.Cluster, schema.FromAPIVersionAndKind(en.APIVersion, en.Kind))
		if lerr != nil {
			failed[en.Cluster] = true
			errs = append(errs, lerr)
			continue
		}
		st, ok := l.objects[en.Namespace+"/"+en.Name].composed[owner.Kind]
		if !ok {
			continue
		}
		names := make([]string, 0, len(st.contributions))
		for n := range st.contributions {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			raw := st.contributions[n]
			lc := LiveContribution{Entry: en, Name: n, ID: st.ids[n], Raw: raw, Workspace: owner.workspaceOf(raw), Untrusted: st.handWritten[n]}
			if lc.Untrusted == "" && owner.Composition != nil && owner.Composition.Check != nil {
				if _, err := owner.Composition.Check(raw); err != nil {
					lc.Untrusted = err.Error()
				}
			}
			out = append(out, lc)
		}
	}
	return out, errs
}
