package shareddata

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// Composed objects are shared by several intents of one kind, e.g. the
// VirtualService of a destination that several traffic policies shape:
// Istio keeps only one VirtualService per host for sidecars, so the
// policies must meet in one object. Each intent stores its contribution
// in an annotation of the object; whoever writes recomposes the object
// from every contribution, under one shared field manager, guarded by the
// object's resourceVersion so that concurrent writers never lose each
// other's contribution. What a contribution holds is the intent kind's
// composer's to say (package composition); this package reads and
// writes the annotations through the engine (its listing and its
// server-side apply of a composed object, composed_write.go), and keeps
// those it does not compose byte for byte.

// compose writes one composed object with this intent's contribution set
// (remove false) or removed (remove true).
func compose(ctx context.Context, e *engine.Engine, ri dynamic.ResourceInterface, owner engine.Owner, entry engine.Entry, remove bool) *engine.Error {
	doing := "Applying"
	if remove {
		doing = "Releasing"
	}
	if owner.Composition == nil || owner.Composition.Composer == nil {
		// Nothing can recompose the object without this contribution: a
		// release now would leave its settings behind untracked.
		return &engine.Error{Cluster: entry.Cluster, Object: entry.String(), Summary: doing + " " + entry.String(),
			Detail: fmt.Sprintf("%s is shared by several %ss, and the provider has no composer to rewrite it without %s (an internal error: the resource was read without its composition). "+
				"Nothing was written; run the command again, and report it if it persists.", entry, owner.Kind, owner)}
	}
	err := e.RetryConflicts(ctx, func(attempt int) (bool, error) {
		err := composeOnce(ctx, e, ri, owner, entry, remove)
		if err == nil {
			return true, nil
		}
		if _, ok := err.(*engine.Error); ok {
			return true, err // explained already (a field conflict, not ours)
		}
		if !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) && !engine.UIDRefused(err) {
			return true, err
		}
		engine.LogEntry(ctx, "composed object changed by another writer: reading it again", owner, entry, "attempt", attempt+1)
		return false, err // someone else wrote in between: read again
	})
	if err == nil {
		return nil
	}
	if e, ok := err.(*engine.Error); ok {
		return e
	}
	return engine.ObjectError(entry, doing, err)
}

// composeOnce writes one composed object from a fresh read: it reads the
// object (readComposed), gathers the contributions this write keeps and
// removes by their verdicts (gatherContributions), composes them with
// this intent's (composedSpec), and writes the result pinned to the
// version read (writeComposed). An error that is a conflict makes the
// caller (compose) read again.
func composeOnce(ctx context.Context, e *engine.Engine, ri dynamic.ResourceInterface, owner engine.Owner, entry engine.Entry, remove bool) error {
	live, write, err := readComposed(ctx, ri, owner, entry, remove)
	if err != nil || !write {
		return err
	}
	if !remove && live != nil {
		// A Kustomization applies it: composing here would fight Flux
		// (the engine's sink_flux.go; the plan refuses it first).
		if c, cerr := e.Clients.Get(entry.Cluster); cerr == nil {
			// A warning (the Kustomization could not be read, or is on
			// another cluster) was the plan's; the write proceeds.
			if ferr, _ := e.FluxApplied(ctx, c.Dynamic, owner, entry, live.GetLabels(), "compose its contribution into"); ferr != nil {
				return ferr
			}
		}
	}
	g, err := gatherContributions(ctx, owner, entry, live, remove)
	if err != nil || !g.write {
		return err
	}
	if !remove {
		g.contributions[owner.Name] = owner.Composition.Contribution.For(entry.Cluster)
	}
	manifest, err := composedSpec(owner, entry, g.contributions)
	if err != nil {
		return err
	}
	if manifest == nil {
		// No contribution is left.
		if live == nil {
			return nil
		}
		if live.GetLabels()[engine.LabelOwnerKind] == "" {
			// Nobody else holds the object: it goes.
			uid, rv := live.GetUID(), live.GetResourceVersion()
			return ri.Delete(ctx, entry.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
		}
		// Its owner (a virtual destination) holds it: written without
		// contributions.
		manifest = map[string]any{"apiVersion": entry.APIVersion, "kind": entry.Kind,
			"metadata": map[string]any{"name": entry.Name, "namespace": entry.Namespace}}
	}
	prefix := engine.ContributionPrefix(owner.Kind)
	kept := 0
	if live != nil {
		kept = engine.KeptAnnotations(live, owner.Kind)
	}
	if err := engine.AnnotationsWithin(entry, prefix, g.contributions, kept); err != nil {
		return err // the plan checks it first (Limits)
	}
	if live != nil && len(g.gone) > 0 {
		if live, err = engine.ForgetAndRewrite(ctx, ri, live, prefix, g.gone, owner.ComposerManager(), manifest); err != nil {
			return err
		}
	}
	labelContributions(manifest, owner, g.contributions, live, remove)
	return e.WriteComposed(ctx, ri, owner, entry, live, manifest, g.adopting)
}

// readComposed reads the composed object entry names: nil when it does
// not exist. write is false when there is nothing to do (a release from
// an object that is gone). An object another intent owns (Owned) is
// never created here: made by a composer it would have no owner (issue
// 36), so its absence is an error saying to apply that intent first.
func readComposed(ctx context.Context, ri dynamic.ResourceInterface, owner engine.Owner, entry engine.Entry, remove bool) (live *unstructured.Unstructured, write bool, err error) {
	live, err = ri.Get(ctx, entry.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err) && engine.IsMissingResource(err):
		return nil, false, err
	case apierrors.IsNotFound(err):
		if remove {
			return nil, false, nil
		}
		if owner.Composition.Owned != nil && owner.Composition.Owned(entry.Key()) {
			// Another intent's object, which that intent creates: made
			// here it would have no owner (issue 36).
			return nil, false, &engine.Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Applying " + entry.String(),
				Detail: fmt.Sprintf("%s belongs to the intent %s joins (its virtual destination), and it does not exist: that intent is not applied in cluster %s, or was destroyed. "+
					"Nothing was written. Apply the destination first (reference it as mesh_virtual_destination.<name>.hostname so Terraform orders it), or remove this %s.",
					entry, owner, entry.Cluster, strings.ReplaceAll(owner.Kind, "-", " "))}
		}
		return nil, true, nil
	case err != nil:
		return nil, false, err
	}
	return live, true, nil
}

