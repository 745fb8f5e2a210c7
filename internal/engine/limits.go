package engine

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// Limits of the Kubernetes API server a write of the provider can hit
// (k8s.io/apimachinery validation). The plan checks them (Limits), so
// that no apply fails half-way on one of them.
const (
	// MaxAnnotationBytes is the total size of an object's annotations,
	// keys and values (TotalAnnotationSizeLimitB).
	MaxAnnotationBytes = 256 << 10
	// MaxNameLength is the longest object name (a DNS-1123 subdomain).
	MaxNameLength = 253
	// MaxLabelValueLength is the longest label value.
	MaxLabelValueLength = 63
	// MaxManagerLength is the longest field manager name.
	MaxManagerLength = 128
)

// LimitError is a Kubernetes limit a planned write would exceed.
type LimitError struct {
	// Limit is what is exceeded: "object name", "label value", "field
	// manager" or "annotations"; Object the object ("" for a field
	// manager, which every object shares).
	Limit, Object string
	// Detail says by how much, and what makes it that large.
	Detail string
}

func (e LimitError) Error() string { return e.Detail }

// Managers are the field managers o's writes use with the field_manager
// base: the composer's for a composed intent, its own otherwise.
func (o Owner) Managers(base string) []string {
	if o.Composition != nil {
		return []string{o.composerManager()}
	}
	return []string{o.FieldManager(base)}
}

// Limits checks what o's writes of entries would set against the API
// server's limits: object names, o's label values and field managers
// (with the engine's field_manager base) and, for a composed intent, the
// annotations of each object once its contribution is added to those of
// live (the contributions found on the objects, as the plan read them)
// that the write keeps: keeps is that decision, the verdict's
// (shareddata.KeptByTheWrite), never the engine's. It contacts no
// cluster.
func (e *Engine) Limits(o Owner, entries []Entry, live []LiveContribution, keeps func(LiveContribution) bool) []LimitError {
	var out []LimitError
	for _, m := range o.Managers(e.FieldManager) {
		if len(m) > MaxManagerLength {
			out = append(out, LimitError{Limit: "field manager", Detail: fmt.Sprintf("The field manager %q is %d characters long; Kubernetes allows at most %d.", m, len(m), MaxManagerLength)})
		}
	}
	labels := o.Labels()
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if v := labels[k]; len(v) > MaxLabelValueLength {
			out = append(out, LimitError{Limit: "label value", Detail: fmt.Sprintf("The value of label %s, %q, is %d characters long; Kubernetes allows at most %d.", k, v, len(v), MaxLabelValueLength)})
		}
	}
	others := map[string]int{}
	counts := map[string]int{}
	kept := map[string]int{}
	if o.Composition != nil {
		prefix := o.Kind + contributionInfix
		for _, c := range live {
			kept[c.Entry.StateKey()] = c.Kept
			if !keeps(c) {
				continue // replaced, or removed by the write
			}
			k := c.Entry.StateKey()
			others[k] += len(prefix+c.Name) + len(c.Raw)
			counts[k]++
		}
	}
	for _, en := range entries {
		if len(en.Name) > MaxNameLength {
			out = append(out, LimitError{Limit: "object name", Object: en.String(), Detail: fmt.Sprintf("The name of %s is %d characters long; Kubernetes allows at most %d.", en, len(en.Name), MaxNameLength)})
		}
		if o.Composition == nil {
			continue
		}
		own := len(o.ContributionKey()) + len(o.Composition.Contribution.For(en.Cluster).Raw)
		k := en.StateKey()
		if total := own + others[k] + kept[k]; total > MaxAnnotationBytes {
			out = append(out, LimitError{Limit: "annotations", Object: en.String(), Detail: fmt.Sprintf(
				"The annotations of %s would be %d bytes: this %s's contribution (%d bytes), the %d others found on it (%d bytes) and its other annotations, which the write keeps (%d bytes); Kubernetes allows at most %d in all.",
				en, total, strings.ReplaceAll(o.Kind, "-", " "), own, counts[k], others[k], kept[k], MaxAnnotationBytes)})
		}
	}
	return out
}

// annotationsWithin refuses a composed write whose contributions, with
// the object's other annotations it keeps (kept bytes), would exceed the
// annotations limit (what the plan saw may have grown since).
func annotationsWithin(entry Entry, prefix string, contributions map[string]composition.Encoded, kept int) *Error {
	total := kept
	for name, c := range contributions {
		total += len(prefix+name) + len(c.Raw)
	}
	if total <= MaxAnnotationBytes {
		return nil
	}
	return &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Kubernetes limit exceeded: annotations",
		Detail: fmt.Sprintf("The annotations of %s would be %d bytes with the %d contributions it holds now and its other annotations (%d bytes); Kubernetes allows at most %d in all. Nothing was written. "+
			"Merge some of the policies on this destination, or narrow their sources so that fewer of them meet in one cluster; remove annotations other tools left on it (such as the last-applied-configuration annotation a client-side apply leaves).", entry, total, len(contributions), kept, MaxAnnotationBytes)}
}

// keptAnnotations is the size (keys and values) of live's annotations
// that a composer of kind's write keeps: all but kind's contributions.
func keptAnnotations(live *unstructured.Unstructured, kind string) int {
	prefix := kind + contributionInfix
	n := 0
	for k, v := range live.GetAnnotations() {
		if !strings.HasPrefix(k, prefix) {
			n += len(k) + len(v)
		}
	}
	return n
}
