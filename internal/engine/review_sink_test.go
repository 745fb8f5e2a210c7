package engine

// Adversarial review of pull delivery (issue 35). Each test states what the
// design promises and fails where the code does not hold it.

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// R1. Two Terraform states that set the same `workspace` (a copied root
// module, two pipelines of one repository with different backends) on one
// pull cluster. docs/design.md: "a state that finds another publisher there
// fails, naming both, at refresh and at apply". But the publisher recorded
// is the workspace name, which is also the tag: two states with distinct
// workspaces never share an artifact, and two with the same workspace
// carry the same publisher, so the claim never fires. Their applies, each
// serialised only within its own process, then overwrite each other: both
// succeed and one state's objects are gone from the artifact (Flux prunes
// them from the cluster) until that state's next plan.
func TestReviewSameWorkspaceInTwoStatesLosesObjects(t *testing.T) {
	pr := newPullRegistry(t)
	ctx := context.Background()
	ownerA := Owner{Kind: "virtual-destination", Name: "user", ID: "state-1-instance"}
	ownerB := Owner{Kind: "virtual-destination", Name: "account", ID: "state-2-instance"}

	stateB, _ := newPullEngine(t, pr) // another process, its own Writer

	// State A's push is held at the manifest PUT while state B applies.
	var once sync.Once
	var errB error
	tgA := pr.target("onprem")
	tgA.Transport = roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			once.Do(func() {
				// State B refreshes first: no claim error, the artifact is
				// "its own" (same publisher).
				if _, errs := stateB.Read(ctx, ownerB, nil, []string{"onprem"}, nil); len(errs) > 0 {
					errB = errs[0]
					return
				}
				_, errB = stateB.Apply(ctx, ownerB, []Desired{pullDesired(t, ownerB, "onprem", "account")}, nil)
			})
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	stateA, _ := newFakeEngine(t, "east")
	stateA.Delivery = pullClusters{"onprem": tgA}

	if _, err := stateA.Apply(ctx, ownerA, []Desired{pullDesired(t, ownerA, "onprem", "user")}, nil); err != nil {
		t.Fatalf("state A's apply: %v", err)
	}
	if errB != nil {
		t.Logf("state B was told: %v (the claim works)", errB)
		return
	}
	a, _, err := oci.Fetch(ctx, pr.target("onprem"))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range a.Objects {
		keys = append(keys, k)
	}
	if len(a.Objects) != 2 {
		t.Errorf("both states' applies succeeded with no claim error, but the shared artifact holds %v: "+
			"one state's objects were overwritten (want both, or a ClaimedError naming both states)", keys)
	}
}

