package engine

import (
	"context"
	"errors"
	"fmt"
	"regexp"
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

// fluxApplied is the refusal for the object entry on a push cluster whose
// labels say a Flux Kustomization applies it. Both are nil when they do
// not, when that Kustomization no longer exists or its inventory does not
// list the object (its labels are left over: pruning disabled, labels
// copied), or when it applies this state's own retired artifact of the
// cluster. warning, and no refusal, is what the write proceeds despite:
// the Kustomization may not be read (forbidden: the grant to add), or
// this cluster serves no Kustomizations (Flux applies to it from another
// cluster, spec.kubeConfig).
func (e *Engine) fluxApplied(ctx context.Context, dyn dynamic.Interface, owner Owner, entry Entry, labels map[string]string, doing string) (refusal, warning *Error) {
	ns, name := fluxKustomizationOf(labels)
	if name == "" {
		return nil, nil
	}
	if _, retired := e.retiredOf(entry.Cluster); retired && owner.owns(labels) {
		// This instance's own object on a cluster leaving pull: its
		// Kustomization applies what this state published, which the
		// apply removes from the artifact; nothing needs to be read.
		return nil, nil
	}
	gvr := flux.Resources[flux.KustomizationKind]
	k, err := dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	what := fmt.Sprintf("Flux Kustomization %s/%s", ns, name)
	switch {
	case apierrors.IsNotFound(err):
		if absent, _ := e.kindAbsent(entry.Cluster, gvr); absent {
			return nil, &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: fmt.Sprintf("%s carries the labels of a Kustomization on another cluster", entry), Err: errFluxApplied,
				Detail: fmt.Sprintf("%s carries the labels of %s (%s=%s, %s=%s), but cluster %s serves no Kustomizations (%s is not installed there): Flux on another cluster may apply it here (a Kustomization's spec.kubeConfig), or Flux was uninstalled. "+
					"If a Kustomization still applies it, it re-applies its copy at every interval and undoes what %s would %s: deliver the object from one of the two. If nothing does, remove those two labels from the object to silence this warning. The write proceeds.",
					entry, what, fluxNameLabel, name, fluxNamespaceLabel, ns, entry.Cluster, gvr.GroupResource(), owner, doing)}
		}
		return nil, nil // labels left over: nothing applies the object any more
	case apierrors.IsForbidden(err):
		return nil, &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: fmt.Sprintf("%s: %s could not be read", entry, what), Err: errFluxApplied,
			Detail: fmt.Sprintf("%s carries the labels of %s (%s=%s, %s=%s), which this connection may not read on cluster %s: %v. Whether Flux still applies it was not checked; the write proceeds (if Flux applies it, the two writers fight). "+
				"Let the provider read Kustomizations (docs/guides: Prerequisites, RBAC for the provider), e.g.:\n\n%s\nIf nothing applies the object any more (it was delivered by pull before), removing those two labels from it also ends this warning.",
				entry, what, fluxNameLabel, name, fluxNamespaceLabel, ns, entry.Cluster, err, kustomizationGrant(ns, err))}
	case err != nil:
		return &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: fmt.Sprintf("%s may be applied by Flux", entry), Err: errFluxApplied,
			Detail: fmt.Sprintf("%s carries the labels of %s (%s=%s, %s=%s), which could not be read: %v. Nothing tells whether Flux still applies it, so %s would %s it, and the two writers could fight. "+
				"Plan again once cluster %s answers, or, if nothing applies the object any more, remove those two labels from it.",
				entry, what, fluxNameLabel, name, fluxNamespaceLabel, ns, err, owner, doing, entry.Cluster)}, nil
	}
	if !inventoryLists(k, entry) || e.fluxAppliesRetired(ctx, dyn, entry.Cluster, k) {
		return nil, nil
	}
	return &Error{Cluster: entry.Cluster, Object: entry.String(), Summary: fmt.Sprintf("%s is applied by Flux", entry), Err: errFluxApplied,
		Detail: fmt.Sprintf("%s is applied by %s (its labels %s and %s say so, and its inventory lists it, or it has not applied anything yet), from a pull state's artifact or another source; %s would %s it by server-side apply, and the two writers would fight: Flux re-applies its copy at every interval, and prunes it when it leaves its source. "+
			"Deliver cluster %s's objects of one state only: declare %s in the state that publishes for that Kustomization, or move that state's cluster to push first. "+
			"If the Kustomization is this state's own former one (the cluster moved from pull to push), keep delivery.oci with retired = true until the apply has emptied its artifact, as the guide \"Clusters the runner cannot reach\" says. Nothing was written.",
			entry, what, fluxNameLabel, fluxNamespaceLabel, owner, doing, entry.Cluster, owner)}, nil
}

