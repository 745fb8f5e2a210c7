package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
)

// One LIST per cluster and kind, shared by every intent of the provider
// process. Terraform refreshes each resource with its own ReadResource
// call, so a LIST per intent, cluster and kind costs the API servers one
// request per intent and scans every object of the kind each time: with
// hundreds of intents, refresh was dominated by thousands of LISTs. A
// listing instead reads every object we manage of one kind in one cluster
// once (paginated), digests each for the intent(s) its labels name, and
// answers every Read from that index.
//
// A listing is a snapshot taken at the first Read of its cluster and kind
// in the process. Any write of this process to that cluster and kind marks
// it stale, and the next Read lists again, so a Read never misses what
// this process wrote. Prune uses listings too (even stale ones): an object
// seen in a listing is deleted with the UID and resourceVersion it had
// there as preconditions, so an object changed since is never deleted on
// the strength of an old snapshot; it is read again instead.

// listPageSize bounds the objects of one LIST response.
const listPageSize = 500

// pruneListThreshold is how many objects of one cluster and kind prune
// reads one by one before it lists them all at once instead (destroy of a
// large configuration runs without a refresh in the same process).
const pruneListThreshold = 16

// contributionInfix separates kind and name in a contribution label key
// (see Owner.ContributionKey).
const contributionInfix = ".mesh-intent.io/"

type listKey struct {
	cluster string
	gvk     schema.GroupVersionKind
}

// ownerKey names an intent in a listing: composed intents are found by
// their contribution labels, others by the owner labels.
type ownerKey struct {
	kind, name string
	id         string // instance; empty matches every instance (import)
	composed   bool
}

func ownerKeyOf(o Owner) ownerKey {
	return ownerKey{kind: o.Kind, name: o.Name, id: o.ID, composed: o.Composition != nil}
}

type ownerEntries struct {
	entries []Entry
	err     *Error   // digesting one of its objects failed
	drift   []*Error // objects with fields other managers set (drift.go)
}

// listedObject is what prune needs of an object, and for a composed one
// what refresh needs to tell whether its composition was edited, per kind
// of intent contributing (see composedState).
type listedObject struct {
	uid             types.UID
	resourceVersion string
	labels          map[string]string
	composed        map[string]composedState
}

var (
	configMaps    = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	configMapKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
)

type listing struct {
	ready   chan struct{}
	err     *Error
	owners  map[ownerKey]*ownerEntries
	objects map[string]listedObject      // namespace/name
	kept    []*unstructured.Unstructured // of a ConfigMap listing: the provider's ConfigMaps of the records namespace, as listed (ListedConfigMaps)
	stale   bool                         // guarded by listings.mu
}

type listings struct {
	mu     sync.Mutex
	m      map[listKey]*listing
	misses map[listKey]int
}

// listed returns a listing of cluster and kind that reflects every write
// of this process: the current one, or a new one.
func (e *Engine) listed(ctx context.Context, dyn dynamic.Interface, cluster string, gvk schema.GroupVersionKind) (*listing, *Error) {
	key := listKey{cluster, gvk}
	s := &e.lists
	s.mu.Lock()
	if s.m == nil {
		s.m = map[listKey]*listing{}
	}
	l := s.m[key]
	fill := l == nil || l.stale
	if fill {
		l = &listing{ready: make(chan struct{})}
		s.m[key] = l
	}
	s.mu.Unlock()
	if fill {
		l.err = e.fill(ctx, dyn, cluster, gvk, l)
		close(l.ready)
		if l.err != nil {
			// Errors are not kept: the next Read tries again.
			s.mu.Lock()
			if s.m[key] == l {
				delete(s.m, key)
			}
			s.mu.Unlock()
		}
	} else {
		select {
		case <-l.ready:
		case <-ctx.Done():
			return nil, clusterError(cluster, "Reading owned objects", ctx.Err())
		}
	}
	if l.err != nil {
		return nil, l.err
	}
	return l, nil
}

