package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Composed objects are shared by several intents of one kind, e.g. the
// VirtualService of a destination that several traffic policies shape:
// Istio keeps only one VirtualService per host for sidecars, so the
// policies must meet in one object. Each intent stores its contribution
// (its intent, as JSON) in an annotation of the object; whoever writes
// recomposes the object from every contribution, under one shared field
// manager, guarded by the object's resourceVersion so that concurrent
// writers never lose each other's contribution.

// Composition makes an owner's objects composed.
type Composition struct {
	// Contribution is what this intent adds, stored verbatim. In, when
	// set, is what it adds to the objects of each cluster (restricted to
	// what composing there needs, so that it does not grow with the
	// fleet); a cluster it does not list gets Contribution.
	Contribution string
	In           map[string]string
	// Compose renders the object key from all contributions (by intent
	// name). It returns nil when nothing of the object remains.
	Compose func(key translate.Key, contributions map[string]string) (map[string]any, error)
	// Workspace is the identity of the Terraform workspace this intent
	// belongs to (the provider's workspace setting). A contribution of the
	// same name, from another instance, that says it comes from this
	// workspace is this workspace's own leftover (a destroyed or forgotten
	// resource) and is replaced; from another workspace it is a conflict.
	Workspace string
	// Check reads a contribution found on an object: the workspace it says
	// it comes from, or why it cannot be composed (contributions.go).
	Check func(raw string) (workspace string, err error)
}

// ContributionIn is what the intent stores on its objects in cluster.
func (c *Composition) ContributionIn(cluster string) string {
	if raw, ok := c.In[cluster]; ok {
		return raw
	}
	return c.Contribution
}

// composedRetries bounds the optimistic-concurrency retries of one object.
const composedRetries = 8

// ContributionKey is the annotation (and label) key of an intent's
// contribution: <kind>.mesh-intent.io/<name>.
func (o Owner) ContributionKey() string { return o.Kind + ".mesh-intent.io/" + o.Name }

func (o Owner) composerManager(base string) string {
	return managerBase(base) + composerSuffix(o.Kind)
}

// compose writes one composed object with this intent's contribution set
// (remove false) or removed (remove true).
func (e *Engine) compose(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, entry Entry, remove bool) *Error {
	doing := "Applying"
	if remove {
		doing = "Releasing"
	}
	var lastErr error
	for attempt := 0; attempt < composedRetries; attempt++ {
		err := e.composeOnce(ctx, ri, owner, entry, remove)
		if err == nil {
			return nil
		}
		if e, ok := err.(*Error); ok {
			return e // explained already (a field conflict, not ours)
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) && !uidRefused(err) {
			return objectError(entry, doing, err)
		}
		logEntry(ctx, "composed object changed by another writer: reading it again", owner, entry, "attempt", attempt+1)
		lastErr = err // someone else wrote in between: read again
	}
	return objectError(entry, doing, fmt.Errorf("the object kept changing under concurrent writers: %w", lastErr))
}

