package flux_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"github.com/google/go-containerregistry/pkg/v1/static"
	"github.com/google/go-containerregistry/pkg/v1/types"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/flux"
	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Flux's artifact format, as the flux CLI pushes it. internal/delivery/oci
// owns it for the provider; the test builds its own so that it checks what
// Flux's real controllers accept, not what our package believes.
const (
	fluxConfigMediaType  = "application/vnd.cncf.flux.config.v1+json"
	fluxContentMediaType = "application/vnd.cncf.flux.content.v1.tar+gzip"
)

var (
	kustomizationGVR = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
	serviceEntryGVR  = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}
	configMapGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// A ServiceEntry Istio's validation admits: Flux applies it through the
// mesh's webhook like any other client.
const serviceEntryYAML = `apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata:
  name: flux-smoke
  namespace: default
spec:
  hosts: [flux-smoke.example.com]
  location: MESH_EXTERNAL
  ports:
  - {number: 443, name: tls, protocol: TLS}
  resolution: DNS
`

const configMapYAML = `apiVersion: v1
kind: ConfigMap
metadata:
  name: flux-smoke-v2
  namespace: mesh-intent-records
data:
  revision: "2"
`

// TestFluxPullsAndPrunes runs Flux's real source-controller and
// kustomize-controller against one local cluster with Istio's validation
// webhook, serves an OCI registry from the test process, pushes an artifact
// in Flux's format holding one ServiceEntry, applies the objects Bootstrap
// renders, and waits until Flux reports Ready at the artifact's revision
// with the ServiceEntry applied and in its inventory. A second revision
// without it (a ConfigMap instead) makes Flux prune the ServiceEntry.
func TestFluxPullsAndPrunes(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("runs Flux against the local mesh: set TF_ACC=1 and LOCAL_MESH_BIN (make test does)")
	}
	ctrllog.SetLogger(logr.Discard())
	if err := localmesh.CheckFluxBinaries(""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()

	dir := t.TempDir()
	m, err := localmesh.Start(ctx, localmesh.Options{Clusters: []string{"east"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	t.Cleanup(func() {
		if !stopped {
			_ = m.Stop()
		}
	})
	start := time.Now()
	if err := m.StartFlux(ctx, "east"); err != nil {
		t.Fatal(err)
	}
	t.Logf("Flux's controllers ready in %s", time.Since(start).Round(time.Millisecond))

	reg := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer reg.Close()
	host := strings.TrimPrefix(reg.URL, "http://")
	repo := host + "/mesh/east"
	rev1 := push(t, repo, "prod", serviceEntryYAML)

	boot := flux.Bootstrap{Name: "mesh-smoke", Repository: repo, Tag: "prod", Insecure: true,
		Interval: 2 * time.Second, RecordsNamespace: localmesh.RecordsNamespace}
	objs, err := boot.Objects()
	if err != nil {
		t.Fatal(err)
	}
	d, err := dynamic.NewForConfig(m.RESTConfig("east"))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if err := apply(ctx, d, o); err != nil {
			t.Fatalf("applying the bootstrap's %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}

	se := translate.Key{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "ServiceEntry", Namespace: "default", Name: "flux-smoke"}
	st := waitApplied(t, ctx, m, d, rev1)
	if want := []translate.Key{se}; fmt.Sprint(st.Inventory) != fmt.Sprint(want) {
		t.Errorf("inventory at %s: %v, want %v", rev1, st.Inventory, want)
	}
	got, err := d.Resource(serviceEntryGVR).Namespace("default").Get(ctx, "flux-smoke", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the ServiceEntry Flux reports applied is not on the cluster: %v", err)
	}
	if l := got.GetLabels()["kustomize.toolkit.fluxcd.io/name"]; l != boot.Name {
		t.Errorf("the ServiceEntry's kustomize.toolkit.fluxcd.io/name label is %q, want %q (applied by our Kustomization)", l, boot.Name)
	}

	// The next revision holds a ConfigMap instead: Flux applies it and
	// prunes the ServiceEntry, which the Kustomization no longer lists.
	rev2 := push(t, repo, "prod", configMapYAML)
	if rev2 == rev1 {
		t.Fatalf("the second push kept revision %s", rev1)
	}
	st = waitApplied(t, ctx, m, d, rev2)
	cm := translate.Key{Cluster: "east", APIVersion: "v1", Kind: "ConfigMap", Namespace: localmesh.RecordsNamespace, Name: "flux-smoke-v2"}
	if want := []translate.Key{cm}; fmt.Sprint(st.Inventory) != fmt.Sprint(want) {
		t.Errorf("inventory at %s: %v, want %v", rev2, st.Inventory, want)
	}
	if _, err := d.Resource(configMapGVR).Namespace(localmesh.RecordsNamespace).Get(ctx, "flux-smoke-v2", metav1.GetOptions{}); err != nil {
		t.Errorf("the second revision's ConfigMap is not on the cluster: %v", err)
	}
	if _, err := d.Resource(serviceEntryGVR).Namespace("default").Get(ctx, "flux-smoke", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the ServiceEntry left out of revision %s: got %v, want NotFound (pruned)", rev2, err)
	}

	// Stopping the mesh ends Flux's processes too.
	stopped = true
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	if n, err := localmesh.KillLeftovers(dir); err != nil || n != 0 {
		t.Errorf("after Stop, %d processes of the mesh were still running (%v)", n, err)
	}
}

// push publishes files (one YAML document set) as a Flux artifact at
// repo:tag and returns Flux's name for its revision.
func push(t *testing.T, repo, tag, manifests string) string {
	t.Helper()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	if err := tw.WriteHeader(&tar.Header{Name: "objects.yaml", Mode: 0o644, Size: int64(len(manifests)), Typeflag: tar.TypeReg}); err != nil {
		t.Fatal(err)
	}
	if _, err := tw.Write([]byte(manifests)); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	img := mutate.MediaType(empty.Image, types.OCIManifestSchema1)
	img = mutate.ConfigMediaType(img, fluxConfigMediaType)
	img, err := mutate.Append(img, mutate.Addendum{Layer: static.NewLayer(buf.Bytes(), fluxContentMediaType)})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.NewTag(repo+":"+tag, name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatalf("pushing %s: %v", ref, err)
	}
	digest, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return flux.Revision(tag, v1.Hash.String(digest))
}

// apply creates o, or updates it if it exists.
func apply(ctx context.Context, d dynamic.Interface, o *unstructured.Unstructured) error {
	gvr := flux.Resources[o.GetKind()]
	var r dynamic.ResourceInterface = d.Resource(gvr)
	if ns := o.GetNamespace(); ns != "" {
		r = d.Resource(gvr).Namespace(ns)
	}
	_, err := r.Create(ctx, o, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// waitApplied polls the Kustomization until Flux reports it Ready at
// revision, failing with Flux's last status, the OCIRepository's and the
// end of each controller's log when ctx ends first.
func waitApplied(t *testing.T, ctx context.Context, m *localmesh.Mesh, d dynamic.Interface, revision string) flux.Status {
	t.Helper()
	ks := d.Resource(kustomizationGVR).Namespace(flux.DefaultNamespace)
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var last flux.Status
	var lastErr error
	for {
		if u, err := ks.Get(ctx, "mesh-smoke", metav1.GetOptions{}); err != nil {
			lastErr = err
		} else if last, lastErr = flux.ParseStatus(u, "east"); lastErr == nil && last.AppliedAt(revision) {
			return last
		}
		select {
		case <-ctx.Done():
			source := "unreadable"
			if u, err := d.Resource(flux.Resources[flux.OCIRepositoryKind]).Namespace(flux.DefaultNamespace).Get(context.Background(), "mesh-smoke", metav1.GetOptions{}); err == nil {
				source = fmt.Sprint(u.Object["status"])
			}
			t.Fatalf("Flux did not apply %s: last status %+v (error %v)\nOCIRepository status: %s\n%s", revision, last, lastErr, source, m.FluxReport("east"))
		case <-tick.C:
		}
	}
}