// gathered is what a composed write keeps of the object it read.
type gathered struct {
	// contributions are the other contributions the write keeps, as read
	// (byte for byte), by name.
	contributions map[string]composition.Encoded
	// gone are contributions on the object that this write removes: ours
	// when releasing, and those not to be trusted.
	gone []string
	// adopting is set when the object was not written by the provider
	// and the intent adopts it: what it holds now is nobody's
	// contribution.
	adopting bool
	// write is false when there is nothing to write: a release whose
	// contribution another instance holds now.
	write bool
}

// gatherContributions sorts the contributions on live (nil: none) by
// their one verdict (verdict.go, the plan's too): kept, removed, or an
// error that stops the write. An object the provider did not write is an
// error unless the intent adopts it.
func gatherContributions(ctx context.Context, owner engine.Owner, entry engine.Entry, live *unstructured.Unstructured, remove bool) (gathered, error) {
	contributions := map[string]composition.Encoded{}
	g := gathered{contributions: contributions, write: true}
	if live == nil {
		return g, nil
	}
	if labels := live.GetLabels(); labels[engine.LabelManagedBy] != engine.ManagedByValue {
		if !owner.Adopt || remove {
			return g, &engine.Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Applying " + entry.String(),
				Detail: fmt.Sprintf("%s already exists and was not created by terraform-provider-mesh, so the provider leaves it untouched. "+
					"Delete or rename it, or take it over by setting adopt_existing = true on the resource (it is then rewritten to the composition, keeping its identity).", entry)}
		}
		g.adopting = true // what it holds now is nobody's contribution
	}
	// One verdict per contribution (verdict.go), the plan's too, weighed
	// as a publish to an artifact weighs them (weigh).
	w, werr := weigh(ctx, owner, entry, contributionsOn(owner, entry, live), remove)
	if werr != nil {
		return g, werr
	}
	if w.skip {
		return gathered{}, nil
	}
	g.contributions, g.gone = w.contributions, w.gone
	return g, nil
}

// composedSpec is the object the contributions compose to, by the
// intent kind's composer; nil when there is none (no contribution left).
func composedSpec(owner engine.Owner, entry engine.Entry, contributions map[string]composition.Encoded) (map[string]any, error) {
	manifest, err := owner.Composition.Composer.Compose(entry.Key(), composition.Contributions(contributions))
	if err != nil {
		return nil, &engine.Error{Cluster: entry.Cluster, Object: entry.String(), Summary: "Composing " + entry.String(), Detail: err.Error(), Err: err}
	}
	if len(contributions) == 0 {
		return nil, nil
	}
	return manifest, nil
}