func (e *Engine) composeOnce(ctx context.Context, ri dynamic.ResourceInterface, owner Owner, entry Entry, remove bool) error {
	live, err := ri.Get(ctx, entry.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && isMissingResource(err):
		return err
	case apierrors.IsNotFound(err):
		if remove {
			return nil
		}
		live = nil
	case err != nil:
		return err
	}
	manager := owner.composerManager(e.FieldManager)
	contributions := map[string]string{}
	prefix := owner.Kind + contributionInfix
	adopting := false
	// gone are contributions on the object that this write removes: ours
	// when releasing, and those not to be trusted.
	var gone []string
	if live != nil {
		if labels := live.GetLabels(); labels[LabelManagedBy] != ManagedByValue {
			if !owner.Adopt || remove {
				return &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Applying " + entry.String(),
					Detail: fmt.Sprintf("%s already exists and was not created by terraform-provider-mesh, so the provider leaves it untouched. "+
						"Delete or rename it, or take it over by setting adopt_existing = true on the resource (it is then rewritten to the composition, keeping its identity).", entry)}
			}
			adopting = true // what it holds now is nobody's contribution
		}
		if id, ok := live.GetLabels()[owner.ContributionKey()]; ok && owner.ID != "" && id != owner.ID && id != "true" {
			theirs, _ := owner.checked(live.GetAnnotations()[owner.ContributionKey()])
			switch {
			case remove:
				// Another instance of the name contributes now (this one
				// was replaced): nothing of ours is left to release.
				return nil
			case owner.Composition.Workspace == "" || theirs != owner.Composition.Workspace:
				return &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Applying " + entry.String(),
					Detail: fmt.Sprintf("Another %s named %q (instance %s, from workspace %s) already contributes to %s; this one is from workspace %s. "+
						"Names identify contributions on a shared object, so rename one of them.", owner.Kind, owner.Name, id, WorkspaceName(theirs), entry, WorkspaceName(owner.Composition.Workspace))}
			default:
				logEntry(ctx, "replacing this workspace's leftover contribution of the same name", owner, entry, "leftover_instance", id)
			}
		}
		hand := handWritten(live, owner.Kind)
		for k, v := range live.GetAnnotations() {
			if !strings.HasPrefix(k, prefix) {
				continue
			}
			name := strings.TrimPrefix(k, prefix)
			if name == owner.Name {
				if remove {
					gone = append(gone, name)
				}
				continue
			}
			if hand[name] == "" {
				if err := owner.unreadable(v); err != nil {
					// Written by a newer provider: kept as it is, and the
					// object is not written (contributions.go).
					return unreadableError(entry, owner.Kind, name, err)
				}
			}
			if why := owner.untrusted(hand[name], v); why != "" {
				logEntry(ctx, "contribution not composed and removed: "+why, owner, entry, "annotation", k)
				gone = append(gone, name)
				continue
			}
			contributions[name] = v
		}
		// A contribution label without its annotation is a leftover too.
		for k := range live.GetLabels() {
			if name, ok := strings.CutPrefix(k, prefix); ok && name != owner.Name {
				if _, has := live.GetAnnotations()[k]; !has {
					gone = append(gone, name)
				}
			}
		}
	}
	if !remove {
		contributions[owner.Name] = owner.Composition.ContributionIn(entry.Cluster)
	}
	manifest, err := owner.Composition.Compose(entry.Key(), contributions)
	if err != nil {
		return &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Composing " + entry.String(), Detail: err.Error(), Err: err}
	}
	if len(contributions) == 0 || manifest == nil {
		manifest = map[string]any{"apiVersion": entry.APIVersion, "kind": entry.Kind,
			"metadata": map[string]any{"name": entry.Name, "namespace": entry.Namespace}}
		if live == nil {
			return nil
		}
		if live.GetLabels()[LabelOwnerKind] == "" {
			// Nobody else holds the object: it goes.
			uid, rv := live.GetUID(), live.GetResourceVersion()
			return ri.Delete(ctx, entry.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
		}
	}
	if err := annotationsWithin(entry, prefix, contributions); err != nil {
		return err // the plan checks it first (Limits)
	}
	if live != nil && len(gone) > 0 {
		if live, err = forgetContributions(ctx, ri, live, prefix, gone, manager); err != nil {
			return err
		}
	}
	meta := manifest["metadata"].(map[string]any)
	labels := map[string]any{LabelManagedBy: ManagedByValue}
	annotations := map[string]any{}
	for name, c := range contributions {
		labels[prefix+name] = "true"
		if live != nil {
			if id, ok := live.GetLabels()[prefix+name]; ok {
				labels[prefix+name] = id // keep every contributor's instance
			}
		}
		annotations[prefix+name] = c
	}
	if !remove {
		labels[owner.ContributionKey()] = owner.idValue()
	}
	meta["labels"], meta["annotations"] = labels, annotations
	forceOurs := e.ForceConflicts
	if live == nil {
		// Create first, so two writers cannot both believe they created
		// it; the loser reads it again and recomposes. The object is
		// created with its whole composed content: Istio's validation
		// refuses a VirtualService without routes or a DestinationRule
		// without host, so there is no empty object to create first.
		// The create records the composer as an updater; the apply
		// below makes it the applier (forced, as it is its own field
		// set), so that drift is read from the composer's applied fields.
		// (What the create holds is removed explicitly when released:
		// forgetContributions.)
		created, err := ri.Create(ctx, &unstructured.Unstructured{Object: manifest}, metav1.CreateOptions{FieldManager: manager})
		if err != nil {
			return err
		}
		live, forceOurs = created, true
	}
	// Pinned to the object read, by version and UID: if another writer
	// deleted it meanwhile (its last contribution released), the apply is
	// a conflict and the compose reads again, rather than creating it anew.
	meta["resourceVersion"] = live.GetResourceVersion()
	meta["uid"] = string(live.GetUID())
	obj := &unstructured.Unstructured{Object: manifest}
	res, err := ri.Apply(ctx, entry.Name, obj, metav1.ApplyOptions{FieldManager: manager, Force: forceOurs})
	if managers, fields := conflictManagers(err); len(managers) > 0 {
		// Our own intents (a virtual destination's fields in its
		// DestinationRule) and plain edits may be taken over; another
		// tool's server-side apply is a conflict the user decides.
		if !adopting && !e.oursOrEdits(live, managers) {
			return conflictError(entry, managers, fields, err)
		}
		res, err = ri.Apply(ctx, entry.Name, obj, metav1.ApplyOptions{FieldManager: manager, Force: true})
	}
	if err != nil || res == nil {
		return err
	}
	// Fields other managers set in the composed spec are drift: the spec
	// is set back to exactly the composition (drift.go).
	if fs, ferr := e.foreignComposedFields(res, manager); ferr == nil && len(fs) > 0 {
		logEntry(ctx, "restoring the composed spec: fields set by other managers are removed", owner, entry, "foreign", describeForeign(fs))
		if err := removeFields(ctx, ri, res, fs, manager); err != nil {
			return err
		}
		obj.SetResourceVersion("")
		_, err = ri.Apply(ctx, entry.Name, obj, metav1.ApplyOptions{FieldManager: manager, Force: true})
	}
	return err
}

