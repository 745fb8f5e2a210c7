package engine

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// Apply makes the clusters hold exactly desired for owner, in two phases:
// first it server-side applies every desired object, clusters in parallel;
// then, only if every write succeeded, it deletes the objects of prior (the
// last inventory) that are no longer desired. So a client cluster never
// loses the objects that still route traffic while a new backend's objects
// are not in place yet.
//
// A cluster that cannot be reached, where nothing of owner changes, is
// no failure (outage.go): its entries are kept and its error is a warning
// (ErrUnchangedUnreachable), which lets the prune of the other clusters go
// on.
//
// The returned inventory lists exactly what exists afterwards, also when
// some writes failed: applied objects, plus prior objects that could not be
// (or were not yet) deleted or updated, plus objects whose write or delete
// was cut off before the cluster answered (with DigestUnconfirmed: they may
// or may not exist). The error names each failure.
func (e *Engine) Apply(ctx context.Context, owner Owner, desired []Desired, prior []Entry) ([]Entry, error) {
	// Pull clusters get their objects through their artifact (sink.go),
	// published after the push writes: a prune leaves an artifact only
	// when every write succeeded, as it leaves a cluster.
	sp := e.splitPull(owner, desired, prior)
	allDesired, allPrior := desired, prior
	desired, prior = sp.restDesired, sp.restPrior
	var want []Entry
	for _, d := range desired {
		want = append(want, d.Entry)
	}
	wanted := map[string]bool{}
	for _, d := range desired {
		wanted[d.Key().String()] = true
	}
	var stale []Entry
	for _, p := range prior {
		if !wanted[p.Key().String()] {
			stale = append(stale, p)
		}
	}
	applied, errs := perCluster(ctx, clustersOf(want), func(ctx context.Context, cluster string) ([]Entry, []*Error) {
		var ds []Desired
		for _, d := range desired {
			if d.Cluster == cluster {
				ds = append(ds, d)
			}
		}
		logProgress(ctx, "writing cluster", owner, cluster, "objects", len(ds))
		got, errs := e.upsertCluster(ctx, owner, cluster, ds, byCluster(prior, cluster))
		got, errs = keepUnchanged(owner, cluster, ds, byCluster(prior, cluster), got, errs) // outage.go
		logProgress(ctx, "cluster written", owner, cluster, "objects", len(got), "failures", len(failures(errs)))
		return got, errs
	})
	entries := applied
	published, publishErrs, leftovers := e.publishPull(ctx, owner, sp, allDesired, allPrior, len(failures(errs)) == 0 && len(sp.errs) == 0)
	publishErrs = append(publishErrs, sp.errs...)
	entries = append(entries, sp.entries...)
	// Objects server-side apply wrote on a cluster that is a pull one now
	// are pruned from here: its artifact never held them.
	stale = append(stale, leftovers...)
	if len(failures(errs)) > 0 || len(publishErrs) > 0 {
		// Prune nothing after a failed write: what would be pruned may be
		// what traffic still relies on. The next apply prunes it.
		for _, s := range stale {
			logEntry(ctx, "kept, not pruned: a write failed in this apply", owner, s)
		}
		entries = append(entries, stale...)
	} else {
		left, pruneErrs := perCluster(ctx, clustersOf(stale), func(ctx context.Context, cluster string) ([]Entry, []*Error) {
			logProgress(ctx, "pruning cluster", owner, cluster, "objects", len(byCluster(stale, cluster)))
			left, errs := e.pruneCluster(ctx, owner, cluster, byCluster(stale, cluster))
			logProgress(ctx, "cluster pruned", owner, cluster, "left", len(left), "failures", len(errs))
			return left, errs
		})
		entries, errs = append(entries, left...), append(errs, pruneErrs...)
	}
	entries, errs = append(entries, published...), append(errs, publishErrs...)
	if len(failures(errs)) == 0 {
		// Former artifacts of push clusters lose owner's objects once
		// every write here succeeded (they are on the cluster by push).
		errs = append(errs, e.unpublishRetired(ctx, owner, clustersOf(want, prior))...)
	}
	SortEntries(entries)
	errs.sort()
	e.finishApplyErrors(errs, clustersOf(want, stale))
	e.wroteEntries(want, prior) // listings taken before are out of date
	return entries, errs.Err()
}

