package shareddata

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// Composed objects on a pull cluster (docs/design.md, Delivery sinks,
// "Composition"). A traffic policy's VirtualService is published in the
// state's artifact composed the way compose.go composes it on a cluster:
// the artifact's copy of the object plays the live object's part. The
// same contribution annotations and labels, the same verdicts (weigh),
// the same composer; the entries keep the contribution's digest, so
// switching a cluster between push and pull changes no object in a plan.
// The artifact's Writer serialises the run's writers of one artifact, and
// each change composes on what the changes before it left.
//
// One state only: an object composed from several states cannot be
// published by pull (two Kustomizations would apply it, each overwriting
// the other's routes). A second state's contribution is refused at plan
// and again before the upload, where it can be seen (pullComposedErrors):
// in another tag of the cluster's repository (another state's artifact),
// or on the cluster itself, through its read-only connection.

// Errors of composition on pull clusters.
var (
	// errComposedElsewhere: another state publishes or applies the object.
	errComposedElsewhere = errors.New("the object is composed by another state on this pull cluster")
	// errJoinedOnPull: a contribution to another intent's own object (a
	// virtual destination's DestinationRule) on a pull cluster.
	errJoinedOnPull = errors.New("a contribution to another intent's own object cannot be published to a pull cluster yet")
)

// publishComposed is publishCluster for a composed owner: its
// contribution is set on each desired object of the artifact and, when
// prune is set, released from the objects it no longer wants (prior's
// stay otherwise). Other contributions stay, composed. leftovers are
// prior entries no longer desired whose object the artifact did not hold
// with this contribution (pushed before the cluster became a pull one).
func publishComposed(ctx context.Context, e *engine.Engine, owner engine.Owner, cluster string, a engine.PullArtifact, desired []engine.Desired, prior []engine.Entry, prune bool) (entries, leftovers []engine.Entry, errs []*engine.Error) {
	if owner.Composition.Composer == nil {
		return prior, nil, []*engine.Error{engine.ClusterError(cluster, "Publishing the artifact "+a.Target.String(),
			fmt.Errorf("%s has no composer (an internal error: the resource was read without its composition); nothing was published", owner))}
	}
	wanted := map[string]engine.Entry{}
	for _, d := range desired {
		if d.Manifest == nil {
			return prior, nil, []*engine.Error{engine.ObjectError(d.Entry, "Publishing", errors.New("its content is not known at apply"))}
		}
		wanted[engine.ArtifactKey(d.Entry)] = d.Entry
	}
	// Another state's contribution, where it can be seen: refused before
	// anything is uploaded.
	errs, warns := pullComposedErrors(ctx, e, owner, cluster, a, engine.Entries(desired))
	for _, w := range warns {
		engine.LogCluster(ctx, "publishing composed objects: "+w.Summary, owner, cluster, "detail", w.Detail)
	}
	if len(errs) > 0 {
		return prior, nil, errs
	}
	staleKeys := map[string]engine.Entry{}
	for _, p := range prior {
		if k := engine.ArtifactKey(p); !hasKey(wanted, k) {
			staleKeys[k] = p
		}
	}
	var refused []*engine.Error
	var held map[string]bool // stale keys whose object holds owner's contribution
	got, err := e.PublishArtifact(ctx, a, func(objs oci.Objects) error {
		refused, held = nil, map[string]bool{}
		var mine []string // objects holding owner's contribution that it no longer wants
		for k, m := range objs {
			l := engine.LabelsOf(m)
			switch {
			case l[engine.LabelManagedBy] != engine.ManagedByValue:
				delete(objs, k) // no intent's: the artifact is the state's (foreignIn)
			case owner.Owns(l) && !hasKey(wanted, k):
				mine = append(mine, k)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(wanted)) {
			if err := composeInArtifact(ctx, e, objs, owner, wanted[k], false); err != nil {
				refused = append(refused, err)
			}
		}
		sort.Strings(mine)
		for _, k := range mine {
			if _, stale := staleKeys[k]; stale {
				held[k] = true
				if !prune {
					continue // kept until an apply whose writes all succeed
				}
			}
			if err := composeInArtifact(ctx, e, objs, owner, engine.EntryOf(cluster, objs[k]), true); err != nil {
				refused = append(refused, err)
			}
		}
		if len(refused) > 0 {
			return refused[0]
		}
		return nil
	})
	if len(refused) > 0 {
		return prior, nil, refused
	}
	return e.Published(ctx, "published composed objects", owner, cluster, a, got, err, desired, prior, staleKeys, held, prune)
}

// composeInArtifact sets (remove false) or releases (remove true) owner's
// contribution on the object entry in objs, recomposed from every
// contribution there by the verdicts compose.go reaches on a live object.
// The object goes when no contribution is left.
func composeInArtifact(ctx context.Context, e *engine.Engine, objs oci.Objects, owner engine.Owner, entry engine.Entry, remove bool) *engine.Error {
	key := engine.ArtifactKey(entry)
	m := objs[key]
	if m == nil && remove {
		return nil
	}
	var found []engine.LiveContribution
	var ids map[string]string
	if m != nil {
		live := &unstructured.Unstructured{Object: m}
		if l := live.GetLabels(); l[engine.LabelOwnerKind] != "" {
			return &engine.Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Publishing " + entry.String(), Err: errJoinedOnPull,
				Detail: fmt.Sprintf("%s in the artifact is %s %s's own object: %v. Nothing was published. Deliver cluster %s by push, or leave out of %s the settings that go into that object.",
					entry, l[engine.LabelOwnerKind], l[engine.LabelOwnerName], errJoinedOnPull, entry.Cluster, owner)}
		}
		found = contributionsOn(owner, entry, live)
		_, ids = engine.ContributionsOf(live, owner.Kind)
	}
	w, werr := weigh(ctx, owner, entry, found, remove)
	if werr != nil {
		return werr
	}
	if w.skip {
		return nil
	}
	if !remove {
		w.contributions[owner.Name] = owner.Composition.Contribution.For(entry.Cluster)
	}
	manifest, err := owner.Composition.Composer.Compose(entry.Key(), composition.Contributions(w.contributions))
	if err != nil {
		return &engine.Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Composing " + entry.String(), Detail: err.Error(), Err: err}
	}
	if len(w.contributions) == 0 || manifest == nil {
		delete(objs, key)
		return nil
	}
	prefix := engine.ContributionPrefix(owner.Kind)
	if err := engine.AnnotationsWithin(entry, prefix, w.contributions, 0); err != nil {
		return err
	}
	labels := map[string]any{engine.LabelManagedBy: engine.ManagedByValue}
	annotations := map[string]any{}
	for name, c := range w.contributions {
		labels[prefix+name] = "true"
		if id := ids[name]; id != "" {
			labels[prefix+name] = id // keep every contributor's instance
		}
		annotations[prefix+name] = c.Raw // as read: byte for byte
	}
	if !remove {
		labels[owner.ContributionKey()] = owner.ContributionValue()
	}
	meta, _ := manifest["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{"name": entry.Name, "namespace": entry.Namespace}
		manifest["metadata"] = meta
	}
	meta["labels"], meta["annotations"] = labels, annotations
	objs[key] = manifest
	return nil
}

