package engine

import (
	"context"
	"errors"
	"sort"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// NamespaceMissing is the cause of an error for a namespace that does not
// exist in its cluster: every write of an object there would be refused.
type NamespaceMissing struct {
	Cluster, Namespace string
	Cause              error
}

func (n *NamespaceMissing) Error() string { return n.Cause.Error() }
func (n *NamespaceMissing) Unwrap() error { return n.Cause }

// MissingNamespaces asks, for each cluster and namespace that desired
// objects go to and that prior (the state) lists no object in, whether the
// namespace exists: by a server-side dry-run apply of one of those objects
// (dryRun=All writes nothing, and needs no permission beyond the apply's
// own; reading namespaces is not granted to the provider). It returns one
// error per missing namespace, naming the object asked about, so that an
// apply fails before writing anything and a plan fails where apply
// would. Clusters that cannot be asked, pull clusters, composed objects
// and any other answer are left to the apply.
func (e *Engine) MissingNamespaces(ctx context.Context, owner Owner, desired []Desired, prior []Entry) Errors {
	if owner.Composition != nil {
		return nil
	}
	known := map[string]bool{}
	for _, p := range prior {
		if p.Digest != DigestUnconfirmed {
			known[p.Cluster+"/"+p.Namespace] = true
		}
	}
	asked := map[string]Desired{}
	var keys []string
	for _, d := range desired {
		k := d.Cluster + "/" + d.Namespace
		if d.Namespace == "" || d.Manifest == nil || known[k] {
			continue
		}
		if _, ok := asked[k]; !ok {
			asked[k] = d
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var clusters []string
	for _, k := range keys {
		if c := asked[k].Cluster; len(clusters) == 0 || clusters[len(clusters)-1] != c {
			clusters = append(clusters, c)
		}
	}
	_, errs := perCluster(ctx, clusters, func(ctx context.Context, cluster string) ([]Entry, []*Error) {
		if _, pull, err := e.pullOf(cluster); pull || err != nil {
			return nil, nil
		}
		c, err := e.Clients.Get(cluster)
		if err != nil {
			return nil, nil
		}
		var out []*Error
		for _, k := range keys {
			d := asked[k]
			if d.Cluster != cluster {
				continue
			}
			gvr, err := resourceFor(d.APIVersion, d.Kind)
			if err != nil {
				continue
			}
			obj := &unstructured.Unstructured{Object: d.Manifest}
			_, err = c.Dynamic.Resource(gvr).Namespace(d.Namespace).Apply(ctx, d.Name, obj,
				metav1.ApplyOptions{FieldManager: owner.FieldManager(e.FieldManager), DryRun: []string{metav1.DryRunAll}})
			if namespaceMissing(err) {
				logEntry(ctx, "namespace missing: checked by a dry-run apply", owner, d.Entry)
				oe := objectError(d.Entry, "Checking the namespace of", err)
				oe.Err = &NamespaceMissing{Cluster: d.Cluster, Namespace: d.Namespace, Cause: err}
				out = append(out, oe)
			}
		}
		return nil, out
	})
	e.renderHints(errs) // pasted, the hint acts on the cluster it names
	return errs
}

// namespaceMissing reports a 404 for the namespace an object goes to.
func namespaceMissing(err error) bool {
	var status apierrors.APIStatus
	return apierrors.IsNotFound(err) && errors.As(err, &status) && status.Status().Details != nil && status.Status().Details.Kind == "namespaces"
}

// ForeignObjects reads, for each desired object that prior (the state)
// does not list with a real digest, the object of that name: one that
// exists and that owner may not write (someone else's, without
// adopt_existing; another intent's or instance's) is returned as the
// error the apply would give (checkUnowned), so that an apply fails
// before writing anything and a plan fails where apply would. Clusters
// that cannot be asked, pull clusters and composed objects are left to the
// apply.
func (e *Engine) ForeignObjects(ctx context.Context, owner Owner, desired []Desired, prior []Entry) Errors {
	_, errs := e.CheckForeignObjects(ctx, owner, desired, prior)
	return errs
}

// CheckForeignObjects is ForeignObjects, and returns what it read of the
// objects it did not refuse (none there, or its UID), for ApplyChecked to
// write them without reading each again.
func (e *Engine) CheckForeignObjects(ctx context.Context, owner Owner, desired []Desired, prior []Entry) (*Checked, Errors) {
	checked := &Checked{owner: ownerKeyOf(owner), m: map[string]checkedObject{}}
	if owner.Composition != nil {
		return checked, nil
	}
	known := map[string]bool{}
	for _, p := range prior {
		if p.Digest != DigestUnconfirmed {
			known[p.Key().String()] = true
		}
	}
	var fresh []Desired
	for _, d := range desired {
		if !known[d.Key().String()] {
			fresh = append(fresh, d)
		}
	}
	var want []Entry
	for _, d := range fresh {
		want = append(want, d.Entry)
	}
	_, errs := perCluster(ctx, clustersOf(want), func(ctx context.Context, cluster string) ([]Entry, []*Error) {
		if _, pull, err := e.pullOf(cluster); pull || err != nil {
			return nil, nil
		}
		c, err := e.Clients.Get(cluster)
		if err != nil {
			return nil, nil
		}
		var ds []Desired
		for _, d := range fresh {
			if d.Cluster == cluster {
				ds = append(ds, d)
			}
		}
		out := make([]*Error, len(ds))
		bounded(len(ds), e.concurrency(), func(i int) {
			gvr, err := resourceFor(ds[i].APIVersion, ds[i].Kind)
			if err != nil {
				return
			}
			uid, adopting, cerr := e.checkUnowned(ctx, c.Dynamic.Resource(gvr).Namespace(ds[i].Namespace), owner, ds[i].Entry)
			switch {
			case cerr == nil:
				checked.put(ds[i].Entry, checkedObject{uid: uid, adopting: adopting})
			case errors.Is(cerr, errNotOurs):
				logEntry(ctx, "refused before writing: the object exists and is not ours", owner, ds[i].Entry)
				out[i] = cerr
			}
		})
		_, errs := collect(make([]*Entry, 0), out)
		return nil, errs
	})
	return checked, errs
}

// Checked is what CheckForeignObjects read of an intent's new objects, for
// the apply that follows it at once (ApplyChecked): each object is written
// on the strength of that read, as the apply would on its own read
// (checkUnowned), once; a write of it again (a retry) reads it again.
// The apply of a create therefore reads each object once, not twice.
type Checked struct {
	owner ownerKey
	mu    sync.Mutex
	m     map[string]checkedObject // by Entry key
}

// checkedObject is checkUnowned's answer: no object (uid empty), ours
// (its UID), or one the owner adopts.
type checkedObject struct {
	uid      types.UID
	adopting bool
}

func (c *Checked) put(en Entry, o checkedObject) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[en.Key().String()] = o
}

// take returns what was read of en for owner, and forgets it.
func (c *Checked) take(owner Owner, en Entry) (checkedObject, bool) {
	if c == nil || c.owner != ownerKeyOf(owner) {
		return checkedObject{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := en.Key().String()
	o, ok := c.m[k]
	delete(c.m, k)
	return o, ok
}

type checkedKey struct{}

// ApplyChecked is Apply, for an intent whose new objects CheckForeignObjects
// just read: those are written without reading them again.
func (e *Engine) ApplyChecked(ctx context.Context, owner Owner, desired []Desired, prior []Entry, checked *Checked) ([]Entry, error) {
	return e.Apply(context.WithValue(ctx, checkedKey{}, checked), owner, desired, prior)
}

// checkedOrRead is what CheckForeignObjects read of the object, if the
// apply carries it (ApplyChecked), else checkUnowned's read.
func (e *Engine) checkedOrRead(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, entry Entry) (types.UID, bool, *Error) {
	if c, _ := ctx.Value(checkedKey{}).(*Checked); c != nil {
		if o, ok := c.take(owner, entry); ok {
			return o.uid, o.adopting, nil
		}
	}
	return e.checkUnowned(ctx, ri, owner, entry)
}