// Delete removes every object of prior that owner still owns. It returns
// what is left.
func (e *Engine) Delete(ctx context.Context, owner Owner, prior []Entry) ([]Entry, error) {
	return e.Apply(ctx, owner, nil, prior)
}

// upsertCluster applies the desired objects of one cluster and returns the
// entries of what exists of them afterwards.
func (e *Engine) upsertCluster(ctx context.Context, owner Owner, cluster string, desired []Desired, prior []Entry) ([]Entry, []*Error) {
	wanted := map[string]bool{}
	for _, d := range desired {
		wanted[d.Key().String()] = true
	}
	var kept []Entry // prior entries of desired objects, if the cluster cannot be reached
	for _, p := range prior {
		if wanted[p.Key().String()] {
			kept = append(kept, p)
		}
	}
	c, err := e.Clients.Get(cluster)
	if err != nil {
		logCluster(ctx, "cluster unreachable: nothing written there, prior entries kept", owner, cluster, "kept", len(kept), "error", err.Error())
		return kept, []*Error{clusterError(cluster, "Connecting", err)}
	}
	had := map[string]Entry{}
	for _, p := range prior {
		had[p.Key().String()] = p
	}
	results := make([]*Entry, len(desired))
	errs := make([]*Error, len(desired))
	bounded(len(desired), e.concurrency(), func(i int) {
		d := desired[i]
		prev, existed := had[d.Key().String()]
		// An unconfirmed entry may name an object that was never created,
		// so its name is checked for someone else's object first.
		if err := e.upsert(ctx, c.Dynamic, owner, d, existed && prev.Digest != DigestUnconfirmed); err != nil {
			errs[i] = err
			if serverError(err) && !errors.Is(err, errNotOurs) {
				// The cluster answered 5xx: the write may have happened. Read
				// before deciding: gone means it did not; there (ours), or
				// unreadable, means its content is unknown.
				if e.absent(ctx, c.Dynamic, d.Entry) {
					logEntry(ctx, "write answered 5xx and the object is not there: not listed", owner, d.Entry, "error", err.Summary)
					return
				}
				logEntry(ctx, "write answered 5xx: listed as unconfirmed", owner, d.Entry, "error", err.Summary)
				maybe := d.Entry
				maybe.Digest = DigestUnconfirmed
				results[i] = &maybe
			} else if existed && !errors.Is(err, errNotOurs) && !errors.Is(err, errNotRecreated) {
				logEntry(ctx, "write failed, prior entry kept", owner, d.Entry, "error", err.Summary)
				results[i] = &prev // still there, as it was
			} else if unconfirmed(err) {
				logEntry(ctx, "write cut off before the cluster answered: listed as unconfirmed", owner, d.Entry, "error", err.Summary)
				maybe := d.Entry // it may have been created: never forget it
				maybe.Digest = DigestUnconfirmed
				results[i] = &maybe
			} else {
				logEntry(ctx, "write failed, not listed", owner, d.Entry, "error", err.Summary)
			}
			return
		}
		logEntry(ctx, "applied", owner, d.Entry, "existed", existed, "digest", d.Digest)
		entry := d.Entry
		results[i] = &entry
	})
	return collect(results, errs)
}

// pruneCluster deletes stale objects of one cluster and returns the entries
// of those still there.
func (e *Engine) pruneCluster(ctx context.Context, owner Owner, cluster string, stale []Entry) ([]Entry, []*Error) {
	c, err := e.Clients.Get(cluster)
	if err != nil {
		return stale, []*Error{clusterError(cluster, "Connecting", err)}
	}
	kept := make([]*Entry, len(stale))
	errs := make([]*Error, len(stale))
	bounded(len(stale), e.concurrency(), func(i int) {
		if err := e.prune(ctx, c.Dynamic, owner, stale[i]); err != nil {
			errs[i] = err
			kept[i] = &stale[i]
			if unconfirmed(err) {
				kept[i].Digest = DigestUnconfirmed // it may be gone
			}
			logEntry(ctx, "prune failed, entry kept", owner, stale[i], "error", err.Summary, "unconfirmed", unconfirmed(err))
			return
		}
		logEntry(ctx, "pruned", owner, stale[i])
	})
	return collect(kept, errs)
}