// composedEntry is owner's entry of a composed object m read from an
// artifact: the contribution's digest, or engine.DigestDrifted when the object's
// spec is not what composing its contributions gives (edited in a
// re-pushed artifact) or it holds a contribution the next writer removes,
// as composedDriftedFrom judges a live object.
func composedEntry(owner engine.Owner, en engine.Entry, m map[string]any) (engine.Entry, error) {
	live := &unstructured.Unstructured{Object: m}
	st := engine.ComposedObject{}
	st.Contributions, st.IDs = engine.ContributionsOf(live, owner.Kind)
	digest, err := owner.PartDigest(st.Contributions[owner.Name])
	if err != nil {
		return en, err
	}
	en.Digest = digest
	if owner.Composition.Composer == nil {
		return en, nil
	}
	// The artifact's object is all the composer's: its whole spec is
	// the composition.
	if st.Have, err = engine.DigestOf(map[string]any{"spec": m["spec"]}); err != nil {
		return en, err
	}
	if composedDriftedFrom(owner, en, st) {
		en.Digest = engine.DigestDrifted
	}
	return en, nil
}

// contributionsInArtifact lists the contributions of owner's kind on the
// artifact's copy of en (Contributions, for a pull cluster).
func contributionsInArtifact(ctx context.Context, e *engine.Engine, owner engine.Owner, a engine.PullArtifact, en engine.Entry) ([]engine.LiveContribution, *engine.Error) {
	got, found, err := e.FetchArtifact(ctx, a.Target)
	if err != nil {
		return nil, engine.ClusterError(en.Cluster, "Reading composed objects from the artifact "+a.Target.String(), err)
	}
	m := got.Objects[engine.ArtifactKey(en)]
	if !found || m == nil {
		return nil, nil
	}
	return contributionsOn(owner, en, &unstructured.Unstructured{Object: m}), nil
}

