package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// testRegistry is go-containerregistry's in-memory registry behind
// httptest, counting the publishes (tag moves); before, when set, sees every
// request first and may answer it itself (returning true).
type testRegistry struct {
	host     string
	pushes   atomic.Int64
	built    atomic.Int64 // manifests pushed by digest: artifacts built
	requests atomic.Int64
	before   func(w http.ResponseWriter, r *http.Request) bool
}

func newRegistry(t testing.TB) *testRegistry {
	t.Helper()
	tr := &testRegistry{}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.requests.Add(1)
		if tr.before != nil && tr.before(w, r) {
			return
		}
		// A publish is the PUT that moves the tag (the manifest is
		// pushed by digest first: write).
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") && !strings.Contains(r.URL.Path, "/manifests/sha256:") {
			tr.pushes.Add(1)
		}
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/sha256:") {
			tr.built.Add(1)
		}
		reg.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	tr.host = strings.TrimPrefix(srv.URL, "http://")
	return tr
}

func (tr *testRegistry) target(tag string) Target {
	return Target{Repository: tr.host + "/mesh/east", Tag: tag, Insecure: true}
}

func object(kind, namespace, name string, spec map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": namespace, "labels": map[string]any{"app.kubernetes.io/managed-by": "terraform-provider-mesh"}},
		"spec":     spec,
	}
}

func set(t *testing.T, ms ...map[string]any) Objects {
	t.Helper()
	out := Objects{}
	for _, m := range ms {
		k, err := Key(m)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = m
	}
	return out
}