// listedSnapshot returns the latest listing of cluster and kind, stale or
// not, and lists only when there is none. It serves checks that are
// advice, made again by the write they advise on: a traffic policy's
// plan-time look at what other states contributed (Contributions), which
// Terraform runs again for every resource during apply, between writes
// that would otherwise make each check list every composed object anew.
func (e *Engine) listedSnapshot(ctx context.Context, dyn dynamic.Interface, cluster string, gvk schema.GroupVersionKind) (*listing, *Error) {
	s := &e.lists
	s.mu.Lock()
	l := s.m[listKey{cluster, gvk}]
	s.mu.Unlock()
	if l == nil {
		return e.listed(ctx, dyn, cluster, gvk)
	}
	select {
	case <-l.ready:
	case <-ctx.Done():
		return nil, clusterError(cluster, "Reading owned objects", ctx.Err())
	}
	if l.err != nil {
		return e.listed(ctx, dyn, cluster, gvk)
	}
	return l, nil
}

// wrote marks the listing of cluster and kind stale after a write of this
// process (attempted: a request cut off may have taken effect).
func (e *Engine) wrote(cluster string, gvk schema.GroupVersionKind) {
	s := &e.lists
	s.mu.Lock()
	if l := s.m[listKey{cluster, gvk}]; l != nil {
		l.stale = true
	}
	s.mu.Unlock()
}

// lookup returns what the latest listing of cluster and kind saw of an
// object, if there is a complete listing and it saw the object. After
// pruneListThreshold misses without a listing, it lists the kind.
func (e *Engine) lookup(ctx context.Context, dyn dynamic.Interface, cluster string, gvk schema.GroupVersionKind, namespace, name string) (listedObject, bool) {
	key := listKey{cluster, gvk}
	s := &e.lists
	s.mu.Lock()
	l := s.m[key]
	if l == nil {
		if s.misses == nil {
			s.misses = map[listKey]int{}
		}
		s.misses[key]++
		if s.misses[key] < pruneListThreshold {
			s.mu.Unlock()
			return listedObject{}, false
		}
	}
	s.mu.Unlock()
	if l == nil {
		var err *Error
		if l, err = e.listed(ctx, dyn, cluster, gvk); err != nil {
			return listedObject{}, false
		}
	}
	select {
	case <-l.ready:
	default:
		return listedObject{}, false // being filled: do not wait for it
	}
	if l.err != nil {
		return listedObject{}, false
	}
	o, ok := l.objects[namespace+"/"+name]
	return o, ok
}

func (e *Engine) fill(ctx context.Context, dyn dynamic.Interface, cluster string, gvk schema.GroupVersionKind, l *listing) *Error {
	gvr, err := resourceFor(gvk.GroupVersion().String(), gvk.Kind)
	if err != nil {
		return clusterError(cluster, "Reading owned objects", err)
	}
	l.owners = map[ownerKey]*ownerEntries{}
	l.objects = map[string]listedObject{}
	opts := metav1.ListOptions{LabelSelector: labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue}).String(), Limit: listPageSize}
	var lister dynamic.ResourceInterface = dyn.Resource(gvr)
	if gvk.Kind == "ConfigMap" && gvk.Group == "" {
		// Records only: ConfigMaps are listed in their namespace alone.
		ns := e.RecordsNamespace
		if ns == "" {
			ns = DefaultRecordsNamespace
		}
		lister = dyn.Resource(gvr).Namespace(ns)
	}
	for {
		list, err := lister.List(ctx, opts)
		switch {
		case apierrors.IsResourceExpired(err) && opts.Continue != "":
			// The continuation expired between pages: start over, in one
			// piece.
			l.owners, l.objects, l.kept = map[ownerKey]*ownerEntries{}, map[string]listedObject{}, nil
			opts.Continue, opts.Limit = "", 0
			continue
		case apierrors.IsNotFound(err):
			// Nothing of a kind that is not installed is ours. But a 404
			// can also come from a misrouted proxy or an aggregated API's
			// hiccup, and taking it for "not installed" would empty every
			// inventory of the kind: discovery has the last word.
			if absent, derr := e.kindAbsent(cluster, gvr); !absent {
				return clusterError(cluster, "Reading owned objects", fmt.Errorf("listing %s answered 404, but discovery %s: %w", gvr.Resource, derr, err))
			}
			return nil
		case err != nil:
			return clusterError(cluster, "Reading owned objects", err)
		}
		for i := range list.Items {
			e.index(l, cluster, gvk, &list.Items[i])
		}
		if opts.Continue = list.GetContinue(); opts.Continue == "" {
			return nil
		}
	}
}

