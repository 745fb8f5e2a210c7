package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/flux"
)

// Objects Flux applies, seen from the push side. kustomize-controller
// labels every object it applies with its Kustomization's name and
// namespace (fluxcd/pkg/ssa's SetOwnerLabels, group
// kustomize.toolkit.fluxcd.io) and re-applies it at every interval with
// ownership forced; with prune it also deletes what leaves its source.
// A push state that writes (or adopts, or composes into) such an object
// would fight that Kustomization: each undoes the other's writes. The
// plan refuses it, naming the Kustomization and the fix.
//
// The one exception is the state's own former artifact (pull to push,
// delivery.oci.retired): its Kustomization applies the same objects from
// the artifact the apply is about to empty (the guide's "Back to push").
// It is known by the object's owner labels (this instance's), or else by
// the Kustomization's OCIRepository (the retired artifact's URL and tag).

// errFluxApplied is an object on a push cluster that a Flux
// Kustomization applies.
var errFluxApplied = errors.New("the object is applied by a Flux Kustomization")

// fluxKustomizationOf is the Kustomization (namespace/name) whose labels
// an object carries, "" for none.
func fluxKustomizationOf(labels map[string]string) (namespace, name string) {
	return labels[fluxNamespaceLabel], labels[fluxNameLabel]
}

// fluxApplied is the error for the object entry on a push cluster whose
// labels say a Flux Kustomization applies it, nil when they do not, when
// that Kustomization no longer exists (its labels are left over), or when
// it applies this state's own retired artifact of the cluster.
func (e *Engine) fluxApplied(ctx context.Context, dyn dynamic.Interface, owner Owner, entry Entry, labels map[string]string, doing string) *Error {
	ns, name := fluxKustomizationOf(labels)
	if name == "" {
		return nil
	}
	if _, retired := e.retiredOf(entry.Cluster); retired && owner.owns(labels) {
		// This instance's own object on a cluster leaving pull: its
		// Kustomization applies what this state published, which the
		// apply removes from the artifact; nothing needs to be read.
		return nil
	}
	k, err := dyn.Resource(flux.Resources[flux.KustomizationKind]).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil // labels left over: nothing applies the object any more
	}
	what := fmt.Sprintf("Flux Kustomization %s/%s", ns, name)
	if err != nil {
		return &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: fmt.Sprintf("%s on cluster %s may be applied by Flux", entry, entry.Cluster), Err: errFluxApplied,
			Detail: fmt.Sprintf("%s carries the labels of %s (%s=%s, %s=%s), which could not be read: %v. Nothing tells whether Flux still applies it, so %s would %s it, and the two writers could fight. "+
				"Let this connection read kustomizations.kustomize.toolkit.fluxcd.io in %s, or, if nothing applies the object any more, remove those two labels from it.",
				entry, what, fluxNameLabel, name, fluxNamespaceLabel, ns, err, owner, doing, ns)}
	}
	if e.fluxAppliesRetired(ctx, dyn, entry.Cluster, k) {
		return nil
	}
	return &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: fmt.Sprintf("%s on cluster %s is applied by Flux", entry, entry.Cluster), Err: errFluxApplied,
		Detail: fmt.Sprintf("%s is applied by %s (its labels %s and %s say so), from a pull state's artifact or another source; %s would %s it by server-side apply, and the two writers would fight: Flux re-applies its copy at every interval, and prunes it when it leaves its source. "+
			"Deliver cluster %s's objects of one state only: declare %s in the state that publishes for that Kustomization, or move that state's cluster to push first. "+
			"If the Kustomization is this state's own former one (the cluster moved from pull to push), keep delivery.oci with retired = true until the apply has emptied its artifact, as the guide \"Clusters the runner cannot reach\" says. Nothing was written.",
			entry, what, fluxNameLabel, fluxNamespaceLabel, owner, doing, entry.Cluster, owner)}
}

// fluxAppliesRetired reports whether Kustomization k applies this state's
// retired artifact of cluster (RetiredDelivery): its OCIRepository's URL
// and tag are that artifact's.
func (e *Engine) fluxAppliesRetired(ctx context.Context, dyn dynamic.Interface, cluster string, k *unstructured.Unstructured) bool {
	a, ok := e.retiredOf(cluster)
	if !ok {
		return false
	}
	kind, _, _ := unstructured.NestedString(k.Object, "spec", "sourceRef", "kind")
	name, _, _ := unstructured.NestedString(k.Object, "spec", "sourceRef", "name")
	ns, _, _ := unstructured.NestedString(k.Object, "spec", "sourceRef", "namespace")
	if ns == "" {
		ns = k.GetNamespace()
	}
	if kind != flux.OCIRepositoryKind || name == "" {
		return false
	}
	src, err := dyn.Resource(flux.Resources[flux.OCIRepositoryKind]).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false
	}
	url, _, _ := unstructured.NestedString(src.Object, "spec", "url")
	tag, _, _ := unstructured.NestedString(src.Object, "spec", "ref", "tag")
	return strings.TrimPrefix(url, "oci://") == a.Target.Repository && tag == a.Target.Tag
}

// fluxAppliedErrors are the plan's errors for owner's objects on push
// clusters that a Flux Kustomization applies (fluxApplied), from the
// process's listings (one LIST per cluster and kind, shared with
// refresh). A cluster that cannot be read is left out: refresh already
// warns about it, and the apply's own reads check again.
func (e *Engine) fluxAppliedErrors(ctx context.Context, owner Owner, entries []Entry) []*Error {
	var out []*Error
	doing := "write"
	if owner.Composition != nil {
		doing = "compose its contribution into"
	}
	for _, cluster := range clustersOf(entries) {
		if _, pull, err := e.pullOf(cluster); pull || err != nil {
			continue
		}
		c, err := e.Clients.Get(cluster)
		if err != nil {
			continue
		}
		for _, en := range byCluster(entries, cluster) {
			l, lerr := e.listedSnapshot(ctx, c.Dynamic, cluster, schema.FromAPIVersionAndKind(en.APIVersion, en.Kind))
			if lerr != nil {
				break
			}
			obj, ok := l.objects[en.Namespace+"/"+en.Name]
			if !ok {
				continue
			}
			if ferr := e.fluxApplied(ctx, c.Dynamic, owner, en, obj.labels, doing); ferr != nil {
				out = append(out, ferr)
			}
		}
	}
	return out
}