func TestPublishFetchInFluxFormat(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	objs := set(t,
		object("VirtualService", "users", "user", map[string]any{"hosts": []any{"user.global"}}),
		object("DestinationRule", "users", "user", map[string]any{"host": "user.global"}),
	)
	digest, err := Publish(ctx, reg.target("s1"), objs, "state-a")
	if err != nil {
		t.Fatal(err)
	}
	got, found, err := Fetch(ctx, reg.target("s1"))
	if err != nil || !found {
		t.Fatalf("fetch: found %v, %v", found, err)
	}
	if got.Digest != digest || got.Publisher != "state-a" {
		t.Errorf("fetched digest %s publisher %q, want %s and state-a", got.Digest, got.Publisher, digest)
	}
	if fmt.Sprint(got.Objects) != fmt.Sprint(objs) {
		t.Errorf("fetched objects\n%v\nwant\n%v", got.Objects, objs)
	}
	// The manifest as Flux reads it.
	ref, err := name.ParseReference(reg.target("s1").String(), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	desc, err := remote.Get(ref)
	if err != nil {
		t.Fatal(err)
	}
	var m v1.Manifest
	if err := json.Unmarshal(desc.Manifest, &m); err != nil {
		t.Fatal(err)
	}
	if m.MediaType != "application/vnd.oci.image.manifest.v1+json" || m.Config.MediaType != ConfigMediaType ||
		len(m.Layers) != 1 || m.Layers[0].MediaType != ContentMediaType {
		t.Errorf("media types: manifest %s, config %s, layers %v", m.MediaType, m.Config.MediaType, m.Layers)
	}
	for _, a := range []string{AnnotationSource, AnnotationRevision, AnnotationCreated} {
		if m.Annotations[a] == "" {
			t.Errorf("annotation %s missing: %v", a, m.Annotations)
		}
	}
	if m.Annotations[AnnotationRevision] != m.Layers[0].Digest.String() {
		t.Errorf("revision %s, want the content's digest %s", m.Annotations[AnnotationRevision], m.Layers[0].Digest)
	}
	if _, found, err := Head(ctx, reg.target("other")); err != nil || found {
		t.Errorf("a tag never pushed: found %v, %v", found, err)
	}
}

func TestSameObjectsSameDigestAndNoPush(t *testing.T) {
	build := func(order []int) string {
		objs := Objects{}
		for _, i := range order {
			m := object("ServiceEntry", "users", fmt.Sprintf("se-%d", i), map[string]any{"hosts": []any{fmt.Sprintf("h%d.global", i)}, "b": 1, "a": 2})
			k, err := Key(m)
			if err != nil {
				t.Fatal(err)
			}
			objs[k] = m
		}
		img, err := Image(objs, "state-a")
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d.String()
	}
	a, b := build([]int{0, 1, 2, 3, 4, 5, 6, 7}), build([]int{7, 6, 5, 4, 3, 2, 1, 0})
	if a != b {
		t.Errorf("the same objects gave two digests: %s, %s", a, b)
	}

	reg := newRegistry(t)
	ctx := context.Background()
	objs := set(t, object("VirtualService", "users", "user", map[string]any{"hosts": []any{"user.global"}}))
	first, err := Publish(ctx, reg.target("s1"), objs, "state-a")
	if err != nil {
		t.Fatal(err)
	}
	before := reg.requests.Load()
	second, err := Publish(ctx, reg.target("s1"), set(t, object("VirtualService", "users", "user", map[string]any{"hosts": []any{"user.global"}})), "state-a")
	if err != nil {
		t.Fatal(err)
	}
	if first != second || reg.pushes.Load() != 1 {
		t.Errorf("publishing the same objects twice: digests %s, %s, %d manifest pushes (want 1)", first, second, reg.pushes.Load())
	}
	// The tag's digest is all a no-op publish asks for (after the
	// registry's ping): no blob is checked or sent.
	if n := reg.requests.Load() - before; n > 2 {
		t.Errorf("a publish of what the tag holds made %d requests, want at most 2 (ping, HEAD of the tag)", n)
	}
}

// TestParallelWritersAllLand: 20 writers each add their own object while
// the first push is held in the registry; every object is in the artifact
// at the end, and the 19 changes queued behind the first push go out in
// one more push.
func TestParallelWritersAllLand(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	var ws Writers
	w := ws.For(reg.target("s1"), "state-a")
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	reg.before = func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			once.Do(func() { close(held); <-release })
		}
		return false
	}
	var queued sync.WaitGroup
	queued.Add(19)
	add := func(i int) error {
		m := object("ServiceEntry", "users", fmt.Sprintf("se-%02d", i), map[string]any{"hosts": []any{"x.global"}})
		_, err := w.Update(ctx, func(objs Objects) error {
			k, err := Key(m)
			objs[k] = m
			return err
		})
		return err
	}
	errs := make([]error, 20)
	var done sync.WaitGroup
	done.Add(20)
	go func() { defer done.Done(); errs[0] = add(0) }()
	<-held // the first push is in flight
	w.mu.Lock()
	w.enqueued = queued.Done
	w.mu.Unlock()
	for i := 1; i < 20; i++ {
		go func() { defer done.Done(); errs[i] = add(i) }()
	}
	queued.Wait() // all 19 are queued behind it
	close(release)
	done.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d: %v", i, err)
		}
	}
	got, _, err := Fetch(ctx, reg.target("s1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Objects) != 20 {
		t.Errorf("the artifact holds %d objects, want all 20: %v", len(got.Objects), got.Objects)
	}
	if n := reg.pushes.Load(); n != 2 {
		t.Errorf("%d manifest pushes, want 2 (the first, then the 19 queued behind it together)", n)
	}
}