func collect(entries []*Entry, errs []*Error) ([]Entry, []*Error) {
	var out []Entry
	for _, r := range entries {
		if r != nil {
			out = append(out, *r)
		}
	}
	var outErrs []*Error
	for _, err := range errs {
		if err != nil {
			outErrs = append(outErrs, err)
		}
	}
	return out, outErrs
}

// DigestUnconfirmed is the digest of an inventory entry whose object may or
// may not exist: a request to create or delete it was sent, but the
// connection failed or timed out before the cluster answered. Listing it
// keeps an object that was created from becoming an orphan; the next
// refresh replaces the entry with what the cluster holds, and as no plan
// produces this digest, a plan never takes the object for up to date.
const DigestUnconfirmed = "unconfirmed"

// serverError reports whether the cluster answered a write with a 5xx
// status: it may or may not have committed it.
func serverError(e *Error) bool {
	var status apierrors.APIStatus
	return e != nil && errors.As(e.Err, &status) && status.Status().Code >= 500
}

// absent reads an object after an uncertain write: true only when the
// cluster says it is not there.
func (e *Engine) absent(ctx context.Context, dyn dynamic.Interface, en Entry) bool {
	gvr, err := resourceFor(en.APIVersion, en.Kind)
	if err != nil {
		return false
	}
	_, err = dyn.Resource(gvr).Namespace(en.Namespace).Get(ctx, en.Name, metav1.GetOptions{})
	return apierrors.IsNotFound(err) && !isMissingResource(err)
}

// unconfirmed reports whether a failed request may still have taken effect:
// the cluster never answered (transport error, timeout, cancellation), as
// opposed to answering with an error status, or the request never leaving
// (connection refused, unknown host).
func unconfirmed(e *Error) bool {
	if e == nil || e.Err == nil {
		return false
	}
	var status apierrors.APIStatus
	var dnsErr *net.DNSError
	if errors.As(e.Err, &status) || errors.As(e.Err, &dnsErr) || errors.Is(e.Err, syscall.ECONNREFUSED) {
		return false
	}
	var urlErr *url.Error
	return errors.As(e.Err, &urlErr) || errors.Is(e.Err, context.Canceled) || errors.Is(e.Err, context.DeadlineExceeded)
}

// upsert server-side applies one object, never onto someone else's.
//
// An object that is not yet in our inventory is read first: if it exists
// without our owner labels it belongs to someone else and is left alone.
// An object in our inventory may have been replaced since by someone
// else's of the same name (a saved plan applied later, or an apply with
// -refresh=false). If this process's listing saw it as ours, the apply
// carries the UID it had there: the API server refuses to change an object
// with another UID (metadata.uid is immutable) or to create one in place
// of a deleted one (a conflict), and either refusal, like any conflict,
// sends it down the checked path.
// Otherwise it is read first, like a new one. Large applies therefore read
// one listing per cluster and kind instead of every object.
func (e *Engine) upsert(ctx context.Context, dyn dynamic.Interface, owner Owner, d Desired, known bool) *Error {
	rec := &recordingApplies{}
	if err := e.upsertOnce(ctx, dyn, owner, d, known, rec); err != nil || rec.last == nil {
		return err
	}
	if err := e.releaseFormerManagers(ctx, rec, owner, d); err != nil {
		return err
	}
	return e.restoreSpec(ctx, rec, owner, d, owner.FieldManager(e.FieldManager))
}

// recordingApplies keeps the object the last successful apply returned.
type recordingApplies struct {
	dynamic.ResourceInterface
	last *unstructured.Unstructured
}

