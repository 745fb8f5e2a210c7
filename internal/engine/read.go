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
		if got, errs, pull := e.readIfPull(ctx, owner, cluster, byCluster(prior, cluster)); pull {
			return got, errs
		}
		got, notes, err := e.readCluster(ctx, owner, kinds, cluster)
		if err == nil {
			var moved []Entry
			moved, err = e.readMovedRecords(ctx, owner, cluster, byCluster(prior, cluster))
			got = append(got, moved...)
		}
		if err != nil {
			logCluster(ctx, "refresh could not read the cluster: prior entries kept", owner, cluster, "error", err.Summary)
			return byCluster(prior, cluster), []*Error{err}
		}
		got, retired := e.readRetired(ctx, owner, cluster, got)
		notes = append(notes, retired...)
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
			// A composed object's digest is its contribution's, and its
			// composition is checked against the listing's snapshot of it.
			if owner.Composition != nil {
				st := l.objects[en.Namespace+"/"+en.Name].composed[owner.Kind]
				digest, err := owner.partDigest(st.contributions[owner.Name])
				if err != nil {
					return nil, nil, objectError(en, "Reading", err)
				}
				en.Digest = digest
				if owner.Composition.Composer != nil {
					if e.Shared == nil {
						return nil, nil, noShared(owner, en.Cluster, en.String(), "Reading")
					}
					if e.Shared.DriftedFrom(e, owner, en, st.Object()) {
						en.Digest = digestDrifted
					}
					if len(st.foreign) > 0 {
						en.Digest = digestDrifted
						notes = append(notes, driftNote(en, st.foreign))
					}
				}
			}
			out = append(out, en)
		}
	}
	return out, notes, nil
}

// readMovedRecords reads, one by one, the prior entries of records outside
// the records namespace: records written before records_namespace
// changed. Listings cover the records namespace only, so without this a
// refresh would forget them, and no apply would ever delete them. Each is
// kept while it exists and is still this instance's; the next apply
// prunes it (pinned to its UID) and writes the record in the new
// namespace. One that cannot be read is kept as it was.
func (e *Engine) readMovedRecords(ctx context.Context, owner Owner, cluster string, prior []Entry) ([]Entry, *Error) {
	var moved []Entry
	for _, p := range prior {
		if p.Kind == "ConfigMap" && p.APIVersion == "v1" && p.Namespace != e.recordsNamespace() {
			moved = append(moved, p)
		}
	}
	if len(moved) == 0 {
		return nil, nil
	}
	if _, err := e.Clients.Get(cluster); err != nil {
		return nil, clusterError(cluster, "Reading owned objects", err)
	}
	var out []Entry
	for _, p := range moved {
		live, err := e.Get(ctx, p)
		switch {
		case err == nil && live == nil:
			logEntry(ctx, "refresh: record in a former records namespace is gone", owner, p)
		case err != nil:
			logEntry(ctx, "refresh: record in a former records namespace not readable, entry kept", owner, p, "error", err.Error())
			out = append(out, p)
		case owner.owns(live.GetLabels()):
			out = append(out, p)
		default:
			logEntry(ctx, "refresh: record in a former records namespace is someone else's now", owner, p)
		}
	}
	return out, nil
}
