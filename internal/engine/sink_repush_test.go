package engine

// Pull artifacts changed by someone else: a hand re-push, a foreign
// object, a registry that answers 404 (found by review).

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// A tag re-pushed by hand with an extra object (here an
// AuthorizationPolicy that allows everything in istio-system) is drift:
// the refresh reports it (a warning naming it, the owner's entries
// drifted) and the apply publishes the artifact without it. Before the
// review, refresh looked only at the owner's objects and every publish
// kept what it did not own, so Flux applied the extra object for good.
func TestPullForeignObjectInTheArtifactIsDriftTheApplyRemoves(t *testing.T) {
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

// A tag re-pushed with Flux's own layout (what `flux push artifact` of a
// kustomize directory gives: a kustomization.yaml beside the manifests)
// blocks neither the apply that undoes it nor destroy: the reader lists
// the kustomization.yaml as a file that is not an object instead of
// failing (found by review: the state was stuck).
func TestPullRepushInFluxKustomizeLayoutBlocksNeitherApplyNorDestroy(t *testing.T) {
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

// pushRaw pushes files as a Flux artifact, without our annotations.
func pushRaw(t *testing.T, tg oci.Target, files map[string]string) {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for n, body := range files {
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	img, err := mutate.Append(empty.Image, mutate.Addendum{Layer: static.NewLayer(buf.Bytes(), oci.ContentMediaType)})
	if err != nil {
		t.Fatal(err)
	}
	img = mutate.ConfigMediaType(mutate.MediaType(img, types.OCIManifestSchema1), oci.ConfigMediaType)
	ref, err := name.NewTag(tg.String(), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
}

// A hand re-push of this state's own artifact whose objects lost their
// owner labels (re-rendered with kubectl, a kustomize overlay) is undone
// by the apply, which publishes ours over objects without the provider's
// labels (found by review: the apply refused them as someone else's).
func TestPullRepushWithoutLabelsIsUndone(t *testing.T) {
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

// A registry endpoint that answers 404 to everything (a misrouted
// ingress or load balancer during an outage, a repository host that is
// not a registry) is an error, prior entries kept, not an empty artifact:
// only a 404 to a manifest request means the tag does not exist (found by
// review: the /v2/ ping's 404 made refresh drop every object silently).
func TestPullRegistryAnswering404EverywhereIsNotAnEmptyArtifact(t *testing.T) {
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

// One HEAD answering 404 for a tag that exists (a proxy that does not
// forward HEAD, a cache behind a push) does not make the Writer publish
// over the artifact from empty: a GET confirms the absence, so another
// intent's apply keeps every object already there (found by review).
func TestPullHeadNotFoundDoesNotOverwriteTheArtifact(t *testing.T) {
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
