package engine

import (
	"context"
	"errors"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// Which contributions a writer composes is the verdict's to say
// (verdict.go): a contribution is composed when its kind's composer
// decodes it (size, schema, a valid intent: Composer.Decode), whoever
// wrote it; one it refuses is never composed, and the next writer removes
// it with its label.

// decode reads a contribution found on an object with o's composer
// (Composer.Decode); without a composer, nothing is read of it.
func (o Owner) decode(raw string) (composition.Contribution, error) {
	if o.Composition == nil || o.Composition.Composer == nil {
		return nil, nil
	}
	return o.Composition.Composer.Decode(raw)
}

// unreadable is decode's error when it is composition.Unreadable (a
// newer format), or nil.
func unreadable(err error) error {
	var u composition.Unreadable
	if errors.As(err, &u) {
		return u
	}
	return nil
}

// workspaceOf is the workspace c names ("" for none).
func workspaceOf(c composition.Contribution) string {
	if c == nil {
		return ""
	}
	return c.Workspace()
}

// Contributions lists the contributions of owner's kind on the live
// objects of entries, from the process's latest listings, stale or not
// (listedSnapshot), or, on a pull cluster, on the artifact's copy of
// them (pull_compose.go): plan uses them to compose with what other states
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
		if a, pull, perr := e.pullOf(en.Cluster); perr == nil && pull {
			// The artifact's copy plays the live object's part.
			found, ferr := e.contributionsInArtifact(ctx, owner, a, en)
			if ferr != nil {
				failed[en.Cluster] = true
				errs = append(errs, ferr)
				continue
			}
			out = append(out, found...)
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
		if ok {
			out = append(out, owner.liveContributions(en, st.Object())...)
		}
	}
	return out, errs
}

// liveContributions lists the contributions of owner's kind in st, the
// composed state of the object en, by name (readContributions).
func (o Owner) liveContributions(en Entry, st ComposedObject) []LiveContribution {
	out := o.readContributions(en, st.Contributions, st.IDs)
	for i := range out {
		out[i].Kept = st.Kept
	}
	return out
}

// ContributionsIn lists every contribution of owner's kind (owner's name
// is not used) on the objects of kinds in clusters, from fresh listings:
// a workspace's orphans are found among them. Objects are in key order. A
// cluster that cannot be read is an error of its own; the others are
// still listed.
func (e *Engine) ContributionsIn(ctx context.Context, owner Owner, clusters []string, kinds []schema.GroupVersionKind) ([]LiveContribution, []*Error) {
	var out []LiveContribution
	var errs []*Error
	for _, cluster := range clusters {
		c, err := e.Clients.Get(cluster)
		if err != nil {
			errs = append(errs, clusterError(cluster, "Reading composed objects", err))
			continue
		}
		for _, gvk := range kinds {
			l, lerr := e.listed(ctx, c.Dynamic, cluster, gvk)
			if lerr != nil {
				errs = append(errs, lerr)
				break
			}
			keys := make([]string, 0, len(l.objects))
			for k, o := range l.objects {
				if _, ok := o.composed[owner.Kind]; ok {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			for _, k := range keys {
				ns, name, _ := strings.Cut(k, "/")
				en := Entry{Cluster: cluster, APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: ns, Name: name}
				out = append(out, owner.liveContributions(en, l.objects[k].composed[owner.Kind].Object())...)
			}
		}
	}
	return out, errs
}
