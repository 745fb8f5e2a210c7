package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// Delivery is a sink behind the engine: how a cluster receives its
// objects. A push cluster (the default) is written by server-side apply
// from this process (apply.go); a pull cluster's objects are published in
// an OCI artifact in Flux's format, which Flux's controllers in the
// cluster pull and apply. The engine decides what to write, prune and
// record the same way for both; only the carrying differs. No resource
// knows which sink a cluster uses.
type Delivery interface {
	// Pull returns the artifact of a pull cluster (and pull true), or
	// pull false for a push cluster. An error is a pull cluster whose
	// artifact cannot be named (its settings are bad).
	Pull(cluster string) (artifact PullArtifact, pull bool, err error)
}

// RetiredDelivery is a Delivery that also names the former artifact of a
// cluster delivered by push again (pull to push): the apply removes the
// owner's objects from it, so that Flux, still reconciling it, applies
// nothing of this state there again, and refresh shows the owner's
// objects it still holds as drift.
type RetiredDelivery interface {
	Retired(cluster string) (artifact PullArtifact, retired bool)
}

// retiredOf is the former artifact of a push cluster, if any.
func (e *Engine) retiredOf(cluster string) (PullArtifact, bool) {
	r, ok := e.Delivery.(RetiredDelivery)
	if !ok {
		return PullArtifact{}, false
	}
	return r.Retired(cluster)
}

// unpublishRetired removes owner's objects from the former artifacts of
// the given push clusters (RetiredDelivery). An artifact that is gone has
// nothing to remove.
func (e *Engine) unpublishRetired(ctx context.Context, owner Owner, clusters []string) Errors {
	var errs Errors
	for _, c := range clusters {
		a, ok := e.retiredOf(c)
		if !ok {
			continue
		}
		w := e.pulls.writers.For(a.Target, a.Publisher)
		removed := 0
		got, err := w.Update(ctx, func(objs oci.Objects) error {
			removed = 0
			for k, m := range objs {
				if owner.owns(labelsOf(m)) {
					delete(objs, k)
					removed++
				}
			}
			return nil
		})
		if err != nil {
			errs = append(errs, clusterError(c, "Removing this state's objects from the former artifact "+a.Target.String(), err))
			continue
		}
		e.pulls.remember(a.Target, got)
		logCluster(ctx, "removed from the former artifact", owner, c, "artifact", a.Target.String(), "objects", removed)
	}
	return errs
}

// readRetired marks owner's entries of a push cluster drifted while its
// former artifact still holds owner's objects: the plan updates the
// owner, and the apply removes them (unpublishRetired).
func (e *Engine) readRetired(ctx context.Context, owner Owner, cluster string, got []Entry) ([]Entry, []*Error) {
	a, ok := e.retiredOf(cluster)
	if !ok {
		return got, nil
	}
	art, found, err := e.pulls.fetch(ctx, a.Target)
	if err != nil {
		return got, []*Error{clusterError(cluster, "Reading the former artifact "+a.Target.String(), err)}
	}
	var still []string
	for k, m := range art.Objects {
		if found && owner.owns(labelsOf(m)) {
			still = append(still, k)
		}
	}
	if len(still) == 0 {
		return got, nil
	}
	sort.Strings(still)
	for i := range got {
		got[i].Digest = digestDrifted
	}
	return got, []*Error{{Cluster: cluster, Summary: "Objects still published for cluster " + cluster, Err: ErrDrift,
		Detail: fmt.Sprintf("Cluster %s is delivered by push, but its former artifact %s still holds %s of %s, which Flux would apply again. The next apply removes them from the artifact.",
			cluster, a.Target.String(), strings.Join(still, ", "), owner)}}
}

// PullArtifact is where a pull cluster's objects are published, and by
// which state.
type PullArtifact struct {
	Target oci.Target
	// Publisher names the Terraform state that publishes the artifact
	// (its workspace identity); a second state is refused.
	Publisher string
}

// pulls holds the process's pull-cluster state: one Writer per artifact
// (writes serialised, batched) and the artifact last seen per target, so
// that refresh fetches each artifact once per run (the listing cache's
// counterpart for pull clusters).
type pulls struct {
	writers oci.Writers
	mu      sync.Mutex
	seen    map[string]*fetchedArtifact
	// sibs are other states' artifacts beside a pull cluster's, by
	// repository (sink_compose.go).
	sibs map[string]*siblingSet
}

