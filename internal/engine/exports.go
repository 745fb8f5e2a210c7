package engine

import (
	"context"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// What the shared-data protocols above the engine (internal/shareddata:
// workspace claims, virtual destinations' records) use of it. The engine
// never calls them: they call these.

// ClusterError explains why a cluster could not be used at all (doing,
// then the cause, with the fix where one is known).
func ClusterError(cluster, doing string, err error) *Error { return clusterError(cluster, doing, err) }

// ObjectError explains why one object could not be written or read.
func ObjectError(en Entry, doing string, err error) *Error { return objectError(en, doing, err) }

// ManagerBase is the engine's field_manager base (the default when none
// is set).
func (e *Engine) ManagerBase() string { return e.managerBase() }

// RecordsNamespaceName is the namespace records (and workspace claims)
// are read and written in: RecordsNamespace, or its default.
func (e *Engine) RecordsNamespaceName() string { return e.recordsNamespace() }

// ListedConfigMaps is the provider's ConfigMaps (managed-by label) in the
// records namespace of cluster, from this process's listing of them
// (listcache.go): one LIST per cluster however often they are asked for,
// again only after this process wrote a ConfigMap there. doing names the
// read in an error. The objects are the listing's: read, never change
// them.
func (e *Engine) ListedConfigMaps(ctx context.Context, cluster, doing string) ([]*unstructured.Unstructured, *Error) {
	c, err := e.Clients.Get(cluster)
	if err != nil {
		return nil, clusterError(cluster, doing, err)
	}
	l, lerr := e.listed(ctx, c.Dynamic, cluster, configMapKind)
	if lerr != nil {
		return nil, clusterError(cluster, doing, lerr.Err)
	}
	return l.kept, nil
}

// Memo is the value a protocol above the engine keeps in this engine (in
// this process) under key: the first call stores what newValue makes,
// every later one returns that value (two first calls at once may both
// make one; one is kept). Keys are the protocol's own types.
func (e *Engine) Memo(key any, newValue func() any) any {
	if v, ok := e.memos.Load(key); ok {
		return v
	}
	v, _ := e.memos.LoadOrStore(key, newValue())
	return v
}

// Sort orders errors by cluster, then object.
func (es Errors) Sort() { es.sort() }

// recordsNamespace is where records are read and written.
func (e *Engine) recordsNamespace() string {
	if e.RecordsNamespace == "" {
		return DefaultRecordsNamespace
	}
	return e.RecordsNamespace
}

// ArtifactKey is the key of en's object in a pull cluster's artifact.
func ArtifactKey(en Entry) string { return artifactKey(en) }

// PulledObjects is the objects of a pull cluster's artifact (pull true),
// by ArtifactKey, as this process last fetched or published them; none
// if the artifact was never published. doing names the read in an
// error, which is followed by the artifact.
func (e *Engine) PulledObjects(ctx context.Context, cluster, doing string) (objs oci.Objects, pull bool, rerr *Error) {
	a, pull, err := e.pullOf(cluster)
	if err != nil {
		return nil, true, clusterError(cluster, "Naming the artifact", err)
	}
	if !pull {
		return nil, false, nil
	}
	got, _, err := e.pulls.fetch(ctx, a.Target)
	if err != nil {
		return nil, true, clusterError(cluster, doing+" "+a.Target.String(), err)
	}
	return got.Objects, true, nil
}

// UpdatePulled changes the objects of a pull cluster's artifact (pull
// true) and publishes them, serialised with this process's other
// publishers of the artifact: change edits objs in place, or returns an
// error that leaves the artifact as it was (the error rerr then wraps).
// doing names the change in an error, which is followed by " in the
// artifact" and the artifact.
func (e *Engine) UpdatePulled(ctx context.Context, cluster, doing string, change func(objs oci.Objects) error) (rerr *Error, pull bool) {
	a, pull, err := e.pullOf(cluster)
	if err != nil {
		return clusterError(cluster, "Naming the artifact", err), true
	}
	if !pull {
		return nil, false
	}
	got, err := e.pulls.writers.For(a.Target, a.Publisher).Update(ctx, change)
	if err != nil {
		return clusterError(cluster, doing+" in the artifact "+a.Target.String(), err), true
	}
	e.pulls.remember(a.Target, got)
	return nil, true
}