// index records an object under every intent its labels name, with the
// digest of that intent's part of it.
func (e *Engine) index(l *listing, cluster string, gvk schema.GroupVersionKind, item *unstructured.Unstructured) {
	labels := item.GetLabels()
	entry := Entry{Cluster: cluster, APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: item.GetNamespace(), Name: item.GetName()}
	add := func(k ownerKey, digest string, err error) {
		oe := l.owners[k]
		if oe == nil {
			oe = &ownerEntries{}
			l.owners[k] = oe
		}
		if err != nil {
			if oe.err == nil {
				oe.err = objectError(entry, "Reading", err)
			}
			return
		}
		en := entry
		en.Digest = digest
		oe.entries = append(oe.entries, en)
	}
	// Each object is filed under its instance and, for imports that do
	// not know the instance yet, under its kind and name alone.
	addBoth := func(k ownerKey, digest string, err error) {
		add(k, digest, err)
		if k.id != "" {
			k.id = ""
			add(k, digest, err)
		}
	}
	if kind, name := labels[LabelOwnerKind], labels[LabelOwnerName]; kind != "" && name != "" {
		owner := Owner{Kind: kind, Name: name}
		manager := owner.FieldManager(e.FieldManager)
		digest, err := contentDigestOf(item, manager, e.Composers)
		var note *Error
		if err == nil {
			var fs []foreignField
			if fs, err = e.foreignSpecFields(item, owner, manager); err == nil && len(fs) > 0 {
				digest, note = digestDrifted, driftNote(entry, fs)
			}
		}
		k := ownerKey{kind: kind, name: name, id: labels[LabelOwnerID]}
		addBoth(k, digest, err)
		if note != nil {
			l.owners[k].drift = append(l.owners[k].drift, note)
			if k.id != "" {
				k.id = ""
				l.owners[k].drift = append(l.owners[k].drift, note)
			}
		}
	}
	var composed map[string]composedState
	for k, v := range labels {
		i := strings.Index(k, contributionInfix)
		if v == "" || i <= 0 {
			continue
		}
		id := v
		if id == "true" {
			id = ""
		}
		// Its digest is its composer's to compute, when it is read (Read).
		addBoth(ownerKey{kind: k[:i], name: k[i+len(contributionInfix):], id: id, composed: true}, "", nil)
		if composed == nil {
			composed = map[string]composedState{}
		}
		if _, done := composed[k[:i]]; !done {
			composed[k[:i]] = e.composedStateOf(item, k[:i])
		}
	}
	if gvk == configMapKind {
		l.kept = append(l.kept, item)
	}
	l.objects[item.GetNamespace()+"/"+item.GetName()] = listedObject{uid: item.GetUID(), resourceVersion: item.GetResourceVersion(), labels: labels, composed: composed}
}

// wroteEntries marks the listings of the clusters and kinds of entries
// stale.
func (e *Engine) wroteEntries(entries ...[]Entry) {
	seen := map[listKey]bool{}
	for _, es := range entries {
		for _, en := range es {
			k := listKey{en.Cluster, schema.FromAPIVersionAndKind(en.APIVersion, en.Kind)}
			if !seen[k] {
				seen[k] = true
				e.wrote(k.cluster, k.gvk)
			}
		}
	}
}

// kindAbsent asks the cluster's discovery whether it serves gvr: absent
// only when discovery says so (the group version is not served, or does
// not list the resource). Otherwise it says what discovery said.
func (e *Engine) kindAbsent(cluster string, gvr schema.GroupVersionResource) (bool, string) {
	c, err := e.Clients.Get(cluster)
	if err != nil {
		return false, fmt.Sprintf("could not be asked (%v)", err)
	}
	if c.Discovery == nil {
		return false, "is not available"
	}
	list, err := c.Discovery.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	switch {
	case apierrors.IsNotFound(err):
		return true, ""
	case err != nil:
		return false, fmt.Sprintf("failed (%v)", err)
	}
	for _, r := range list.APIResources {
		if r.Name == gvr.Resource {
			return false, "lists the resource as served"
		}
	}
	return true, ""
}
