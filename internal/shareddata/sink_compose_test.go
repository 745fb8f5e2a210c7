package shareddata

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Traffic policies (composed objects) on a pull cluster, on the
// in-process registry (pull_compose.go).

// composedOn is owner's desired composed VirtualService in cluster, with
// the digest a plan gives it (its contribution's).
func composedOn(t *testing.T, owner engine.Owner, cluster string) engine.Desired {
	t.Helper()
	d := enginetest.ComposedEntry()
	d.Cluster = cluster
	digest, err := owner.PartDigest(owner.Composition.Contribution.For(cluster).Raw)
	if err != nil {
		t.Fatal(err)
	}
	d.Digest = digest
	return d
}

// artifactVS is the composed VirtualService the artifact of target holds
// (nil when none).
func artifactVS(t *testing.T, target oci.Target) map[string]any {
	t.Helper()
	a, found, err := oci.Fetch(context.Background(), target)
	if err != nil {
		t.Fatal(err)
	}
	if !found {
		return nil
	}
	return a.Objects[engine.ArtifactKey(enginetest.ComposedEntry().Entry)]
}

func publishedRoutes(m map[string]any) []any {
	if m == nil {
		return nil
	}
	spec, _ := m["spec"].(map[string]any)
	routes, _ := spec["routes"].([]any)
	return routes
}