type fetchedArtifact struct {
	once     sync.Once
	artifact oci.Artifact
	found    bool
	err      error
}

// pullOf reports whether cluster is delivered by pull.
func (e *Engine) pullOf(cluster string) (PullArtifact, bool, error) {
	if e.Delivery == nil {
		return PullArtifact{}, false, nil
	}
	return e.Delivery.Pull(cluster)
}

// pullSplit is Apply's view of the pull clusters among those of desired
// and prior: their artifacts, and what is left for server-side apply.
type pullSplit struct {
	artifacts map[string]PullArtifact // by cluster; a zero one could not be named
	errs      Errors
	entries   []Entry // kept entries of the clusters whose artifact could not be named
	// restDesired and restPrior are desired and prior without the pull
	// clusters: server-side apply's.
	restDesired []Desired
	restPrior   []Entry
}

// splitPull finds the pull clusters among those of desired and prior. Two
// pull clusters that name one artifact are refused, both (their publishes
// would remove each other's objects: labels do not name the cluster).
func (e *Engine) splitPull(owner Owner, desired []Desired, prior []Entry) pullSplit {
	var want []Entry
	for _, d := range desired {
		want = append(want, d.Entry)
	}
	sp := pullSplit{artifacts: map[string]PullArtifact{}}
	byTarget := map[string][]string{}
	for _, c := range clustersOf(want, prior) {
		a, ok, err := e.pullOf(c)
		switch {
		case err != nil:
			sp.errs = append(sp.errs, clusterError(c, "Naming the artifact", err))
			sp.artifacts[c] = PullArtifact{} // neither published nor pushed
		case ok:
			sp.artifacts[c] = a
			byTarget[a.Target.Normalized()] = append(byTarget[a.Target.Normalized()], c)
		}
	}
	for target, cs := range byTarget {
		if len(cs) < 2 {
			continue
		}
		sort.Strings(cs)
		for _, c := range cs {
			err := fmt.Errorf("%w: clusters %s are all delivered through artifact %s", errSharedArtifact, strings.Join(cs, ", "), target)
			sp.errs = append(sp.errs, &Error{Cluster: c, Summary: fmt.Sprintf("Cluster %s shares its artifact with another cluster", c),
				Detail: err.Error() + ": give each pull cluster its own repository (delivery.oci.repository). Nothing was published.", Err: err})
			sp.artifacts[c] = PullArtifact{}
		}
	}
	for c, a := range sp.artifacts {
		if a.Target.Repository == "" {
			sp.entries = append(sp.entries, byCluster(prior, c)...)
		}
	}
	for _, d := range desired {
		if _, ok := sp.artifacts[d.Cluster]; !ok {
			sp.restDesired = append(sp.restDesired, d)
		}
	}
	for _, p := range prior {
		if _, ok := sp.artifacts[p.Cluster]; !ok {
			sp.restPrior = append(sp.restPrior, p)
		}
	}
	return sp
}

// errSharedArtifact is two pull clusters whose repository and tag are one
// artifact.
var errSharedArtifact = errors.New("two pull clusters name one artifact")

// publishPull applies owner's objects on the pull clusters of sp: each
// such cluster's artifact gets exactly desired as owner's objects. Objects
// prior listed and no longer desired leave the artifact in the same push
// only when prune is set (every other write of the apply succeeded: what
// would be pruned may be what traffic still relies on); else they stay,
// and in the returned entries. It also returns, per cluster, the prior
// entries no longer desired that the artifact never held: objects
// server-side apply wrote before the cluster became a pull one, which
// only a prune from this process removes (Flux's inventory never had
// them).
func (e *Engine) publishPull(ctx context.Context, owner Owner, sp pullSplit, desired []Desired, prior []Entry, prune bool) ([]Entry, Errors, []Entry) {
	var clusters []string
	for c, a := range sp.artifacts {
		if a.Target.Repository != "" {
			clusters = append(clusters, c)
		}
	}
	var mu sync.Mutex
	var leftovers []Entry
	got, errs := perCluster(ctx, clusters, func(ctx context.Context, cluster string) ([]Entry, []*Error) {
		var ds []Desired
		for _, d := range desired {
			if d.Cluster == cluster {
				ds = append(ds, d)
			}
		}
		entries, left, errs := e.publishCluster(ctx, owner, cluster, sp.artifacts[cluster], ds, byCluster(prior, cluster), prune)
		mu.Lock()
		leftovers = append(leftovers, left...)
		mu.Unlock()
		return entries, errs
	})
	return got, errs, leftovers
}