// pullComposedErrors are the reasons owner's contributions to entries
// (objects of one pull cluster, published through a) cannot be published,
// found without writing anything:
//   - an object another intent owns (a virtual destination's
//     DestinationRule), which this contribution would join;
//   - the same object in another state's artifact for the cluster (another
//     tag of its repository);
//   - the same object on the cluster holding a contribution that is not
//     this state's (secondStates), where the cluster's read-only connection
//     can read it.
//
// warns say what could not be looked at (the repository's tags, another
// tag's artifact, the cluster itself) and why: the check is then
// incomplete, which the plan shows as a warning, never as an error (an
// unreachable pull cluster is normal).
func pullComposedErrors(ctx context.Context, e *engine.Engine, owner engine.Owner, cluster string, a engine.PullArtifact, entries []engine.Entry) (out, warns []*engine.Error) {
	for _, en := range entries {
		if owner.Composition.Owned != nil && owner.Composition.Owned(en.Key()) {
			out = append(out, &engine.Error{Cluster: cluster, Object: en.String(), Summary: fmt.Sprintf("%s cannot be delivered to pull cluster %s", owner, cluster), Err: errJoinedOnPull,
				Detail: fmt.Sprintf("%s belongs to the virtual destination that %s joins: %v. Deliver cluster %s by push (remove its delivery block), or leave out of %s the settings that go into the destination's DestinationRule.",
					en, owner, errJoinedOnPull, cluster, owner)})
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	// The warnings are the cluster's, said once per run (firstSaid):
	// they name no one intent.
	ours := "this state's " + engine.KindWords(owner.Kind) + " resources"
	sibs, unread := e.Siblings(ctx, a)
	for _, u := range unread {
		warns = append(warns, engine.NotChecked(cluster, owner, fmt.Sprintf("Other states' artifacts for pull cluster %s not checked", cluster),
			fmt.Sprintf("%s: %v. Whether another state publishes the objects of %s for cluster %s there (Flux would apply both copies, each overwriting the other's routes) was not checked; the apply checks again. "+
				"Give the registry credentials of cluster %s the right to list the repository's tags and pull its artifacts, or make sure no other state publishes traffic policies for this cluster.",
				u.What, u.Err, ours, cluster, cluster)))
	}
	for _, sib := range sibs {
		for _, en := range entries {
			m := sib.Artifact.Objects[engine.ArtifactKey(en)]
			if m == nil {
				continue
			}
			holders := contributorsIn(owner, en, m)
			out = append(out, &engine.Error{Cluster: cluster, Object: en.String(), Summary: fmt.Sprintf("%s is published for pull cluster %s by another state", en, cluster), Err: errComposedElsewhere,
				Detail: fmt.Sprintf("Artifact %s (state %s) already publishes %s for cluster %s, composed from %s; Flux would apply both artifacts' copies, each overwriting the other's routes. "+
					"An object composed from several states cannot be delivered by pull: declare %s in the state of workspace %s (or its policies for this destination in this one), or deliver cluster %s by push. "+
					"If no Kustomization applies that artifact any more (a former workspace of a state), delete its tag. Nothing was published.",
					sib.Target, engine.WorkspaceName(sib.Artifact.Publisher), en, cluster, holders, owner, engine.WorkspaceName(sib.Artifact.Publisher), cluster)})
		}
	}
	if len(out) > 0 {
		return out, warns
	}
	c, err := e.Clients.Get(cluster)
	if err != nil {
		unconnected := engine.NotChecked(cluster, owner, fmt.Sprintf("Pull cluster %s not read: other states' objects there not checked", cluster),
			fmt.Sprintf("Cluster %s has no connection this provider can read (%v), so whether another state (pushing, or publishing to another repository) already composes the objects of %s there was not checked: "+
				"if one does, Flux's apply of this state's copy overwrites its routes. Give cluster %s a read-only kubernetes connection to check it at every plan, or make sure no other state writes traffic policies for this cluster.",
				cluster, err, ours, cluster))
		return nil, append(warns, unconnected)
	}
	for _, en := range entries {
		l, lerr := e.ListedComposed(ctx, c.Dynamic, cluster, schema.FromAPIVersionAndKind(en.APIVersion, en.Kind), owner.Kind, true)
		if lerr != nil {
			unlisted := engine.NotChecked(cluster, owner, fmt.Sprintf("Pull cluster %s not read: other states' objects there not checked", cluster),
				fmt.Sprintf("%s: %s. Whether another state already composes the objects of %s on cluster %s was not checked (an unreachable pull cluster is normal: nothing else is held up); "+
					"if one does, Flux's apply of this state's copy overwrites its routes. Plan again once the cluster answers to check it.",
					lerr.Summary, lerr.Detail, ours, cluster))
			return nil, append(warns, unlisted)
		}
		st, labels, ok := l.Get(en.Namespace, en.Name)
		if !ok {
			continue
		}
		others := secondStates(owner, a, liveContributions(owner, en, st))
		if len(others) == 0 {
			continue
		}
		by := "no Flux Kustomization (written by server-side apply)"
		if ns, k := engine.FluxKustomizationOf(labels); k != "" {
			by = "Flux Kustomization " + ns + "/" + k
		}
		out = append(out, &engine.Error{Cluster: cluster, Object: en.String(), Summary: fmt.Sprintf("%s is composed by another state on pull cluster %s", en, cluster), Err: errComposedElsewhere,
			Detail: fmt.Sprintf("Cluster %s holds %s, applied by %s, with %s. This state (workspace %s) would publish its own copy in %s without them, and Flux's apply would remove those routes (or the two writers would overwrite each other's). "+
				"An object composed from several states cannot be delivered by pull: declare %s in that state (or its policies for this destination in this one), or deliver cluster %s by push. "+
				"If that contribution is a leftover nobody applies any more, remove its annotation and label from %s on cluster %s by hand. Nothing was published.",
				cluster, en, by, strings.Join(others, ", "), engine.WorkspaceName(a.Publisher), a.Target.String(), owner, cluster, en, cluster)})
	}
	return out, warns
}

// secondStates names the contributions of found (on an object of a pull
// cluster) that are not this state's, by the one verdict (Judge): every
// one but this instance's (Mine), a held instance of its own (Held), an
// orphan of its own roster, another of this state's policies (Theirs,
// naming this state's workspace) and what is no contribution at all
// (Untrusted: every writer removes it). A contribution that records no
// workspace (an earlier build's, or a push state's without one) or no
// instance is a second state's: nothing says it is this state's, and
// publishing without it would drop its routes.
func secondStates(owner engine.Owner, a engine.PullArtifact, found []engine.LiveContribution) []string {
	var out []string
	for _, v := range Judge(owner, found) {
		switch {
		case v.Standing == Mine || v.Standing == Held || v.Standing == Orphan || v.Standing == Untrusted:
			continue
		case v.Standing == Theirs && v.Workspace != "" && v.Workspace == a.Publisher:
			continue
		}
		who := fmt.Sprintf("the contribution of %s %q", engine.KindWords(owner.Kind), v.Name)
		if v.ID != "" {
			who += " (instance " + v.ID
		} else {
			who += " (no instance recorded"
		}
		if v.Workspace != "" {
			who += ", workspace " + engine.WorkspaceName(v.Workspace) + ")"
		} else {
			who += ", no workspace recorded)"
		}
		if v.Standing != Theirs {
			who += ": " + string(v.Standing)
		}
		out = append(out, who)
	}
	return out
}

// contributorsIn names the contributions of owner's kind on m, an object
// of another artifact, for messages.
func contributorsIn(owner engine.Owner, en engine.Entry, m map[string]any) string {
	raws, _ := engine.ContributionsOf(&unstructured.Unstructured{Object: m}, owner.Kind)
	if len(raws) == 0 {
		return "no " + engine.KindWords(owner.Kind)
	}
	var names []string
	for _, lc := range readContributions(owner, en, raws, nil) {
		names = append(names, fmt.Sprintf("%s %q", engine.KindWords(owner.Kind), lc.Name))
	}
	return strings.Join(names, ", ")
}

// hasKey reports whether m holds k.
func hasKey[V any](m map[string]V, k string) bool {
	_, ok := m[k]
	return ok
}