// WorkspaceName shows a workspace identity in messages.
func WorkspaceName(ws string) string {
	if ws == "" {
		return "(none recorded: written by an earlier provider build)"
	}
	return fmt.Sprintf("%q", ws)
}

// oursOrEdits reports whether every manager is one of this provider's or
// only ever updated the object (kubectl edit, patch).
func (e *Engine) oursOrEdits(live *unstructured.Unstructured, managers []string) bool {
	base := e.managerBase()
	applied := map[string]bool{}
	for _, mf := range live.GetManagedFields() {
		if mf.Operation == metav1.ManagedFieldsOperationApply {
			applied[mf.Manager] = true
		}
	}
	for _, m := range managers {
		if !strings.HasPrefix(m, base+"/") && applied[m] {
			return false
		}
	}
	return true
}

// contributionDigest is the digest of an intent's part in a composed
// object: what it asked for, not the composition of everyone's.
func contributionDigest(contribution string) (string, error) {
	// The kept configuration (for import) is not intent: written
	// differently, it composes the same objects.
	// Contributions are compared in one canonical form (sorted keys),
	// with or without it.
	var fields map[string]json.RawMessage
	if json.Unmarshal([]byte(contribution), &fields) == nil {
		delete(fields, ContributionConfigKey)
		delete(fields, ContributionProviderKey)
		raw, err := json.Marshal(fields)
		if err != nil {
			return "", err
		}
		contribution = string(raw)
	}
	return digestOf(map[string]any{"contribution": contribution})
}

// digestDrifted marks a composed object whose composed fields were changed
// by someone else: no plan produces it, so the plan rewrites the object.
const digestDrifted = "drifted"

// Refresh reports a composed object whose composition was edited by
// someone else (a kubectl edit of a route's timeout) as drifted: the
// fields the composer owns differ from what composing its contributions
// gives. It reads the object from the listing (listcache.go).

// composedState is what that check needs of a live composed object, for
// one kind of intent: the contributions and the composer's fields.
type composedState struct {
	contributions map[string]string
	// ids are the contributors' instances (their labels); handWritten
	// says, of contributions written by others than a composer, by whom.
	ids, handWritten map[string]string
	// have is the digest of the composer's spec fields; unreadable is set
	// when its managed fields cannot be read, unheld when nobody holds
	// the composition any more.
	have               string
	unreadable, unheld bool
	// foreign are spec fields managers outside the provider set.
	foreign []foreignField
}

func (e *Engine) composedStateOf(live *unstructured.Unstructured, kind string) composedState {
	prefix := kind + contributionInfix
	st := composedState{contributions: map[string]string{}, ids: map[string]string{}, handWritten: handWritten(live, kind)}
	for k, v := range live.GetAnnotations() {
		if name, ok := strings.CutPrefix(k, prefix); ok {
			st.contributions[name] = v
			if id := live.GetLabels()[k]; id != "true" {
				st.ids[name] = id
			}
		}
	}
	st.foreign, _ = e.foreignComposedFields(live, Owner{Kind: kind}.composerManager(e.FieldManager))
	owned, err := ownedFields(live, Owner{Kind: kind}.composerManager(e.FieldManager))
	switch {
	case err != nil:
		st.unreadable = true
	case owned == nil:
		st.unheld = true
	default:
		got, _ := extract(live.Object, owned).(map[string]any)
		st.have, _ = digestOf(map[string]any{"spec": got["spec"]})
	}
	return st
}

func (e *Engine) composedDriftedFrom(owner Owner, entry Entry, st composedState) bool {
	// What the next writer composes: the trusted contributions.
	trusted := map[string]string{}
	for name, raw := range st.contributions {
		if st.handWritten[name] == "" && owner.unreadable(raw) != nil {
			return false // what it composes to is the newer writer's to say
		}
		if owner.untrusted(st.handWritten[name], raw) == "" {
			trusted[name] = raw
		}
	}
	if len(trusted) != len(st.contributions) {
		return true // the next writer removes the others
	}
	manifest, err := owner.Composition.Compose(entry.Key(), trusted)
	if err != nil || manifest == nil {
		return false // composing fails or yields nothing: the next apply says so
	}
	if st.unreadable || st.unheld {
		return st.unheld // nobody holds the composition any more
	}
	want, _ := digestOf(map[string]any{"spec": manifest["spec"]})
	return want != st.have
}