// PlanErrors are what the sinks of entries' clusters refuse, found at
// plan without writing anything: an object on a push cluster that a Flux
// Kustomization applies (fluxAppliedErrors); a composed intent's
// contribution on a pull cluster to an object another state composes
// there, or to another intent's own object (pullComposedErrors), each
// naming the fix. It reads
// the other tags of the cluster's repository and, where the cluster has a
// connection, its listing; neither is required: warnings say what could
// not be checked, and why (IsNotChecked).
func (e *Engine) PlanErrors(ctx context.Context, owner Owner, entries []Entry) (errs, warnings []*Error) {
	errs, warnings = e.fluxAppliedErrors(ctx, owner, entries)
	if owner.Composition == nil {
		return errs, warnings
	}
	for _, c := range clustersOf(entries) {
		if a, pull, err := e.pullOf(c); err == nil && pull {
			if e.Shared == nil {
				errs = append(errs, noShared(owner, c, "", "Checking"))
				continue
			}
			es, ws := e.Shared.PullComposedErrors(ctx, e, owner, c, a, byCluster(entries, c))
			errs, warnings = append(errs, es...), append(warnings, e.firstSaid(ws)...)
		}
	}
	return errs, warnings
}

// saidKey is the Memo of the "not checked" warnings said in this run.
type saidKey struct{}

// firstSaid are the warnings of ws not said before in this process (one
// run): a cluster's "not checked" warning is the cluster's, said once,
// not once per intent on it.
func (e *Engine) firstSaid(ws []*Error) []*Error {
	said := e.Memo(saidKey{}, func() any { return &sync.Map{} }).(*sync.Map)
	var out []*Error
	for _, w := range ws {
		if _, dup := said.LoadOrStore(w.Cluster+"\x00"+w.Summary, true); !dup {
			out = append(out, w)
		}
	}
	return out
}

// IsNotChecked reports whether err is a warning that a check of a pull
// cluster could not look (PlanErrors).
func IsNotChecked(err error) bool { return errors.Is(err, errNotChecked) }

// publishCluster replaces owner's objects in one pull cluster's artifact
// by desired, in one push; with prune unset, prior's objects that are no
// longer desired stay. On failure the prior entries stand: the artifact
// is unchanged. leftovers are prior entries no longer desired that the
// artifact did not hold (publishPull).
func (e *Engine) publishCluster(ctx context.Context, owner Owner, cluster string, a PullArtifact, desired []Desired, prior []Entry, prune bool) (entries, leftovers []Entry, errs []*Error) {
	if owner.Composition != nil {
		if e.Shared == nil {
			return prior, nil, []*Error{noShared(owner, cluster, "", "Publishing")}
		}
		return e.Shared.PublishComposed(ctx, e, owner, cluster, a, desired, prior, prune)
	}
	manifests := make([]map[string]any, len(desired))
	keys := make([]string, len(desired))
	wanted := map[string]bool{}
	for i, d := range desired {
		if d.Manifest == nil {
			return prior, nil, []*Error{objectError(d.Entry, "Publishing", errors.New("its content is not known at apply"))}
		}
		k, err := oci.Key(d.Manifest)
		if err != nil {
			return prior, nil, []*Error{objectError(d.Entry, "Publishing", err)}
		}
		manifests[i], keys[i] = d.Manifest, k
		wanted[k] = true
	}
	staleKeys := map[string]Entry{}
	for _, p := range prior {
		if k := artifactKey(p); !wanted[k] {
			staleKeys[k] = p
		}
	}
	var notOurs []*Error
	var held map[string]bool // stale keys the artifact holds as owner's
	w := e.pulls.writers.For(a.Target, a.Publisher)
	got, err := w.Update(ctx, func(objs oci.Objects) error {
		notOurs, held = nil, map[string]bool{}
		for k, m := range objs {
			// The owner's objects are replaced; objects no intent of
			// this provider owns (added by a hand re-push) go too: the
			// artifact is this state's, and what Flux applies from it
			// is what the plans showed (foreignIn).
			l := labelsOf(m)
			if owner.owns(l) {
				if _, stale := staleKeys[k]; stale {
					held[k] = true
					if !prune {
						continue // kept until an apply whose writes all succeed
					}
				}
				delete(objs, k)
			} else if l[LabelManagedBy] != ManagedByValue {
				delete(objs, k)
			}
		}
		for i, m := range manifests {
			if other, taken := objs[keys[i]]; taken {
				notOurs = append(notOurs, objectError(desired[i].Entry, "Publishing",
					fmt.Errorf("%w: the artifact already holds this object for %s", errNotOurs, ownerOfLabels(labelsOf(other)))))
				continue
			}
			objs[keys[i]] = m
		}
		if len(notOurs) > 0 {
			return errNotOurs
		}
		return nil
	})
	if len(notOurs) > 0 {
		return prior, nil, notOurs
	}
	return e.published(ctx, "published", owner, cluster, a, got, err, desired, prior, staleKeys, held, prune)
}