// labelContributions sets the composed manifest's labels and annotations:
// every contribution it holds, as read (byte for byte), labelled with its
// instance as live has it, and this intent's own with its instance.
func labelContributions(manifest map[string]any, owner engine.Owner, contributions map[string]composition.Encoded, live *unstructured.Unstructured, remove bool) {
	prefix := engine.ContributionPrefix(owner.Kind)
	meta := manifest["metadata"].(map[string]any)
	labels := map[string]any{engine.LabelManagedBy: engine.ManagedByValue}
	annotations := map[string]any{}
	for name, c := range contributions {
		labels[prefix+name] = "true"
		if live != nil {
			if id, ok := live.GetLabels()[prefix+name]; ok {
				labels[prefix+name] = id // keep every contributor's instance
			}
		}
		annotations[prefix+name] = c.Raw // as read: byte for byte
	}
	if !remove {
		labels[owner.ContributionKey()] = owner.ContributionValue()
	}
	meta["labels"], meta["annotations"] = labels, annotations
}

// composedDriftedFrom reports, for refresh, a composed object whose
// composition was edited by someone else (a kubectl edit of a route's
// timeout) as drifted: the fields the composer owns differ from what
// composing its contributions gives. st is read from the engine's
// listing (ListedComposed).
func composedDriftedFrom(owner engine.Owner, entry engine.Entry, st engine.ComposedObject) bool {
	// What the next writer composes: by the verdicts it will reach
	// (verdict.go), those of any name but this one's, which it writes.
	trusted := map[string]composition.Contribution{}
	for _, v := range Judge(engine.Owner{Kind: owner.Kind, Composition: owner.Composition}, liveContributions(owner, entry, st)) {
		switch v.Standing {
		case Unreadable:
			return false // what it composes to is the newer writer's to say
		case Untrusted:
			return true // the next writer removes it
		default:
			trusted[v.Name] = v.Contribution
		}
	}
	manifest, err := owner.Composition.Composer.Compose(entry.Key(), trusted)
	if err != nil || manifest == nil {
		return false // composing fails or yields nothing: the next apply says so
	}
	if st.Unreadable || st.Unheld {
		return st.Unheld // nobody holds the composition any more
	}
	want, _ := engine.DigestOf(map[string]any{"spec": manifest["spec"]})
	return want != st.Have
}

// weighed is what one write of a composed object makes of the
// contributions found on it (verdict.go): those it composes besides its
// own, and those it removes; skip when the write has nothing to do (the
// name is another instance's now, and this write releases).
type weighed struct {
	contributions map[string]composition.Encoded
	gone          []string
	skip          bool
}

// weigh applies owner's verdicts to the contributions found on entry, for
// a write that sets (remove false) or releases (remove true) owner's
// contribution. Every writer of a composed object weighs the same way:
// server-side apply to a cluster (composeOnce) and a publish to an
// artifact (composeInArtifact).
func weigh(ctx context.Context, owner engine.Owner, entry engine.Entry, found []engine.LiveContribution, remove bool) (weighed, *engine.Error) {
	w := weighed{contributions: map[string]composition.Encoded{}}
	for _, v := range Judge(owner, found) {
		switch v.Standing {
		case Mine:
			if remove {
				w.gone = append(w.gone, v.Name)
			}
		case Held:
			if remove {
				// Another instance of this state's contributes now
				// (create_before_destroy made it first): only this
				// instance's contribution is this release's to remove.
				return weighed{skip: true}, nil
			}
			engine.LogEntry(ctx, "replacing this state's previous instance of the same name", owner, entry, "leftover_instance", v.ID)
		case Theirs, Orphan:
			w.contributions[v.Name] = composition.Encoded{Contribution: v.Contribution, Raw: v.Raw}
		case Taken:
			if remove {
				// Another instance of the name contributes now (this
				// one was replaced): nothing of ours is left to release.
				return weighed{skip: true}, nil
			}
			return weighed{}, v.err(entry)
		case Undecided:
			if remove {
				// An earlier build's contribution of this name, which
				// recorded no instance: this intent's, released.
				w.gone = append(w.gone, v.Name)
				continue
			}
			return weighed{}, v.err(entry)
		case Unreadable:
			// Written by a newer provider: kept as it is, and the
			// object is not written.
			return weighed{}, v.err(entry)
		case Untrusted:
			if v.Name == owner.Name && !remove {
				continue // replaced by this intent's
			}
			engine.LogEntry(ctx, "contribution not composed and removed: "+v.Untrusted, owner, entry, "annotation", v.Annotation(owner.Kind))
			w.gone = append(w.gone, v.Name)
		}
	}
	return w, nil
}