func (r *recordingApplies) Apply(ctx context.Context, name string, obj *unstructured.Unstructured, opts metav1.ApplyOptions, sub ...string) (*unstructured.Unstructured, error) {
	u, err := r.ResourceInterface.Apply(ctx, name, obj, opts, sub...)
	if err == nil {
		r.last = u
	}
	return u, err
}

// formerManagersOf reports whether every manager is a former field
// manager of owner's own intent (field_manager changed since): its fields
// are ours to take over.
func formerManagersOf(owner Owner, managers []string) bool {
	for _, m := range managers {
		if !intentManager(m, owner.Kind, owner.Name) {
			return false
		}
	}
	return len(managers) > 0
}

// composersOnly reports whether every manager is one of this provider's
// composers. An object's owner decides the fields it declares over a
// composer's copy of them: a virtual destination's new hostname in its
// DestinationRule's spec.host, which traffic policies' settings there
// repeat until they are applied next (after it, as they depend on it).
func (e *Engine) composersOnly(managers []string) bool {
	for _, m := range managers {
		if composerKindOf(m) == "" { // any field_manager base
			return false
		}
	}
	return len(managers) > 0
}

// releaseFormerManagers migrates ownership after the provider's
// field_manager changed: an intent's earlier manager (another base, the
// same <kind>.<name>) still owns the fields it applied, which would then
// never be removed. Applying an empty configuration as that manager makes
// the API server drop the fields only it owned and its managedFields
// entry; the current manager, which just applied, keeps the rest.
func (e *Engine) releaseFormerManagers(ctx context.Context, ri *recordingApplies, owner Owner, d Desired) *Error {
	manager := owner.FieldManager(e.FieldManager)
	for _, mf := range ri.last.GetManagedFields() {
		if mf.Operation != metav1.ManagedFieldsOperationApply || mf.Manager == manager || !intentManager(mf.Manager, owner.Kind, owner.Name) {
			continue
		}
		empty := withUID(map[string]any{"apiVersion": d.APIVersion, "kind": d.Kind,
			"metadata": map[string]any{"name": d.Name, "namespace": d.Namespace}}, ri.last.GetUID())
		if _, err := ri.ResourceInterface.Apply(ctx, d.Name, empty, metav1.ApplyOptions{FieldManager: mf.Manager}); err != nil {
			return objectError(d.Entry, "Releasing the fields of former field manager "+mf.Manager+" on", err)
		}
		logEntry(ctx, "released the fields of a former field manager", owner, d.Entry, "former_manager", mf.Manager)
	}
	return nil
}

func (e *Engine) upsertOnce(ctx context.Context, dyn dynamic.Interface, owner Owner, d Desired, known bool, rec *recordingApplies) *Error {
	if d.Manifest == nil {
		return objectError(d.Entry, "Applying", fmt.Errorf("its content is still unknown at apply time"))
	}
	gvr, err := resourceFor(d.APIVersion, d.Kind)
	if err != nil {
		return objectError(d.Entry, "Applying", err)
	}
	rec.ResourceInterface = dyn.Resource(gvr).Namespace(d.Namespace)
	var ri dynamic.ResourceInterface = rec
	if owner.Composition != nil {
		if e.Shared == nil {
			return noShared(owner, d.Cluster, d.Entry.String(), "Applying")
		}
		rec.last = nil
		err := e.Shared.Compose(ctx, e, ri, owner, d.Entry, false)
		rec.last = nil // composed objects have one shared manager
		return err
	}
	obj := &unstructured.Unstructured{Object: d.Manifest}
	manager := owner.FieldManager(e.FieldManager)
	if known {
		gvk := gvr.GroupVersion().WithKind(d.Kind)
		if seen, ok := e.lookup(ctx, dyn, d.Cluster, gvk, d.Namespace, d.Name); ok && owner.owns(seen.labels) {
			pinned := withUID(d.Manifest, seen.uid)
			_, err = ri.Apply(ctx, d.Name, pinned, metav1.ApplyOptions{FieldManager: manager, Force: e.ForceConflicts})
			// A conflict, with field managers or with the UID (deleted
			// since), is sorted out on the checked path.
			if !uidRefused(err) && !apierrors.IsConflict(err) {
				return e.afterApply(ctx, ri, owner, d, pinned, manager, err)
			}
		}
	}
	uid, adopting, cerr := e.checkedOrRead(ctx, ri, owner, d.Entry)
	if cerr != nil {
		logEntry(ctx, "refused: the object exists and is not ours", owner, d.Entry)
		return cerr
	}
	if uid != "" {
		// Ours when read: the apply names it by that UID, so an object
		// that replaced it in between is refused by the API server.
		obj = withUID(d.Manifest, uid)
	}
	if adopting {
		logEntry(ctx, "adopting an object this provider did not write", owner, d.Entry)
	}
	_, err = ri.Apply(ctx, d.Name, obj, metav1.ApplyOptions{FieldManager: manager, Force: e.ForceConflicts || adopting})
	if uidRefused(err) || (uid != "" && apierrors.IsConflict(err) && len(conflictFields(err)) == 0) {
		return objectError(d.Entry, "Applying", fmt.Errorf("%w: the object was replaced while it was being written; apply again", errNotOurs))
	}
	return e.afterApply(ctx, ri, owner, d, obj, manager, err)
}