// published is the end of a publish to a's artifact (publishCluster,
// publishComposed): on failure the prior entries stand (the artifact is
// as it was); else the desired entries, the stale ones kept when not
// pruning, and as leftovers the stale entries the artifact did not hold
// as owner's (held).
func (e *Engine) published(ctx context.Context, what string, owner Owner, cluster string, a PullArtifact, got oci.Artifact, err error,
	desired []Desired, prior []Entry, staleKeys map[string]Entry, held map[string]bool, prune bool) (entries, leftovers []Entry, errs []*Error) {
	if err != nil {
		logCluster(ctx, "publishing failed: the artifact is as it was, prior entries kept", owner, cluster, "artifact", a.Target.String(), "error", err.Error())
		return prior, nil, []*Error{clusterError(cluster, "Publishing the artifact "+a.Target.String(), err)}
	}
	e.pulls.remember(a.Target, got)
	logCluster(ctx, what, owner, cluster, "artifact", a.Target.String(), "digest", got.Digest, "objects", len(desired), "pruned", prune)
	entries = Entries(desired)
	for k, p := range staleKeys {
		switch {
		case !held[k]:
			leftovers = append(leftovers, p)
		case !prune:
			entries = append(entries, p)
		}
	}
	SortEntries(leftovers)
	return entries, leftovers, nil
}

// artifactKey is the key in an artifact (oci.Key) of the object e names.
func artifactKey(e Entry) string {
	k, err := oci.Key(map[string]any{"apiVersion": e.APIVersion, "kind": e.Kind, "metadata": map[string]any{"name": e.Name, "namespace": e.Namespace}})
	if err != nil {
		return "invalid:" + e.String() // matches no artifact key
	}
	return k
}

// readPull is Read for a pull cluster: owner's entries rebuilt from the
// artifact, with the digest the plan computes (desiredDigest), so an
// object changed in a re-pushed artifact is drift the plan shows. The
// artifact is fetched once per process and target. A registry that cannot
// be reached keeps the prior entries and says so, as an unreachable
// cluster does.
func (e *Engine) readPull(ctx context.Context, owner Owner, cluster string, a PullArtifact, prior []Entry) ([]Entry, []*Error) {
	got, found, err := e.pulls.fetch(ctx, a.Target)
	if err != nil {
		logCluster(ctx, "refresh could not read the artifact: prior entries kept", owner, cluster, "artifact", a.Target.String(), "error", err.Error())
		return prior, []*Error{clusterError(cluster, "Reading the artifact "+a.Target.String(), err)}
	}
	if !found {
		return nil, nil
	}
	if got.Publisher != "" && got.Publisher != a.Publisher {
		// Another state publishes this artifact: plan fails naming both,
		// as an identity claimed twice does.
		err := &oci.ClaimedError{Target: a.Target.String(), Publisher: got.Publisher, Claimant: a.Publisher}
		return prior, []*Error{{Cluster: cluster, Summary: fmt.Sprintf("Artifact of cluster %s claimed by another state", cluster), Detail: err.Error(), Err: err}}
	}
	var out []Entry
	for _, m := range got.Objects {
		if !owner.owns(labelsOf(m)) {
			continue
		}
		en := entryOf(cluster, m)
		if owner.Composition != nil {
			// A composed object's digest is its contribution's, and its
			// composition is checked against the artifact's copy.
			if e.Shared == nil {
				return prior, []*Error{noShared(owner, cluster, en.String(), "Reading")}
			}
			ce, err := e.Shared.ComposedEntry(e, owner, en, m)
			if err != nil {
				return prior, []*Error{objectError(en, "Reading", err)}
			}
			out = append(out, ce)
			continue
		}
		d, err := desiredDigest(m)
		if err != nil {
			return prior, []*Error{objectError(en, "Reading", err)}
		}
		en.Digest = d
		out = append(out, en)
	}
	SortEntries(out)
	var notes []*Error
	if foreign := foreignIn(got); len(foreign) > 0 {
		// Someone else's objects in the state's artifact: Flux applies
		// them. Every intent published there shows it (its entries
		// drifted, so the plan updates it) and its apply removes them.
		for i := range out {
			out[i].Digest = digestDrifted
		}
		notes = append(notes, &Error{Cluster: cluster, Summary: "Drift in the artifact " + a.Target.String() + " of cluster " + cluster, Err: ErrDrift,
			Detail: fmt.Sprintf("The artifact Flux applies to cluster %s holds what no intent of this provider published: %s. The next apply of %s publishes the artifact without them, and Flux prunes them.",
				cluster, strings.Join(foreign, ", "), owner)})
	}
	logCluster(ctx, "refreshed from the artifact", owner, cluster, "artifact", a.Target.String(), "digest", got.Digest, "objects", len(out), "foreign", len(notes))
	return out, notes
}