// TestRepushedTagIsSeen: a tag pushed by someone else names another
// digest; the next write starts from what it holds.
func TestRepushedTagIsSeen(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	var ws Writers
	w := ws.For(reg.target("s1"), "state-a")
	vs := object("VirtualService", "users", "user", map[string]any{"hosts": []any{"user.global"}})
	pushed, err := w.Update(ctx, func(objs Objects) error { objs["networking.istio.io/VirtualService/users/user"] = vs; return nil })
	if err != nil {
		t.Fatal(err)
	}
	ours := pushed.Digest
	byHand := object("VirtualService", "users", "user", map[string]any{"hosts": []any{"evil.global"}})
	theirs, err := Publish(ctx, reg.target("s1"), set(t, byHand), "state-a")
	if err != nil {
		t.Fatal(err)
	}
	head, _, err := Head(ctx, reg.target("s1"))
	if err != nil {
		t.Fatal(err)
	}
	if head == ours || head != theirs {
		t.Fatalf("head %s after a re-push: want theirs %s, not ours %s", head, theirs, ours)
	}
	dr := object("DestinationRule", "users", "user", map[string]any{"host": "user.global"})
	built := reg.built.Load()
	if _, err := w.Update(ctx, func(objs Objects) error { objs["networking.istio.io/DestinationRule/users/user"] = dr; return nil }); err != nil {
		t.Fatal(err)
	}
	// The writer sees the re-push before building: one artifact built on
	// theirs, not one on its stale copy that the tag check then throws away.
	if n := reg.built.Load() - built; n != 1 {
		t.Errorf("%d artifacts built for one write after a re-push, want 1 (built on the stale copy first?)", n)
	}
	got, _, err := Fetch(ctx, reg.target("s1"))
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := got.Objects["networking.istio.io/VirtualService/users/user"]["spec"].(map[string]any)
	if fmt.Sprint(spec["hosts"]) != "[evil.global]" || len(got.Objects) != 2 {
		t.Errorf("the write after a re-push did not start from it: %v", got.Objects)
	}
}

func TestArtifactOfAnotherStateRefused(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	if _, err := Publish(ctx, reg.target("s1"), set(t, object("Gateway", "istio-system", "gw", map[string]any{})), "state-a"); err != nil {
		t.Fatal(err)
	}
	var ws Writers
	_, err := ws.For(reg.target("s1"), "state-b").Update(ctx, func(Objects) error { return nil })
	var claimed *ClaimedError
	if !errors.As(err, &claimed) || !strings.Contains(err.Error(), `"state-a"`) || !strings.Contains(err.Error(), `"state-b"`) {
		t.Errorf("a second state publishing the artifact: %v, want an error naming state-a and state-b", err)
	}
}

const secret = "s3cr3t-Pa55"