// afterApply handles the outcome of applying obj, an object of ours:
// conflicts with plain edits are drift and are overridden; a change the
// API server will not make in place replaces the object; anything else is
// an error.
func (e *Engine) afterApply(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, d Desired, obj *unstructured.Unstructured, manager string, err error) *Error {
	if err != nil && apierrors.IsConflict(err) {
		managers, fields := conflictManagers(err)
		if !e.onlyEdits(ctx, ri, d.Name, managers) && !formerManagersOf(owner, managers) && !e.composersOnly(managers) {
			logEntry(ctx, "conflict with other field managers: not forced", owner, d.Entry, "managers", managers, "fields", fields)
			return conflictError(d.Entry, managers, fields, err)
		}
		logEntry(ctx, "drift from plain edits: restoring the declared fields", owner, d.Entry, "managers", managers, "fields", fields)
		// Only kubectl-edit-style updates changed our fields: that is
		// drift, and restoring the declared values is the point of apply.
		_, err = ri.Apply(ctx, d.Name, obj, metav1.ApplyOptions{FieldManager: manager, Force: true})
	}
	if err != nil && immutableRefused(err) {
		logEntry(ctx, "change refused as immutable: replacing the object", owner, d.Entry)
		return e.replace(ctx, ri, owner, d, manager, err)
	}
	if err != nil {
		return objectError(d.Entry, "Applying", err)
	}
	return nil
}

// replace deletes an object of ours whose change touches immutable fields
// and creates it again. The delete carries the UID of the object read, so
// it never removes an object that replaced ours meanwhile; the re-create
// is a create, so it never takes over an object another writer created
// under that name after the delete (an apply would merge into it). The
// apply that follows is pinned to the UID the create gave, and forced:
// the create recorded the intent's manager as an updater, and the apply
// makes it the applier of its fields, as for every object it writes.
func (e *Engine) replace(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, d Desired, manager string, cause error) *Error {
	live, err := ri.Get(ctx, d.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
	case err != nil:
		return objectError(d.Entry, "Replacing", err)
	case !owner.owns(live.GetLabels()):
		return objectError(d.Entry, "Applying", cause)
	default:
		uid := live.GetUID()
		err := ri.Delete(ctx, d.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return objectError(d.Entry, "Replacing", fmt.Errorf("the change needs the object replaced (%v), and deleting it failed: %w", cause, err))
		}
	}
	created, err := ri.Create(ctx, &unstructured.Unstructured{Object: d.Manifest}, metav1.CreateOptions{FieldManager: manager})
	if err != nil {
		return objectError(d.Entry, "Replacing", fmt.Errorf("%w: %w", errNotRecreated, err))
	}
	if _, err := ri.Apply(ctx, d.Name, withUID(d.Manifest, created.GetUID()), metav1.ApplyOptions{FieldManager: manager, Force: true}); err != nil {
		return objectError(d.Entry, "Replacing", err)
	}
	return nil
}