// inventoryLists reports whether Kustomization k applies entry: its
// status.inventory lists the object (Flux's id
// "<namespace>_<name>_<group>_<kind>"), or it has no inventory yet (never
// applied: its next reconciliation may apply the object).
func inventoryLists(k *unstructured.Unstructured, entry Entry) bool {
	entries, found, err := unstructured.NestedSlice(k.Object, "status", "inventory", "entries")
	if !found || err != nil {
		_, hasInventory, _ := unstructured.NestedMap(k.Object, "status", "inventory")
		return !hasInventory || err != nil // unreadable: as if it applied it
	}
	id, err := flux.InventoryID(entry.Key())
	if err != nil {
		return true
	}
	for _, x := range entries {
		if m, ok := x.(map[string]any); ok && m["id"] == id {
			return true
		}
	}
	return false
}

// forbiddenUser is the user a 403's message names.
var forbiddenUser = regexp.MustCompile(`User "([^"]+)"`)

// kustomizationGrant is the kubectl that lets the user a forbidden read
// of Kustomizations names read them, in namespace ns.
func kustomizationGrant(ns string, err error) string {
	user := "<the provider's user>"
	if m := forbiddenUser.FindStringSubmatch(err.Error()); m != nil {
		user = m[1]
	}
	return fmt.Sprintf("kubectl -n %s create role terraform-provider-mesh-flux-read --verb=get --resource=kustomizations.kustomize.toolkit.fluxcd.io\n"+
		"kubectl -n %s create rolebinding terraform-provider-mesh-flux-read --role=terraform-provider-mesh-flux-read --user=%s\n", ns, ns, user)
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
	applied := a.Target
	applied.Repository, applied.Tag = strings.TrimPrefix(url, "oci://"), tag
	return applied.Normalized() == a.Target.Normalized()
}

// fluxAppliedErrors are the plan's errors for owner's objects on push
// clusters that a Flux Kustomization applies (fluxApplied), and its
// warnings where the write proceeds unchecked, from the process's
// listings (one LIST per cluster and kind, shared with refresh). A
// cluster that cannot be read is left out: refresh already warns about
// it, and the apply's own reads check again. So is a cluster whose
// delivery is not known at plan (UnknownDelivery): it may be pull.
func (e *Engine) fluxAppliedErrors(ctx context.Context, owner Owner, entries []Entry) (errs, warns []*Error) {
	doing := "write"
	if owner.Composition != nil {
		doing = "compose its contribution into"
	}
	for _, cluster := range clustersOf(entries) {
		if _, pull, err := e.pullOf(cluster); pull || err != nil || e.deliveryUnknown(cluster) {
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
			refusal, warning := e.fluxApplied(ctx, c.Dynamic, owner, en, obj.labels, doing)
			if refusal != nil {
				errs = append(errs, refusal)
			}
			if warning != nil {
				warns = append(warns, warning)
			}
		}
	}
	return errs, warns
}

// UnknownDelivery is a Delivery that knows, at plan, the clusters whose
// delivery is not known yet (a pull cluster's repository is another
// resource's attribute): they may be pull, and the plan leaves the
// push-side checks out for them; the apply knows.
type UnknownDelivery interface {
	Unknown(cluster string) bool
}

// deliveryUnknown reports whether cluster's delivery is not known yet.
func (e *Engine) deliveryUnknown(cluster string) bool {
	u, ok := e.Delivery.(UnknownDelivery)
	return ok && u.Unknown(cluster)
}
