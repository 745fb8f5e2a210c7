package engine

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Read lists what owner owns in the given clusters (and in every cluster of
// prior) and digests the fields it owns, so that Terraform sees objects
// deleted or changed out of band, and objects left behind by an
// interrupted apply. It is answered from the process's listing of each
// cluster and kind (listcache.go): one LIST per cluster and kind for all
// the intents Terraform refreshes, not one per intent.
//
// A cluster that cannot be read keeps its prior entries: an unreachable
// cluster is not a reason to forget what exists there. Its error is
// returned as a warning.
func (e *Engine) Read(ctx context.Context, owner Owner, kinds []schema.GroupVersionKind, clusters []string, prior []Entry) ([]Entry, Errors) {
	all := map[string]bool{}
	for _, c := range clusters {
		all[c] = true
	}
	for _, c := range clustersOf(prior) {
		all[c] = true
	}
	var names []string
	for c := range all {
		names = append(names, c)
	}
	return perCluster(ctx, names, func(ctx context.Context, cluster string) ([]Entry, []*Error) {
		got, notes, err := e.readCluster(ctx, owner, kinds, cluster)
		if err != nil {
			logCluster(ctx, "refresh could not read the cluster: prior entries kept", owner, cluster, "error", err.Summary)
			return byCluster(prior, cluster), []*Error{err}
		}
		logCluster(ctx, "refreshed", owner, cluster, "objects", len(got), "drifted", len(notes))
		return got, notes
	})
}

func (e *Engine) readCluster(ctx context.Context, owner Owner, kinds []schema.GroupVersionKind, cluster string) ([]Entry, []*Error, *Error) {
	c, err := e.Clients.Get(cluster)
	if err != nil {
		return nil, nil, clusterError(cluster, "Reading owned objects", err)
	}
	var out []Entry
	var notes []*Error
	for _, gvk := range kinds {
		l, lerr := e.listed(ctx, c.Dynamic, cluster, gvk)
		if lerr != nil {
			return nil, nil, lerr
		}
		oe := l.owners[ownerKeyOf(owner)]
		if oe == nil {
			continue
		}
		if oe.err != nil {
			return nil, nil, oe.err
		}
		notes = append(notes, oe.drift...)
		for _, en := range oe.entries {
			// A composed object's composition is checked against the
			// listing's snapshot of it, as its digest is.
			if owner.Composition != nil && owner.Composition.Compose != nil {
				st := l.objects[en.Namespace+"/"+en.Name].composed[owner.Kind]
				if e.composedDriftedFrom(owner, en, st) {
					en.Digest = digestDrifted
				}
				if len(st.foreign) > 0 {
					en.Digest = digestDrifted
					notes = append(notes, driftNote(en, st.foreign))
				}
			}
			out = append(out, en)
		}
	}
	return out, notes, nil
}