// R2. A tag re-pushed by hand with an extra object (here an
// AuthorizationPolicy that allows everything in istio-system). design.md:
// "a tag re-pushed with other content is drift the plan shows and the next
// apply undoes". The refresh looks only at the owner's objects, so the plan
// shows nothing, and every publish keeps objects it does not own: the
// extra object is delivered by Flux for good.
func TestReviewRepushedTagWithAnExtraObjectIsNeitherShownNorUndone(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	ctx := context.Background()
	desired := []Desired{pullDesired(t, testOwner, "onprem", "a")}
	prior, err := e.Apply(ctx, testOwner, desired, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _, err := oci.Fetch(ctx, pr.target("onprem"))
	if err != nil {
		t.Fatal(err)
	}
	extra := map[string]any{
		"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
		"metadata": map[string]any{"name": "allow-all", "namespace": "istio-system"},
		"spec":     map[string]any{"action": "ALLOW", "rules": []any{map[string]any{}}},
	}
	k, _ := oci.Key(extra)
	objs := a.Objects.Clone()
	objs[k] = extra
	if _, err := oci.Publish(ctx, pr.target("onprem"), objs, "state-a"); err != nil {
		t.Fatal(err)
	}

	run2, _ := newPullEngine(t, pr)
	got, errs := run2.Read(ctx, testOwner, nil, []string{"onprem"}, prior)
	if len(errs) == 0 && keysOf(got) == keysOf(prior) {
		t.Errorf("refresh after a re-push that added %s: entries unchanged, no error, no warning: the plan says No changes", k)
	}
	if _, err := run2.Apply(ctx, testOwner, desired, got); err != nil {
		t.Fatal(err)
	}
	after, _, _ := oci.Fetch(ctx, pr.target("onprem"))
	if after.Objects[k] != nil {
		t.Errorf("after the apply the artifact still holds the hand-added %s: the re-push is never undone", k)
	}
}

// R3. A tag re-pushed with Flux's own layout (what `flux push artifact`
// of a kustomize directory gives: a kustomization.yaml beside the
// manifests). The reader takes every .yaml file for an object and fails on
// the kustomization.yaml (no metadata.name). The Writer reads the artifact
// before each push, so the apply that should undo the re-push fails, and
// so does destroy: the state is stuck until someone re-pushes by hand.
func TestReviewRepushedKustomizeArtifactBlocksApplyAndDestroy(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	ctx := context.Background()
	desired := []Desired{pullDesired(t, testOwner, "onprem", "a")}
	prior, err := e.Apply(ctx, testOwner, desired, nil)
	if err != nil {
		t.Fatal(err)
	}
	pushRaw(t, pr.target("onprem"), map[string]string{
		"kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- se.yaml\n",
		"se.yaml":            "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata:\n  name: evil\n  namespace: istio-system\nspec:\n  hosts: [evil.global]\n",
	})
	run2, _ := newPullEngine(t, pr)
	if _, err := run2.Apply(ctx, testOwner, desired, prior); err != nil {
		t.Errorf("the apply cannot undo a re-push in Flux's kustomize layout: %v", err)
	}
	run3, _ := newPullEngine(t, pr)
	if left, err := run3.Delete(ctx, testOwner, prior); err != nil {
		t.Errorf("destroy cannot proceed either (left %s): %v", keysOf(left), err)
	}
}

// R4. Push to pull in the same apply that drops an object. Apply's rule is
// "the returned inventory lists exactly what exists afterwards". Once the
// cluster is pull, publishPull takes its prior entries and only edits the
// artifact, which never held the object push wrote: the object stays on
// the cluster, the state forgets it, and Flux's inventory never had it, so
// nothing will ever delete it.
func TestReviewPushToPullSwitchOrphansAnObjectDroppedInTheSameApply(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newFakeEngine(t, "onprem")
	ctx := context.Background()
	first := []Desired{pullDesired(t, testOwner, "onprem", "a"), pullDesired(t, testOwner, "onprem", "b")}
	prior, err := e.Apply(ctx, testOwner, first, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The operator adds delivery.oci to onprem and drops b in one change.
	e2, _ := newFakeEngine(t)
	e2.Clients = e.Clients
	e2.Delivery = pullClusters{"onprem": pr.target("onprem")}
	entries, err := e2.Apply(ctx, testOwner, first[:1], prior)
	if err != nil {
		t.Fatal(err)
	}
	if live(t, fc["onprem"], first[1].Entry) != nil && !strings.Contains(keysOf(entries), "/b=") {
		t.Errorf("after the push-to-pull switch, b still exists on onprem but the inventory is %s: an orphan nothing will delete", keysOf(entries))
	}
}

// R6. Apply's rule: "prune nothing after a failed write: what would be
// pruned may be what traffic still relies on". On a pull cluster the
// stale objects leave the artifact in the publish, before and regardless
// of the push clusters' writes: with east's write failing, onprem's old
// object is already gone from the artifact (and Flux prunes it).
func TestReviewPullPrunesEvenWhenAPushWriteFails(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newPullEngine(t, pr)
	ctx := context.Background()
	old := pullDesired(t, testOwner, "onprem", "old")
	prior, err := e.Apply(ctx, testOwner, []Desired{old}, nil)
	if err != nil {
		t.Fatal(err)
	}
	failWrites(fc["east"], errors.New("east refuses"))
	entries, err := e.Apply(ctx, testOwner, []Desired{pullDesired(t, testOwner, "east", "new")}, prior)
	if err == nil {
		t.Fatal("east's write should fail")
	}
	a, _, _ := oci.Fetch(ctx, pr.target("onprem"))
	if len(a.Objects) == 0 {
		t.Errorf("east's write failed, yet onprem's old object was pruned from the artifact (inventory %s); push keeps stale objects after a failed write", keysOf(entries))
	}
}

// R7. Two pull clusters of one state given the same repository (a copied
// clusters entry, or two spellings Docker treats as one). Their artifacts
// are one tag; each cluster's publish removes every object of the owner
// (labels do not name the cluster) and adds its own, so the apply
// succeeds and the artifact holds one cluster's objects only. Nothing at
// plan says the repositories collide.
func TestReviewTwoPullClustersOnOneRepositoryEraseEachOther(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newFakeEngine(t)
	shared := pr.target("shared")
	e.Delivery = pullClusters{"east": shared, "west": shared}
	ctx := context.Background()
	desired := []Desired{pullDesired(t, testOwner, "east", "a"), pullDesired(t, testOwner, "west", "b")}
	entries, err := e.Apply(ctx, testOwner, desired, nil)
	if err != nil {
		t.Logf("apply refused: %v", err)
		return
	}
	a, _, err := oci.Fetch(ctx, shared)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Objects) != 2 {
		t.Errorf("apply returned %s without error, but the shared artifact holds %d object(s): one cluster's objects were removed by the other's publish", keysOf(entries), len(a.Objects))
	}
}

// R9. A hand re-push of this state's own artifact whose objects lost
// their owner labels (re-rendered with kubectl, a kustomize overlay): the
// refresh no longer finds them (the plan adds them back), and the apply
// refuses to publish over "something other than this provider" in the
// state's own artifact, so the re-push is never undone.
func TestReviewRepushWithoutLabelsCannotBeUndone(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	ctx := context.Background()
	desired := []Desired{pullDesired(t, testOwner, "onprem", "a")}
	if _, err := e.Apply(ctx, testOwner, desired, nil); err != nil {
		t.Fatal(err)
	}
	a, _, _ := oci.Fetch(ctx, pr.target("onprem"))
	objs := oci.Objects{}
	for k, m := range a.Objects {
		c := map[string]any{}
		for f, v := range m {
			c[f] = v
		}
		c["metadata"] = map[string]any{"name": "a", "namespace": "istio-system"}
		objs[k] = c
	}
	if _, err := oci.Publish(ctx, pr.target("onprem"), objs, "state-a"); err != nil {
		t.Fatal(err)
	}
	run2, _ := newPullEngine(t, pr)
	got, _ := run2.Read(ctx, testOwner, nil, []string{"onprem"}, Entries(desired))
	if _, err := run2.Apply(ctx, testOwner, desired, got); err != nil {
		t.Errorf("the apply cannot undo a re-push of the state's own artifact that dropped labels: %v", err)
	}
}

// R11. A push cluster's requests are bounded (kubeclient.DefaultTimeout,
// 30 s a request, and the silent-cluster detection); the registry's are
// not: Head, Fetch and the pushes run with Terraform's context, which has
// no deadline (no resource has a timeouts block), over
// http.DefaultTransport (no response-header timeout). A registry that
// accepts the connection and never answers (a black-holed proxy, a stuck
// registry) hangs every plan and apply until someone interrupts it,
// instead of "registry unreachable" as the design promises. Checked here
// without waiting: no request the sink makes carries a deadline.
func TestReviewRegistryRequestsHaveADeadline(t *testing.T) {
	pr := newPullRegistry(t)
	tg := pr.target("onprem")
	var unbounded []string
	var mu sync.Mutex
	tg.Transport = roundTrip(func(r *http.Request) (*http.Response, error) {
		if _, ok := r.Context().Deadline(); !ok {
			mu.Lock()
			unbounded = append(unbounded, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	e, _ := newFakeEngine(t)
	e.Delivery = pullClusters{"onprem": tg}
	ctx := context.Background()
	prior, err := e.Apply(ctx, testOwner, []Desired{pullDesired(t, testOwner, "onprem", "a")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run2, _ := newFakeEngine(t)
	run2.Delivery = pullClusters{"onprem": tg}
	run2.Read(ctx, testOwner, nil, []string{"onprem"}, prior)
	if len(unbounded) > 0 {
		t.Errorf("%d registry requests without any deadline, e.g. %v", len(unbounded), unbounded[:min(3, len(unbounded))])
	}
}

// R13. A registry endpoint that answers 404 to everything (a misrouted
// ingress or load balancer during an outage, a repository host that is
// not a registry) is taken for "no artifact": notFound accepts any 404,
// also the /v2/ ping's. The refresh then reports every object of the pull
// cluster gone, with no error or warning naming the registry, instead of
// keeping prior entries as an unreachable registry does.
func TestReviewRegistryAnswering404EverywhereIsNotAnEmptyArtifact(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	ctx := context.Background()
	prior, err := e.Apply(ctx, testOwner, []Desired{pullDesired(t, testOwner, "onprem", "a")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tg := pr.target("onprem")
	tg.Transport = roundTrip(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Body: http.NoBody, Header: http.Header{}, Request: r}, nil
	})
	run2, _ := newFakeEngine(t)
	run2.Delivery = pullClusters{"onprem": tg}
	got, errs := run2.Read(ctx, testOwner, nil, []string{"onprem"}, prior)
	if len(errs) == 0 && len(got) == 0 {
		t.Errorf("a registry answering 404 to every request (the /v2/ ping too): refresh dropped %s with no error", keysOf(prior))
	}
}

// R14. The Writer trusts one HEAD's 404 as "the tag does not exist" and
// publishes the batch over an empty artifact. A registry whose HEAD
// answers 404 for a tag that exists (replication lag or a CDN cache after
// a push, a proxy that does not forward HEAD) makes the next apply of any
// intent replace the whole artifact with that intent's objects: every
// other intent's objects leave the artifact and Flux prunes them, while
// the apply succeeds. A GET confirming the absence, or refusing to create
// a tag this state has already published (any prior entry of the
// cluster), would catch it.
func TestReviewHeadNotFoundOverwritesTheArtifactFromEmpty(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	ctx := context.Background()
	if _, err := e.Apply(ctx, testOwner, []Desired{pullDesired(t, testOwner, "onprem", "a")}, nil); err != nil {
		t.Fatal(err)
	}
	tg := pr.target("onprem")
	tg.Transport = roundTrip(func(r *http.Request) (*http.Response, error) {
		if r.Method == http.MethodHead && strings.Contains(r.URL.Path, "/manifests/") {
			return &http.Response{StatusCode: http.StatusNotFound, Status: "404 Not Found", Body: http.NoBody, Header: http.Header{}, Request: r}, nil
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	run2, _ := newFakeEngine(t)
	run2.Delivery = pullClusters{"onprem": tg}
	other := Owner{Kind: "virtual-destination", Name: "account", ID: "id-2"}
	if _, err := run2.Apply(ctx, other, []Desired{pullDesired(t, other, "onprem", "acc")}, nil); err != nil {
		t.Logf("apply refused: %v", err)
		return
	}
	a, _, _ := oci.Fetch(ctx, pr.target("onprem"))
	if len(a.Objects) != 2 {
		t.Errorf("after one HEAD 404, another intent's apply left %d object(s) in the artifact: intent user's object a was dropped", len(a.Objects))
	}
}
