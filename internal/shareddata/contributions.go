package shareddata

import (
	"context"
	"errors"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// Which contributions a writer composes is the verdict's to say
// (verdict.go): a contribution is composed when its kind's composer
// decodes it (size, schema, a valid intent: Composer.Decode), whoever
// wrote it; one it refuses is never composed, and the next writer removes
// it with its label.

// decode reads a contribution found on an object with o's composer
// (Composer.Decode); without a composer, nothing is read of it.
func decode(o engine.Owner, raw string) (composition.Contribution, error) {
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
// objects of entries, from the engine's latest listings, stale or not
// (ListedComposed, latest), or, on a pull cluster, on the artifact's copy of
// them (pull_compose.go): plan uses them to compose with what other states
// contributed; the apply composes again with what the object holds then. A cluster that
// cannot be read is an error of its own; the others are still listed.
func Contributions(ctx context.Context, e *engine.Engine, owner engine.Owner, entries []engine.Entry) ([]engine.LiveContribution, []*engine.Error) {
	var out []engine.LiveContribution
	var errs []*engine.Error
	failed := map[string]bool{}
	for _, en := range entries {
		if failed[en.Cluster] {
			continue
		}
		if a, pull, perr := e.PullArtifactOf(en.Cluster); perr == nil && pull {
			// The artifact's copy plays the live object's part.
			found, ferr := contributionsInArtifact(ctx, e, owner, a, en)
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
			errs = append(errs, engine.ClusterError(en.Cluster, "Reading composed objects", err))
			continue
		}
		l, lerr := e.ListedComposed(ctx, c.Dynamic, en.Cluster, schema.FromAPIVersionAndKind(en.APIVersion, en.Kind), owner.Kind, true)
		if lerr != nil {
			failed[en.Cluster] = true
			errs = append(errs, lerr)
			continue
		}
		if st, _, ok := l.Get(en.Namespace, en.Name); ok {
			out = append(out, liveContributions(owner, en, st)...)
		}
	}
	return out, errs
}

// liveContributions lists the contributions of owner's kind in st, the
// composed state of the object en, by name (readContributions).
func liveContributions(o engine.Owner, en engine.Entry, st engine.ComposedObject) []engine.LiveContribution {
	out := readContributions(o, en, st.Contributions, st.IDs)
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
func ContributionsIn(ctx context.Context, e *engine.Engine, owner engine.Owner, clusters []string, kinds []schema.GroupVersionKind) ([]engine.LiveContribution, []*engine.Error) {
	var out []engine.LiveContribution
	var errs []*engine.Error
	for _, cluster := range clusters {
		c, err := e.Clients.Get(cluster)
		if err != nil {
			errs = append(errs, engine.ClusterError(cluster, "Reading composed objects", err))
			continue
		}
		for _, gvk := range kinds {
			l, lerr := e.ListedComposed(ctx, c.Dynamic, cluster, gvk, owner.Kind, false)
			if lerr != nil {
				errs = append(errs, lerr)
				break
			}
			for _, k := range l.Keys() {
				ns, name, _ := strings.Cut(k, "/")
				en := engine.Entry{Cluster: cluster, APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: ns, Name: name}
				st, _, _ := l.Get(ns, name)
				out = append(out, liveContributions(owner, en, st)...)
			}
		}
	}
	return out, errs
}
