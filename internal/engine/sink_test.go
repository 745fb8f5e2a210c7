package engine

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// pullRegistry is go-containerregistry's in-memory registry; fetches
// counts the manifest GETs (one per artifact read).
type pullRegistry struct {
	host    string
	fetches atomic.Int64
}

func newPullRegistry(t *testing.T) *pullRegistry {
	t.Helper()
	pr := &pullRegistry{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/") {
			pr.fetches.Add(1)
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	pr.host = strings.TrimPrefix(srv.URL, "http://")
	return pr
}

// pullClusters delivers the named clusters by pull, each to its own
// repository of the registry, as state "state-a".
type pullClusters map[string]oci.Target

func (p pullClusters) Pull(cluster string) (PullArtifact, bool, error) {
	t, ok := p[cluster]
	return PullArtifact{Target: t, Publisher: "state-a"}, ok, nil
}

func (pr *pullRegistry) target(cluster string) oci.Target {
	return oci.Target{Repository: pr.host + "/mesh/" + cluster, Tag: "state-a", Insecure: true}
}

// pullDesired is a desired ServiceEntry with the digest a plan gives it.
func pullDesired(t *testing.T, owner Owner, cluster, name string) Desired {
	t.Helper()
	d := serviceEntry(owner, cluster, name)
	// Numbers too: the artifact's YAML must give them back as the plan
	// digests them.
	d.Manifest["spec"].(map[string]any)["ports"] = []any{map[string]any{"number": int64(8080), "name": "http", "protocol": "HTTP"}}
	d.Manifest["spec"].(map[string]any)["weight"] = 0.5
	digest, err := desiredDigest(d.Manifest)
	if err != nil {
		t.Fatal(err)
	}
	d.Digest = digest
	return d
}

// newPullEngine: east is pushed (a fake cluster), onprem pulls and has no
// reachable API server.
func newPullEngine(t *testing.T, pr *pullRegistry) (*Engine, fakeClusters) {
	e, fc := newFakeEngine(t, "east")
	e.Delivery = pullClusters{"onprem": pr.target("onprem")}
	return e, fc
}

func TestPullApplyPublishesAndRefreshRebuildsTheSameEntries(t *testing.T) {
	pr := newPullRegistry(t)
	e, fc := newPullEngine(t, pr)
	ctx := context.Background()
	desired := []Desired{pullDesired(t, testOwner, "east", "a"), pullDesired(t, testOwner, "onprem", "a"), pullDesired(t, testOwner, "onprem", "b")}
	entries, err := e.Apply(ctx, testOwner, desired, nil)
	if err != nil {
		t.Fatalf("apply with onprem's API server unreachable: %v", err)
	}
	if got, want := keysOf(entries), keysOf(Entries(desired)); got != want {
		t.Errorf("inventory %s, want %s", got, want)
	}
	if live(t, fc["east"], desired[0].Entry) == nil {
		t.Error("the push cluster's object was not applied")
	}
	a, found, err := oci.Fetch(ctx, pr.target("onprem"))
	if err != nil || !found || len(a.Objects) != 2 {
		t.Fatalf("onprem's artifact: found %v, %d objects, %v", found, len(a.Objects), err)
	}
	// A new run reads the artifact back: the same entries, digests as
	// planned, so the next plan is empty.
	fresh, _ := newPullEngine(t, pr)
	got, errs := fresh.Read(ctx, testOwner, nil, []string{"onprem"}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if keysOf(got) != keysOf(Entries(desired[1:])) {
		t.Errorf("refreshed %s, want %s", keysOf(got), keysOf(Entries(desired[1:])))
	}
}

// Apply replaces the owner's objects in the artifact: what it no longer
// wants goes, another intent's objects stay.
func TestPullApplyPrunesOnlyTheOwnersObjects(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	ctx := context.Background()
	other := Owner{Kind: "virtual-destination", Name: "account", ID: "id-2"}
	if _, err := e.Apply(ctx, other, []Desired{pullDesired(t, other, "onprem", "acc")}, nil); err != nil {
		t.Fatal(err)
	}
	first := []Desired{pullDesired(t, testOwner, "onprem", "a"), pullDesired(t, testOwner, "onprem", "b")}
	prior, err := e.Apply(ctx, testOwner, first, nil)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := e.Apply(ctx, testOwner, first[1:], prior)
	if err != nil {
		t.Fatal(err)
	}
	if keysOf(entries) != keysOf(Entries(first[1:])) {
		t.Errorf("inventory %s after pruning a", keysOf(entries))
	}
	a, _, err := oci.Fetch(ctx, pr.target("onprem"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for k := range a.Objects {
		names = append(names, k[strings.LastIndex(k, "/")+1:])
	}
	if len(a.Objects) != 2 || a.Objects["networking.istio.io/ServiceEntry/istio-system/acc"] == nil || a.Objects["networking.istio.io/ServiceEntry/istio-system/b"] == nil {
		t.Errorf("the artifact holds %v, want acc (another intent's) and b", names)
	}
	got, errs := e.Read(ctx, other, nil, []string{"onprem"}, nil)
	if len(errs) > 0 || keysOf(got) != keysOf([]Entry{pullDesired(t, other, "onprem", "acc").Entry}) {
		t.Errorf("the other intent refreshes %s, %v: want only its own object", keysOf(got), errs)
	}
	// Destroy empties the artifact of the owner's objects.
	left, err := e.Delete(ctx, testOwner, entries)
	if err != nil || len(left) != 0 {
		t.Errorf("delete left %s, %v", keysOf(left), err)
	}
}

// A tag re-pushed by someone else is drift: the refresh shows another
// digest, and the apply puts the planned objects back.
func TestPullRepushedTagIsDriftTheApplyUndoes(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	ctx := context.Background()
	desired := []Desired{pullDesired(t, testOwner, "onprem", "a")}
	prior, err := e.Apply(ctx, testOwner, desired, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := pullDesired(t, testOwner, "onprem", "a").Manifest
	changed["spec"] = map[string]any{"hosts": []any{"evil.global"}}
	k, err := oci.Key(changed)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oci.Publish(ctx, pr.target("onprem"), oci.Objects{k: changed}, ""); err != nil {
		t.Fatal(err)
	}
	run2, _ := newPullEngine(t, pr)
	got, errs := run2.Read(ctx, testOwner, nil, []string{"onprem"}, prior)
	if len(errs) > 0 || len(got) != 1 || got[0].Digest == desired[0].Digest {
		t.Fatalf("refresh after a re-push: %s, %v; want entry a with a digest other than %s", keysOf(got), errs, desired[0].Digest)
	}
	if _, err := run2.Apply(ctx, testOwner, desired, got); err != nil {
		t.Fatal(err)
	}
	run3, _ := newPullEngine(t, pr)
	again, errs := run3.Read(ctx, testOwner, nil, []string{"onprem"}, nil)
	if len(errs) > 0 || keysOf(again) != keysOf(Entries(desired)) {
		t.Errorf("after the apply: %s, %v, want %s", keysOf(again), errs, keysOf(Entries(desired)))
	}
}

// A registry that cannot be reached is an error, as an unreachable
// cluster is: the refresh keeps prior entries and says why.
func TestPullUnreachableRegistryIsAnError(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	tg := pr.target("onprem")
	tg.Transport = roundTrip(func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") })
	e.Delivery = pullClusters{"onprem": tg}
	prior := Entries([]Desired{pullDesired(t, testOwner, "onprem", "a")})
	got, errs := e.Read(context.Background(), testOwner, nil, []string{"onprem"}, prior)
	if len(errs) != 1 || !strings.Contains(errs[0].Summary, "onprem") || keysOf(got) != keysOf(prior) {
		t.Errorf("refresh with the registry unreachable: %s, %v; want the prior entries and an error naming onprem", keysOf(got), errs)
	}
	if _, err := e.Apply(context.Background(), testOwner, []Desired{pullDesired(t, testOwner, "onprem", "b")}, prior); err == nil {
		t.Error("apply with the registry unreachable succeeded")
	}
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// One run reads each artifact once, however many intents refresh.
func TestPullRefreshFetchesEachArtifactOnce(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	ctx := context.Background()
	other := Owner{Kind: "virtual-destination", Name: "account", ID: "id-2"}
	for _, o := range []Owner{testOwner, other} {
		if _, err := e.Apply(ctx, o, []Desired{pullDesired(t, o, "onprem", o.Name)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	run2, _ := newPullEngine(t, pr)
	before := pr.fetches.Load()
	for _, o := range []Owner{testOwner, other, testOwner} {
		if got, errs := run2.Read(ctx, o, nil, []string{"onprem"}, nil); len(errs) > 0 || len(got) != 1 {
			t.Fatalf("refresh of %s: %s, %v", o, keysOf(got), errs)
		}
	}
	if n := pr.fetches.Load() - before; n != 1 {
		t.Errorf("three refreshes made %d manifest reads, want 1", n)
	}
}

// A second state whose workspace names the same artifact: its refresh
// (at plan) fails naming both states, before anything is published.
func TestPullArtifactOfAnotherStateFailsTheRefresh(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newPullEngine(t, pr)
	ctx := context.Background()
	if _, err := e.Apply(ctx, testOwner, []Desired{pullDesired(t, testOwner, "onprem", "a")}, nil); err != nil {
		t.Fatal(err)
	}
	other, _ := newPullEngine(t, pr)
	other.Delivery = otherState{pr.target("onprem")}
	_, errs := other.Read(ctx, testOwner, nil, []string{"onprem"}, nil)
	var claimed *oci.ClaimedError
	if len(errs) != 1 || !errors.As(errs[0], &claimed) || !strings.Contains(errs[0].Error(), `"state-a"`) || !strings.Contains(errs[0].Error(), `"state-b"`) {
		t.Errorf("refresh by a second state: %v, want an error naming state-a and state-b", errs)
	}
}

type otherState struct{ t oci.Target }

func (o otherState) Pull(string) (PullArtifact, bool, error) {
	return PullArtifact{Target: o.t, Publisher: "state-b"}, true, nil
}