// Two traffic policies of one state on a pull cluster, applied in
// parallel (the artifact's Writer serialises them): one published
// VirtualService composed of both, carrying the contributions and labels
// push writes, and entries with the digests push records, so that
// switching the cluster between push and pull changes no object.
func TestPullComposesTwoIntentsOfOneStateIntoOnePublishedObject(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newPullEngine(pr)
	ctx := context.Background()
	a, b := enginetest.ComposedOwner("a"), enginetest.ComposedOwner("b")
	pulled := map[string][]engine.Entry{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, o := range []engine.Owner{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := e.Apply(ctx, o, []engine.Desired{composedOn(t, o, "onprem")}, nil)
			if err != nil {
				t.Errorf("apply of %s: %v", o, err)
			}
			mu.Lock()
			pulled[o.Name] = got
			mu.Unlock()
		}()
	}
	wg.Wait()
	vs := artifactVS(t, pr)
	if got := fmt.Sprint(publishedRoutes(vs)); got != "[route-of-a route-of-b]" {
		t.Fatalf("the published VirtualService's routes are %s, want both policies' composed: %v", got, vs)
	}
	// Push composes the same object on east.
	for _, o := range []engine.Owner{a, b} {
		pushed, err := e.Apply(ctx, o, []engine.Desired{composedOn(t, o, "east")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(pushed) != 1 || len(pulled[o.Name]) != 1 || pushed[0].Digest != pulled[o.Name][0].Digest || pushed[0].Key().Name != pulled[o.Name][0].Key().Name {
			t.Errorf("%s: pushed entries %v, published %v: want the same object and digest", o, pushed, pulled[o.Name])
		}
	}
	live, err := fc["east"].Resource(vsResource).Namespace("istio-system").Get(ctx, "tp-user.global", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	published := &unstructured.Unstructured{Object: vs}
	if !reflect.DeepEqual(published.GetAnnotations(), live.GetAnnotations()) || !reflect.DeepEqual(published.GetLabels(), live.GetLabels()) {
		t.Errorf("the published object's metadata differs from push's\npublished: %v %v\npushed:    %v %v", published.GetLabels(), published.GetAnnotations(), live.GetLabels(), live.GetAnnotations())
	}
	if !reflect.DeepEqual(vs["spec"], live.Object["spec"]) {
		t.Errorf("the published spec %v differs from push's %v", vs["spec"], live.Object["spec"])
	}
}

// Refresh of a composed object from the artifact: the entries the apply
// recorded come back unchanged in a new process; a tag re-pushed with
// the composed spec edited is drift for every contributor, and the next
// apply publishes the composition again.
func TestPullComposedRefreshAndDrift(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(pr)
	ctx := context.Background()
	a, b := enginetest.ComposedOwner("a"), enginetest.ComposedOwner("b")
	applied := map[string][]engine.Entry{}
	for _, o := range []engine.Owner{a, b} {
		got, err := e.Apply(ctx, o, []engine.Desired{composedOn(t, o, "onprem")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		applied[o.Name] = got
	}
	run2, _ := newPullEngine(pr)
	for _, o := range []engine.Owner{a, b} {
		got, errs := run2.Read(ctx, o, nil, []string{"onprem"}, applied[o.Name])
		if len(errs) > 0 || !reflect.DeepEqual(got, applied[o.Name]) {
			t.Errorf("refresh of %s: %v, %v; want the applied entries %v", o, got, errs, applied[o.Name])
		}
	}
	// Someone re-pushes the tag with the routes edited.
	art, _, err := oci.Fetch(ctx, pr)
	if err != nil {
		t.Fatal(err)
	}
	objs := art.Objects.Clone()
	k := engine.ArtifactKey(enginetest.ComposedEntry().Entry)
	edited := (&unstructured.Unstructured{Object: objs[k]}).DeepCopy().Object
	edited["spec"].(map[string]any)["routes"] = []any{"route-by-hand"}
	objs[k] = edited
	if _, err := oci.Publish(ctx, pr, objs, art.Publisher); err != nil {
		t.Fatal(err)
	}
	run3, _ := newPullEngine(pr)
	for _, o := range []engine.Owner{a, b} {
		got, errs := run3.Read(ctx, o, nil, []string{"onprem"}, applied[o.Name])
		if len(errs) > 0 || len(got) != 1 || got[0].Digest != engine.DigestDrifted {
			t.Errorf("refresh of %s after the re-push: %v, %v; want its entry drifted", o, got, errs)
		}
	}
	if _, err := run3.Apply(ctx, a, []engine.Desired{composedOn(t, a, "onprem")}, applied[a.Name]); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(publishedRoutes(artifactVS(t, pr))); got != "[route-of-a route-of-b]" {
		t.Errorf("after the apply the routes are %s, want the composition again", got)
	}
}

// Destroying one of two policies releases its contribution only: the
// object stays, composed of the other; destroying the other removes it.
func TestPullComposedPruneOfOneContributionLeavesTheOther(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(pr)
	ctx := context.Background()
	a, b := enginetest.ComposedOwner("a"), enginetest.ComposedOwner("b")
	applied := map[string][]engine.Entry{}
	for _, o := range []engine.Owner{a, b} {
		got, err := e.Apply(ctx, o, []engine.Desired{composedOn(t, o, "onprem")}, nil)
		if err != nil {
			t.Fatal(err)
		}
		applied[o.Name] = got
	}
	if left, err := e.Delete(ctx, a, applied["a"]); err != nil || len(left) != 0 {
		t.Fatalf("destroy of a: left %v, %v", left, err)
	}
	vs := artifactVS(t, pr)
	if got := fmt.Sprint(publishedRoutes(vs)); got != "[route-of-b]" {
		t.Errorf("after a's destroy the routes are %s, want b's only", got)
	}
	u := &unstructured.Unstructured{Object: vs}
	if _, ok := u.GetAnnotations()[a.ContributionKey()]; ok {
		t.Errorf("a's contribution is still published: %v", u.GetAnnotations())
	}
	if _, ok := u.GetLabels()[a.ContributionKey()]; ok {
		t.Errorf("a's contribution label is still published: %v", u.GetLabels())
	}
	if _, ok := u.GetAnnotations()[b.ContributionKey()]; !ok {
		t.Errorf("b's contribution is gone with a's: %v", u.GetAnnotations())
	}
	if left, err := e.Delete(ctx, b, applied["b"]); err != nil || len(left) != 0 {
		t.Fatalf("destroy of b: left %v, %v", left, err)
	}
	if vs := artifactVS(t, pr); vs != nil {
		t.Errorf("after both destroys the artifact still holds %v", vs)
	}
}

// A second state's policy on the same object of a pull cluster (its own
// artifact, another tag of the repository): the plan fails naming the
// first state's artifact and the fix, and the apply publishes nothing.
func TestPullComposedSecondStateRefused(t *testing.T) {
	pr := newPullRegistry(t)
	first, _ := newPullEngine(pr)
	ctx := context.Background()
	if _, err := first.Apply(ctx, enginetest.ComposedOwner("a"), []engine.Desired{composedOn(t, enginetest.ComposedOwner("a"), "onprem")}, nil); err != nil {
		t.Fatal(err)
	}
	second, _ := newPullEngine(pr)
	theirs := pr
	theirs.Tag = "state-b"
	second.Delivery = publishedAs{theirs, "state-b"}
	c := enginetest.ComposedOwner("c")
	d := composedOn(t, c, "onprem")
	errs, _ := second.PlanErrors(ctx, c, []engine.Entry{d.Entry})
	if len(errs) != 1 || !errors.Is(errs[0], errComposedElsewhere) || !strings.Contains(errs[0].Detail, pr.String()) ||
		!strings.Contains(errs[0].Detail, `"state-a"`) || !strings.Contains(errs[0].Detail, `traffic policy "a"`) || !strings.Contains(errs[0].Detail, "by push") {
		t.Fatalf("plan errors of the second state: %v, want one naming state-a's artifact, its policy and the fix", errs)
	}
	if _, err := second.Apply(ctx, c, []engine.Desired{d}, nil); !errors.Is(err, errComposedElsewhere) {
		t.Errorf("apply of the second state: %v, want it refused", err)
	}
	if _, found, err := oci.Head(ctx, theirs); err != nil || found {
		t.Errorf("the second state's artifact: found %v, %v; want nothing published", found, err)
	}
	// The first state's own next plan is not refused by its own artifact.
	if errs, _ := first.PlanErrors(ctx, enginetest.ComposedOwner("b"), []engine.Entry{composedOn(t, enginetest.ComposedOwner("b"), "onprem").Entry}); len(errs) != 0 {
		t.Errorf("the first state's plan: %v", errs)
	}
}

// Where the pull cluster has a connection (read-only), an object another
// workspace's state composes there (applied by its Kustomization) fails
// the plan naming that workspace and Kustomization, although its artifact
// is elsewhere.
func TestPullComposedOnTheClusterByAnotherWorkspaceRefused(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newEngine("onprem")
	e.Delivery = onPull{pr}
	ctx := context.Background()
	d := enginetest.ComposedEntry()
	d.Cluster = "onprem"
	theirs := workspaceOwner("x", "id-x", "team-x")
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": d.APIVersion, "kind": d.Kind, "spec": map[string]any{"routes": []any{"route-of-x"}}}}
	obj.SetNamespace(d.Namespace)
	obj.SetName(d.Name)
	obj.SetLabels(map[string]string{engine.LabelManagedBy: engine.ManagedByValue, theirs.ContributionKey(): "id-x", "kustomize.toolkit.fluxcd.io/name": "mesh-team-x", "kustomize.toolkit.fluxcd.io/namespace": "flux-system"})
	obj.SetAnnotations(map[string]string{theirs.ContributionKey(): "team-x:route-of-x"})
	if _, err := fc["onprem"].Resource(vsResource).Namespace(d.Namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	mine := workspaceOwner("a", "id-a", "state-a")
	errs, _ := e.PlanErrors(ctx, mine, []engine.Entry{d.Entry})
	if len(errs) != 1 || !errors.Is(errs[0], errComposedElsewhere) || !strings.Contains(errs[0].Detail, `"team-x"`) || !strings.Contains(errs[0].Detail, "flux-system/mesh-team-x") {
		t.Fatalf("plan errors: %v, want one naming workspace team-x and its Kustomization", errs)
	}
	// For workspace team-x's own state (the contribution came from its
	// own artifact) it is no conflict.
	e.Delivery = publishedAs{pr, "team-x"}
	if errs, _ := e.PlanErrors(ctx, workspaceOwner("y", "id-y", "team-x"), []engine.Entry{d.Entry}); len(errs) != 0 {
		t.Errorf("plan errors of workspace team-x's own policy: %v", errs)
	}
}

// A contribution to another intent's own object (a virtual destination's
// DestinationRule) is not published to a pull cluster: refused at plan,
// naming the fix.
func TestPullJoiningAnotherIntentsObjectRefused(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(pr)
	o := enginetest.ComposedOwner("a")
	o.Composition.Owned = func(translate.Key) bool { return true }
	errs, _ := e.PlanErrors(context.Background(), o, []engine.Entry{composedOn(t, o, "onprem").Entry, composedOn(t, o, "east").Entry})
	if len(errs) != 1 || errs[0].Cluster != "onprem" || !errors.Is(errs[0], errJoinedOnPull) || !strings.Contains(errs[0].Detail, "by push") {
		t.Errorf("plan errors: %v, want one for onprem naming the fix", errs)
	}
}

// publishedAs delivers every cluster by pull to t, as state publisher.
type publishedAs struct {
	t         oci.Target
	publisher string
}

func (p publishedAs) Pull(string) (engine.PullArtifact, bool, error) {
	return engine.PullArtifact{Target: p.t, Publisher: p.publisher}, true, nil
}

// The plan's view of the contributions on a pull cluster's composed
// objects (Contributions, for checkComposition and the limits) is the
// artifact's copy: a policy of the same name from another instance is
// found there, and its verdict is the one push gives (Taken).
func TestPullContributionsReadFromTheArtifact(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(pr)
	ctx := context.Background()
	a := enginetest.ComposedOwner("a")
	if _, err := e.Apply(ctx, a, []engine.Desired{composedOn(t, a, "onprem")}, nil); err != nil {
		t.Fatal(err)
	}
	run2, _ := newPullEngine(pr)
	again := enginetest.ComposedOwner("a")
	again.ID = "id-other"
	found, errs := Contributions(ctx, run2, again, []engine.Entry{composedOn(t, again, "onprem").Entry})
	if len(errs) > 0 || len(found) != 1 || found[0].Name != "a" || found[0].ID != "id-a" {
		t.Fatalf("contributions on the pull cluster: %+v, %v; want a's, from the artifact", found, errs)
	}
	if v := Judge(again, found); v[0].Standing != Taken {
		t.Errorf("verdict on a's contribution for another instance of a: %s, want %s", v[0].Standing, Taken)
	}
}
