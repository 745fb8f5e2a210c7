package engine

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Read lists what owner owns in the given clusters (and in every cluster of
// prior) and digests the fields it owns, so that Terraform sees objects
// deleted or changed out of band, and objects left behind by an
// interrupted apply. One LIST per cluster and kind, filtered by the owner
// labels.
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
	manager := owner.FieldManager(e.FieldManager)
	return perCluster(ctx, names, func(ctx context.Context, cluster string) ([]Entry, []*Error) {
		got, err := e.readCluster(ctx, owner, manager, kinds, cluster)
		if err != nil {
			return byCluster(prior, cluster), []*Error{err}
		}
		return got, nil
	})
}

func (e *Engine) readCluster(ctx context.Context, owner Owner, manager string, kinds []schema.GroupVersionKind, cluster string) ([]Entry, *Error) {
	c, err := e.Clients.Get(cluster)
	if err != nil {
		return nil, clusterError(cluster, "Reading owned objects", err)
	}
	var out []Entry
	for _, gvk := range kinds {
		gvr, err := resourceFor(gvk.GroupVersion().String(), gvk.Kind)
		if err != nil {
			return nil, clusterError(cluster, "Reading owned objects", err)
		}
		list, err := c.Dynamic.Resource(gvr).List(ctx, metav1.ListOptions{LabelSelector: owner.Selector()})
		if apierrors.IsNotFound(err) {
			continue // the kind is not installed, so nothing of it is ours
		}
		if err != nil {
			return nil, clusterError(cluster, "Reading owned objects", err)
		}
		for i := range list.Items {
			item := &list.Items[i]
			entry := Entry{Cluster: cluster, APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: item.GetNamespace(), Name: item.GetName()}
			if owner.Composition != nil {
				entry.Digest, err = contributionDigest(item.GetAnnotations()[owner.contributionKey()])
			} else {
				entry.Digest, err = liveDigest(item, manager)
			}
			if err != nil {
				return nil, objectError(entry, "Reading", err)
			}
			out = append(out, entry)
		}
	}
	return out, nil
}