// foreignIn lists what an artifact holds that no intent of this provider
// published: objects without the provider's managed-by label, and files
// that are not objects (a kustomization.yaml), sorted.
func foreignIn(a oci.Artifact) []string {
	var out []string
	for k, m := range a.Objects {
		if labelsOf(m)[LabelManagedBy] != ManagedByValue {
			out = append(out, k)
		}
	}
	for _, f := range a.Extra {
		out = append(out, "file "+f)
	}
	sort.Strings(out)
	return out
}

// readIfPull is readPull when cluster is delivered by pull (handled true).
func (e *Engine) readIfPull(ctx context.Context, owner Owner, cluster string, prior []Entry) ([]Entry, []*Error, bool) {
	a, pull, err := e.pullOf(cluster)
	if err != nil {
		return prior, []*Error{clusterError(cluster, "Naming the artifact", err)}, true
	}
	if !pull {
		return nil, nil, false
	}
	got, errs := e.readPull(ctx, owner, cluster, a, prior)
	return got, errs, true
}

func (p *pulls) fetch(ctx context.Context, t oci.Target) (oci.Artifact, bool, error) {
	p.mu.Lock()
	if p.seen == nil {
		p.seen = map[string]*fetchedArtifact{}
	}
	f := p.seen[t.String()]
	if f == nil {
		f = &fetchedArtifact{}
		p.seen[t.String()] = f
	}
	p.mu.Unlock()
	f.once.Do(func() { f.artifact, f.found, f.err = oci.Fetch(ctx, t) })
	if f.err != nil {
		p.mu.Lock()
		if p.seen[t.String()] == f {
			delete(p.seen, t.String()) // not remembered: ask again next time
		}
		p.mu.Unlock()
	}
	return f.artifact, f.found, f.err
}

// remember records what this process published to t, which later reads
// use instead of fetching it.
func (p *pulls) remember(t oci.Target, a oci.Artifact) {
	f := &fetchedArtifact{artifact: a, found: true}
	f.once.Do(func() {})
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.seen == nil {
		p.seen = map[string]*fetchedArtifact{}
	}
	p.seen[t.String()] = f
}

func labelsOf(m map[string]any) map[string]string {
	meta, _ := m["metadata"].(map[string]any)
	raw, _ := meta["labels"].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

func ownerOfLabels(l map[string]string) string {
	if l[LabelManagedBy] != ManagedByValue {
		return "something other than this provider"
	}
	return l[LabelOwnerKind] + " " + l[LabelOwnerName]
}

func entryOf(cluster string, m map[string]any) Entry {
	meta, _ := m["metadata"].(map[string]any)
	apiVersion, _ := m["apiVersion"].(string)
	kind, _ := m["kind"].(string)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	return Entry{Cluster: cluster, APIVersion: apiVersion, Kind: kind, Namespace: ns, Name: name}
}