// errNotRecreated marks an object deleted to be replaced whose new version
// could not be written: it is gone (or, if the request was cut off,
// unconfirmed), so its previous entry must not stay in the inventory.
var errNotRecreated = errors.New("it was deleted to be replaced and could not be created again")

// immutableRefused reports whether the API server refused a change only
// because it touches fields that cannot change in place (a ConfigMap made
// immutable, say), other than the UID an apply names its object by.
func immutableRefused(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil || len(status.Status().Details.Causes) == 0 {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		// Only field-level causes the API server's validation gives for a
		// field that cannot change (field.Invalid / field.Forbidden with
		// "immutable"), never the UID an apply names its object by.
		fieldCause := c.Type == metav1.CauseTypeFieldValueInvalid || c.Type == metav1.CauseType(field.ErrorTypeForbidden)
		if !fieldCause || c.Field == "" || c.Field == "metadata.uid" || !strings.Contains(c.Message, "immutable") {
			return false
		}
	}
	return true
}

// withUID returns a copy of manifest that names the object by uid as well.
// metadata.uid is not a field anyone owns: server-side apply leaves it out
// of managedFields, so it changes no digest.
func withUID(manifest map[string]any, uid types.UID) *unstructured.Unstructured {
	out := make(map[string]any, len(manifest))
	for k, v := range manifest {
		out[k] = v
	}
	meta := map[string]any{}
	if m, ok := manifest["metadata"].(map[string]any); ok {
		for k, v := range m {
			meta[k] = v
		}
	}
	meta["uid"] = string(uid)
	out["metadata"] = meta
	return &unstructured.Unstructured{Object: out}
}

// uidRefused reports whether the API server refused an apply because the
// object it names by UID was replaced by another one (metadata.uid is
// immutable).
func uidRefused(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) || status.Status().Details == nil {
		return false
	}
	for _, c := range status.Status().Details.Causes {
		if c.Field == "metadata.uid" {
			return true
		}
	}
	return false
}

// onlyEdits reports whether every conflicting manager changed the object
// with plain updates (kubectl edit, patch, replace) rather than declaring
// ownership with server-side apply.
func (e *Engine) onlyEdits(ctx context.Context, ri dynamic.ResourceInterface, name string, managers []string) bool {
	if len(managers) == 0 {
		return false
	}
	live, err := ri.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	conflicting := map[string]bool{}
	for _, m := range managers {
		conflicting[m] = true
	}
	for _, mf := range live.GetManagedFields() {
		if conflicting[mf.Manager] && mf.Operation == metav1.ManagedFieldsOperationApply {
			return false
		}
	}
	return true
}

