package engine

import (
	"context"
	"errors"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
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

// What the composition of shared objects (internal/shareddata: the
// contributions on a composed object, their verdict, composed on a
// cluster or in a pull cluster's artifact) uses of the engine: the
// server-side apply of a composed object, the listings, the artifact
// plumbing, and the helpers that keep their messages the engine's.

// ContributionPrefix is the prefix of the annotation and label keys of
// the contributions of intent kind kind (Owner.ContributionKey is the
// prefix and a name).
func ContributionPrefix(kind string) string { return kind + contributionInfix }

// ContributionsOf are the contribution annotations of kind on live and
// the instances their labels record ("" for none), by name; a label
// without an annotation is listed in ids only.
func ContributionsOf(live *unstructured.Unstructured, kind string) (raws, ids map[string]string) {
	return contributionsOf(live, kind)
}

// KeptAnnotations is the size of live's annotations that a composer of
// kind's write keeps: all but kind's contributions.
func KeptAnnotations(live *unstructured.Unstructured, kind string) int {
	return keptAnnotations(live, kind)
}

// AnnotationsWithin refuses a composed write whose contributions (keys
// prefix and name), with kept bytes of other annotations, exceed the
// annotations limit.
func AnnotationsWithin(entry Entry, prefix string, contributions map[string]composition.Encoded, kept int) *Error {
	return annotationsWithin(entry, prefix, contributions, kept)
}

// DigestOf is the digest of v, as entries hold them.
func DigestOf(v any) (string, error) { return digestOf(v) }

// DigestDrifted is the digest of an entry whose object someone else
// changed: no plan produces it, so the plan rewrites the object.
const DigestDrifted = digestDrifted

// PartDigest is the digest of raw, o's contribution as stored on an
// object, in its composer's canonical form: the digest of o's entry.
func (o Owner) PartDigest(raw string) (string, error) { return o.partDigest(raw) }

// ContributionValue is the value of o's contribution label: its instance
// ID ("true" without one).
func (o Owner) ContributionValue() string { return o.idValue() }

// Owns reports whether labels mark an object as o's (for a composed
// intent: it holds o's contribution).
func (o Owner) Owns(labels map[string]string) bool { return o.owns(labels) }

// ComposerManager is the field manager of every composer of o's kind.
func (o Owner) ComposerManager() string { return o.composerManager() }

// KindWords is an intent kind as prose: "traffic policy".
func KindWords(kind string) string { return kindWords(kind) }

// LogEntry logs a decision on one object at DEBUG (log.go).
func LogEntry(ctx context.Context, msg string, owner Owner, en Entry, extra ...any) {
	logEntry(ctx, msg, owner, en, extra...)
}

// LogCluster logs a decision on one cluster at DEBUG (log.go).
func LogCluster(ctx context.Context, msg string, owner Owner, cluster string, extra ...any) {
	logCluster(ctx, msg, owner, cluster, extra...)
}

// UIDRefused reports whether the API server refused a write because the
// object it names by UID was replaced by another one.
func UIDRefused(err error) bool { return uidRefused(err) }

// IsMissingResource reports whether a 404 is for an unknown resource type
// (no CRD) rather than a missing object.
func IsMissingResource(err error) bool { return isMissingResource(err) }

// RetryConflicts runs try until it is done, stepping through the
// engine's backoff between attempts that lost a race to another writer
// (retry.go).
func (e *Engine) RetryConflicts(ctx context.Context, try func(attempt int) (done bool, err error)) error {
	return e.retryConflicts(ctx, try)
}

// WithoutRetryWaits makes e retry a write that lost a race as often as
// it would, without waiting between attempts: for tests, so that no
// clock decides them.
func (e *Engine) WithoutRetryWaits() *Engine {
	e.retryBackoff = &wait.Backoff{Steps: conflictBackoff.Steps}
	return e
}

// FluxApplied is the refusal (or the warning, when it could not be
// checked) of a write of entry on a push cluster whose labels say a Flux
// Kustomization applies it (sink_flux.go).
func (e *Engine) FluxApplied(ctx context.Context, dyn dynamic.Interface, owner Owner, entry Entry, labels map[string]string, doing string) (refusal, warning *Error) {
	return e.fluxApplied(ctx, dyn, owner, entry, labels, doing)
}

// FluxKustomizationOf is the Flux Kustomization (namespace/name) whose
// labels an object carries, "" for none.
func FluxKustomizationOf(labels map[string]string) (namespace, name string) {
	return fluxKustomizationOf(labels)
}

// WriteComposed writes manifest as the composed object entry by
// server-side apply, as owner's kind's composer, pinned to live (nil:
// created first); adopting takes it over from whoever wrote it
// (composed_write.go).
func (e *Engine) WriteComposed(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, entry Entry, live *unstructured.Unstructured, manifest map[string]any, adopting bool) error {
	return e.writeComposed(ctx, ri, owner, entry, live, manifest, adopting)
}

// ForgetAndRewrite removes the contributions of names (keys prefix and
// name) from live and rewrites its spec to manifest's, in one patch
// pinned to live (composed_write.go).
func ForgetAndRewrite(ctx context.Context, ri dynamic.ResourceInterface, live *unstructured.Unstructured, prefix string, names []string, manager string, manifest map[string]any) (*unstructured.Unstructured, error) {
	return forgetAndRewrite(ctx, ri, live, prefix, names, manager, manifest)
}

// ComposedListing is the objects of one kind in one cluster that hold
// contributions of one intent kind, from a listing (listcache.go). Read,
// never change, what it holds.
type ComposedListing struct {
	l    *listing
	kind string
}

// ListedComposed is the objects of gvk in cluster holding contributions
// of intent kind kind: from a listing that reflects every write of this
// process (latest false), or from the latest listing, stale or not,
// listing only when there is none (latest true: advice that the write it
// advises on checks again).
func (e *Engine) ListedComposed(ctx context.Context, dyn dynamic.Interface, cluster string, gvk schema.GroupVersionKind, kind string, latest bool) (ComposedListing, *Error) {
	list := e.listed
	if latest {
		list = e.listedSnapshot
	}
	l, err := list(ctx, dyn, cluster, gvk)
	if err != nil {
		return ComposedListing{}, err
	}
	return ComposedListing{l: l, kind: kind}, nil
}

// Get is the object namespace/name as its contributions of the
// listing's kind stand, and its labels; ok is false when it holds none.
func (c ComposedListing) Get(namespace, name string) (st ComposedObject, labels map[string]string, ok bool) {
	o, found := c.l.objects[namespace+"/"+name]
	s, composed := o.composed[c.kind]
	if !found || !composed {
		return ComposedObject{}, nil, false
	}
	return s.Object(), o.labels, true
}

// Keys are the namespace/name of every object of the listing, in order.
func (c ComposedListing) Keys() []string {
	keys := make([]string, 0, len(c.l.objects))
	for k, o := range c.l.objects {
		if _, ok := o.composed[c.kind]; ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	return keys
}

// PullArtifactOf is the artifact of cluster when it is delivered by pull
// (pull true).
func (e *Engine) PullArtifactOf(cluster string) (a PullArtifact, pull bool, err error) {
	return e.pullOf(cluster)
}

// FetchArtifact is the artifact at t as this process last fetched or
// published it (found false: none there).
func (e *Engine) FetchArtifact(ctx context.Context, t oci.Target) (a oci.Artifact, found bool, err error) {
	return e.pulls.fetch(ctx, t)
}

// PublishArtifact changes the objects of a's artifact and publishes them,
// serialised with this process's other publishers of it: change edits
// objs in place, or returns an error that leaves the artifact as it was.
// The result is what Publish's end makes of it (Published).
func (e *Engine) PublishArtifact(ctx context.Context, a PullArtifact, change func(objs oci.Objects) error) (oci.Artifact, error) {
	return e.pulls.writers.For(a.Target, a.Publisher).Update(ctx, change)
}

// Published is the end of a publish of owner's objects to a's artifact
// (got and err are PublishArtifact's): on failure the prior entries
// stand; else the desired entries, the stale ones (by artifact key) kept
// when not pruning, and as leftovers the stale ones the artifact did not
// hold as owner's (held).
func (e *Engine) Published(ctx context.Context, what string, owner Owner, cluster string, a PullArtifact, got oci.Artifact, err error,
	desired []Desired, prior []Entry, staleKeys map[string]Entry, held map[string]bool, prune bool) (entries, leftovers []Entry, errs []*Error) {
	return e.published(ctx, what, owner, cluster, a, got, err, desired, prior, staleKeys, held, prune)
}

// LabelsOf are the labels of m, an object of an artifact.
func LabelsOf(m map[string]any) map[string]string { return labelsOf(m) }

// EntryOf is the entry in cluster of m, an object of an artifact.
func EntryOf(cluster string, m map[string]any) Entry { return entryOf(cluster, m) }

// NotChecked is the plan warning that a check of cluster could not look
// (IsNotChecked).
func NotChecked(cluster string, owner Owner, summary, detail string) *Error {
	return notChecked(cluster, owner, summary, detail)
}

// Sibling is another state's artifact in a pull cluster's repository:
// its target, and what it holds.
type Sibling struct {
	Target   string
	Artifact oci.Artifact
}

// Unread is a part of a repository that could not be read (What), and
// why.
type Unread struct {
	What string
	Err  error
}

// Siblings are the artifacts in a's repository under tags other than
// a's, read once per process, and what could not be read
// (sink_compose.go).
func (e *Engine) Siblings(ctx context.Context, a PullArtifact) ([]Sibling, []Unread) {
	sibs, unread := e.pulls.siblings(ctx, a)
	out := make([]Sibling, len(sibs))
	for i, s := range sibs {
		out[i] = Sibling{Target: s.target, Artifact: s.artifact}
	}
	un := make([]Unread, len(unread))
	for i, u := range unread {
		un[i] = Unread{What: u.what, Err: u.err}
	}
	return out, un
}

// ConflictAttempts is how often a write that keeps losing races to other
// writers is tried before it gives up (retry.go).
func ConflictAttempts() int { return conflictBackoff.Steps }

// Wrote marks the listing of cluster and kind stale: what a writer other
// than this engine changed there (a test's store) is in the next listing.
func (e *Engine) Wrote(cluster string, gvk schema.GroupVersionKind) { e.wrote(cluster, gvk) }

// IsFluxApplied reports whether err refuses a write of an object on a
// push cluster that a Flux Kustomization applies (sink_flux.go).
func IsFluxApplied(err error) bool { return errors.Is(err, errFluxApplied) }