// authRegistry accepts Basic user:secret, or Bearer secret.
func authRegistry(t testing.TB) *testRegistry {
	reg := newRegistry(t)
	reg.before = func(w http.ResponseWriter, r *http.Request) bool {
		user, pass, ok := r.BasicAuth()
		if (ok && user == "user" && pass == secret) || r.Header.Get("Authorization") == "Bearer "+secret {
			return false
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
		w.WriteHeader(http.StatusUnauthorized)
		return true
	}
	return reg
}

func TestCredentials(t *testing.T) {
	reg := authRegistry(t)
	ctx := context.Background()
	dir := t.TempDir()
	dockerConfig := func(name, auth string) string {
		p := filepath.Join(dir, name)
		raw := fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, reg.host, base64.StdEncoding.EncodeToString([]byte(auth)))
		if err := os.WriteFile(p, []byte(raw), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := []Credentials{
		{Username: "user", Password: secret},
		{Token: secret},
		{DockerConfigFile: dockerConfig("good.json", "user:"+secret)},
	}
	for i, c := range good {
		tg := reg.target(fmt.Sprintf("good-%d", i))
		tg.Credentials = c
		if _, err := Publish(ctx, tg, set(t, object("Gateway", "istio-system", "gw", map[string]any{})), "state-a"); err != nil {
			t.Errorf("credentials %v: %v", c.Kinds(), err)
		}
	}
	bad := []Credentials{
		{},
		{Username: "user", Password: secret + "-wrong"},
		{Token: secret + "-wrong"},
		{DockerConfigFile: dockerConfig("wrong.json", "user:"+secret+"-wrong")},
		{DockerConfigFile: dockerConfig("malformed.json", secret)},
		{Username: "user", Password: secret, Token: secret},
	}
	for i, c := range bad {
		tg := reg.target(fmt.Sprintf("bad-%d", i))
		tg.Credentials = c
		_, err := Publish(ctx, tg, set(t, object("Gateway", "istio-system", "gw", map[string]any{})), "state-a")
		if err == nil {
			t.Errorf("credentials %d %v: publishing succeeded, want refused", i, c.Kinds())
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(fmt.Sprintf("%#v", err), secret) {
			t.Errorf("credentials %d: the error shows the secret: %v", i, err)
		}
	}
}

func TestUnreachableRegistryIsAnError(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	host := strings.TrimPrefix(srv.URL, "http://")
	srv.Close()
	tg := Target{Repository: host + "/mesh/east", Tag: "s1", Insecure: true,
		Transport: roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") })}
	_, _, err := Head(context.Background(), tg)
	var re *RegistryError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), tg.String()) {
		t.Errorf("an unreachable registry: %v, want an error naming %s", err, tg)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestParseRepository(t *testing.T) {
	for repo, want := range map[string]string{
		"registry.example.com/mesh/east":                "",
		"localhost:5000/mesh":                           "",
		"oci://registry.example.com/mesh/east":          "without a scheme",
		"registry.example.com/mesh/east:v1":             "without a tag",
		"registry.example.com/mesh@sha256:abc":          "without a digest",
		"https://user:s3cret@registry.example.com/mesh": "without credentials",
		"mesh":                      "name the registry host",
		"registry.example.com/Mesh": "not a repository reference",
	} {
		err := ParseRepository(repo, false)
		if (want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", repo, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: the error quotes the credential: %v", repo, err)
		}
	}
}

func TestParseContentReadsMultiDocumentFiles(t *testing.T) {
	objs := set(t, object("Gateway", "istio-system", "gw", map[string]any{"x": "---"}), object("Gateway", "istio-system", "gw2", map[string]any{}))
	raw, err := content(objs, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, extra, err := parseContent(strings.NewReader(string(raw)))
	if err != nil || len(got) != 2 || len(extra) != 0 {
		t.Fatalf("read back %d objects, extra files %v, %v", len(got), extra, err)
	}
	if docs := splitDocuments([]byte("a: 1\n---\nb: 2\n")); len(docs) != 2 {
		t.Errorf("two documents split into %d", len(docs))
	}
}

// A writer cancelled while its change waits behind a push in flight
// withdraws it: the error says so, and the artifact never holds it.
func TestCancelledQueuedChangeIsNotPublished(t *testing.T) {
	reg := newRegistry(t)
	var ws Writers
	w := ws.For(reg.target("s1"), "state-a")
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	reg.before = func(_ http.ResponseWriter, r *http.Request) bool {
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/") {
			once.Do(func() { close(held); <-release })
		}
		return false
	}
	add := func(ctx context.Context, name string) error {
		m := object("ServiceEntry", "users", name, map[string]any{})
		_, err := w.Update(ctx, func(objs Objects) error {
			k, err := Key(m)
			objs[k] = m
			return err
		})
		return err
	}
	first := make(chan error, 1)
	go func() { first <- add(context.Background(), "first") }()
	<-held
	queued := make(chan struct{})
	w.mu.Lock()
	w.enqueued = func() { close(queued) }
	w.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	second := make(chan error, 1)
	go func() { second <- add(ctx, "second") }()
	<-queued
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled writer: %v, want context.Canceled", err)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	got, _, err := Fetch(context.Background(), reg.target("s1"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Objects) != 1 || got.Objects["networking.istio.io/ServiceEntry/users/first"] == nil {
		t.Errorf("the artifact holds %v, want only the first writer's object", got.Objects)
	}
	if n := reg.pushes.Load(); n != 1 {
		t.Errorf("%d pushes, want 1: the withdrawn change makes none", n)
	}
}

// A layer in Flux's kustomize layout (`flux push artifact` of a directory
// with a kustomization.yaml), or holding a manifest without a name, is
// read: the objects are the objects, the other files are listed as extra
// (someone else's, replaced by the next publish), never an error that
// would block every publish over them (found by review).
func TestParseContentListsFilesThatAreNotObjects(t *testing.T) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for _, f := range []struct{ name, body string }{
		{"kustomization.yaml", "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n- se.yaml\n"},
		{"se.yaml", "apiVersion: networking.istio.io/v1\nkind: ServiceEntry\nmetadata:\n  name: se\n  namespace: istio-system\n"},
		{"noname.yml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  namespace: x\n"},
	} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o644, Size: int64(len(f.body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	objs, extra, err := parseContent(&buf)
	if err != nil {
		t.Fatalf("a kustomize-layout layer refused: %v", err)
	}
	if _, ok := objs["networking.istio.io/ServiceEntry/istio-system/se"]; !ok || len(objs) != 1 {
		t.Errorf("objects %v, want the ServiceEntry only", objs)
	}
	if strings.Join(extra, ",") != "kustomization.yaml,noname.yml" {
		t.Errorf("extra files %v, want kustomization.yaml and noname.yml", extra)
	}
}

// A state that publishes the artifact while this writer's upload is in
// flight is found before the tag moves: the tag is read again after the
// push by digest, the artifact it names fetched and its publisher checked,
// so this writer is refused naming both states and the other state's
// artifact stays as it published it (found by review: the last writer's
// tag PUT won and the other's objects were gone).
func TestPublishDuringTheUploadByAnotherStateIsRefused(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	var fired atomic.Bool
	var otherErr error
	reg.before = func(_ http.ResponseWriter, r *http.Request) bool {
		// The first push by digest is this writer's; the other state's
		// publish, made from here, pushes its own without coming back.
		if r.Method == http.MethodPut && strings.Contains(r.URL.Path, "/manifests/sha256:") && fired.CompareAndSwap(false, true) {
			_, otherErr = Publish(ctx, reg.target("s1"), set(t, object("Gateway", "istio-system", "theirs", map[string]any{})), "state-b")
		}
		return false
	}
	var ws Writers
	_, err := ws.For(reg.target("s1"), "state-a").Update(ctx, func(objs Objects) error {
		for k, v := range set(t, object("Gateway", "istio-system", "ours", map[string]any{})) {
			objs[k] = v
		}
		return nil
	})
	if otherErr != nil {
		t.Fatal(otherErr)
	}
	var claimed *ClaimedError
	if !errors.As(err, &claimed) || !strings.Contains(err.Error(), `"state-b"`) {
		t.Errorf("publishing over an artifact another state published during the upload: %v, want a ClaimedError naming state-b", err)
	}
	a, _, err := Fetch(ctx, reg.target("s1"))
	if err != nil || a.Publisher != "state-b" || len(a.Objects) != 1 {
		t.Errorf("the other state's artifact after the refused publish: publisher %q, %d objects, %v", a.Publisher, len(a.Objects), err)
	}
}

// Tags lists every state's artifact in a repository: none before the
// first publish (the repository does not exist yet), then each tag; a
// registry that cannot be reached is an error, never "no tags".
func TestTagsListsEveryStatesArtifact(t *testing.T) {
	reg := newRegistry(t)
	ctx := context.Background()
	if tags, err := Tags(ctx, reg.target("s1")); err != nil || len(tags) != 0 {
		t.Fatalf("tags of a repository never published to: %v, %v", tags, err)
	}
	for _, tag := range []string{"s1", "s2"} {
		if _, err := Publish(ctx, reg.target(tag), set(t, object("VirtualService", "ns", "vs", map[string]any{"hosts": []any{"h"}})), tag); err != nil {
			t.Fatal(err)
		}
	}
	tags, err := Tags(ctx, reg.target("s1"))
	if err != nil || strings.Join(tags, ",") != "s1,s2" {
		t.Errorf("tags after two states published: %v, %v; want s1,s2", tags, err)
	}
	down := reg.target("s1")
	down.Transport = roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, errors.New("connection refused") })
	var re *RegistryError
	if _, err := Tags(ctx, down); !errors.As(err, &re) {
		t.Errorf("tags from a registry that cannot be reached: %v, want a registry error", err)
	}
}