// checkUnowned reads the object an apply is about to write: nothing
// there, or ours (its UID returned), or one this provider did not write
// that the owner adopts (its UID returned, adopting set), or an error
// saying whose it is.
func (e *Engine) checkUnowned(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, entry Entry) (uid types.UID, adopting bool, _ *Error) {
	live, err := ri.Get(ctx, entry.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && !isMissingResource(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, objectError(entry, "Applying", err)
	}
	labels := live.GetLabels()
	if owner.owns(labels) {
		return live.GetUID(), false, nil // ours, left over from an interrupted apply
	}
	if owner.Adopt && labels[LabelManagedBy] != ManagedByValue {
		if c, err := e.Clients.Get(entry.Cluster); err == nil {
			// A warning (the Kustomization could not be read, or is on
			// another cluster) was the plan's; the adoption proceeds.
			if ferr, _ := e.fluxApplied(ctx, c.Dynamic, owner, entry, labels, "adopt"); ferr != nil {
				ferr.Err = fmt.Errorf("%w: %w", errNotOurs, errFluxApplied)
				return "", false, ferr
			}
		}
		return live.GetUID(), true, nil
	}
	if labels[LabelManagedBy] == ManagedByValue && labels[LabelOwnerKind] == "" && len(contributingKinds(live, e.Composers)) > 0 {
		// Only composers wrote it (an earlier build's composer made a
		// virtual destination's DestinationRule): the intent takes it
		// over, keeping the contributions (issue 36).
		return live.GetUID(), false, nil
	}
	detail := fmt.Sprintf("%s already exists and was not created by terraform-provider-mesh, so the provider leaves it untouched. "+
		"Delete or rename it, or take it over by setting adopt_existing = true on the resource (the object is then rewritten to the intent, keeping its identity).",
		entry)
	if owner.Kind == intentkind.Cluster.Owner {
		detail = fmt.Sprintf("%s already exists and was not created by terraform-provider-mesh, so the provider leaves it untouched. "+
			"Delete or rename it, or adopt it by adding the labels %s=%s, %s=%s and %s=%s, then apply again.",
			entry, LabelManagedBy, ManagedByValue, LabelOwnerKind, owner.Kind, LabelOwnerName, owner.Name)
	}
	if labels[LabelManagedBy] == ManagedByValue {
		detail = fmt.Sprintf("%s is already owned by %s %q. Two intents produce the same object; rename one of them.",
			entry, labels[LabelOwnerKind], labels[LabelOwnerName])
		if labels[LabelOwnerKind] == owner.Kind && labels[LabelOwnerName] == owner.Name {
			detail = fmt.Sprintf("%s is owned by another %s named %q (instance %s), from another Terraform state or a replaced resource. "+
				"Two states must not declare intents with the same name for the same objects; rename one. If that instance is gone for good, "+
				"delete the object or relabel it %s=%s.", entry, owner.Kind, owner.Name, labels[LabelOwnerID], LabelOwnerID, owner.ID)
		}
	}
	return "", false, &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: fmt.Sprintf("Applying %s", entry), Detail: detail, Err: errNotOurs}
}

// errNotOurs marks the refusal to write an object someone else owns. Such
// an object leaves the inventory, even if an earlier one of the same name
// was ours: what is there now is not.
var errNotOurs = errors.New("the object belongs to someone else")

// prune deletes an object that left the desired set, if it is still ours.
func (e *Engine) prune(ctx context.Context, dyn dynamic.Interface, owner Owner, entry Entry) *Error {
	gvr, err := resourceFor(entry.APIVersion, entry.Kind)
	if err != nil {
		return objectError(entry, "Deleting", err)
	}
	ri := dyn.Resource(gvr).Namespace(entry.Namespace)
	if owner.Composition != nil {
		if e.Shared == nil {
			return noShared(owner, entry.Cluster, entry.String(), "Releasing")
		}
		return e.Shared.Compose(ctx, e, ri, owner, entry, true)
	}
	// Seen in this process's listing of the kind: delete it as it was
	// then, without reading it again. If it changed since, the
	// preconditions fail and it is read below.
	gvk := gvr.GroupVersion().WithKind(entry.Kind)
	if seen, ok := e.lookup(ctx, dyn, entry.Cluster, gvk, entry.Namespace, entry.Name); ok && owner.owns(seen.labels) {
		err := ri.Delete(ctx, entry.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &seen.uid, ResourceVersion: &seen.resourceVersion}})
		switch {
		case err == nil || apierrors.IsNotFound(err):
			return nil
		case !apierrors.IsConflict(err):
			return objectError(entry, "Deleting", err)
		}
	}
	live, err := ri.Get(ctx, entry.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil // already gone (or the CRD with it)
	}
	if err != nil {
		return objectError(entry, "Deleting", err)
	}
	if !owner.owns(live.GetLabels()) {
		logEntry(ctx, "not pruned: the object is someone else's now", owner, entry)
		return nil // someone else's now: never delete it
	}
	uid := live.GetUID()
	err = ri.Delete(ctx, entry.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	switch {
	case apierrors.IsConflict(err):
		// The UID precondition failed: the object read was deleted and
		// another of the same name created since. Ours is gone; the new
		// one is not this prune's to judge (a refresh lists it if it
		// carries our labels).
		logEntry(ctx, "not pruned: the object was replaced since it was read", owner, entry)
		return nil
	case err != nil && !apierrors.IsNotFound(err):
		return objectError(entry, "Deleting", err)
	}
	return nil
}
