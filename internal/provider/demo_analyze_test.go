package provider

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
)

// The demo (examples/demo), applied to the local mesh next to the
// workloads a real cluster would run (examples/demo/workloads.yaml), passes
// Istio's analyzers on every cluster, as `istioctl analyze -A` runs them
// (analyze-live, built from istio.io/istio next to the API servers). This
// is how a user's clusters look after `make demo`: any Error-level message
// fails the test with Istio's text.
func TestAccDemo_istioAnalyzeClean(t *testing.T) {
	requireMesh(t)
	analyzer := filepath.Join(os.Getenv(localmesh.EnvBinDir), "analyze-live")
	if _, err := os.Stat(analyzer); err != nil {
		t.Fatalf("%s is missing: run `make local-mesh-bin` (tools/build-binaries.sh), which builds it from tools/istio", analyzer)
	}
	w := newRelTF(t)
	relCleanup(t, w, nil)
	demo := filepath.Join("..", "..", "examples", "demo")
	files, err := filepath.Glob(filepath.Join(demo, "*.tf"))
	if err != nil || len(files) == 0 {
		t.Fatalf("examples/demo: %v (%d files)", err, len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(w.dir, filepath.Base(f)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(w.dir, "terraform.tfvars"), []byte("kubeconfig = \""+testMesh.Kubeconfig()+"\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	workloads, err := os.ReadFile(filepath.Join(demo, "workloads.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range testClusters {
		createAll(t, c, workloads)
	}

	w.apply()
	cmd := exec.Command(analyzer, "--kubeconfig", testMesh.Kubeconfig(), "--contexts", strings.Join(testClusters, ","))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	err = cmd.Run()
	t.Logf("Istio's analyzers on the demo:\n%s", out.String())
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		t.Fatalf("Istio's analyzers report errors on the demo:\n%s", out.String())
	case err != nil:
		t.Fatalf("analyze-live: %v\n%s", err, lastLines(stderr.String(), 20))
	}
	if !strings.Contains(out.String(), "east:") {
		t.Fatalf("analyze-live printed nothing for east; did it analyze anything?\n%s", out.String())
	}
}

// createAll creates every object of a multi-document YAML in a cluster,
// leaving objects that exist already, and deletes what it created when the
// test ends.
func createAll(t *testing.T, cluster string, docs []byte) {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(docs), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			return
		} else if err != nil {
			t.Fatal(err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		gv, err := schema.ParseGroupVersion(obj.GetAPIVersion())
		if err != nil {
			t.Fatal(err)
		}
		plural := map[string]string{"Gateway": "gateways", "Namespace": "namespaces", "ServiceAccount": "serviceaccounts",
			"Service": "services", "Pod": "pods"}[obj.GetKind()]
		if plural == "" {
			t.Fatalf("createAll: kind %s is not one it knows", obj.GetKind())
		}
		gvr := gv.WithResource(plural)
		ri := dyn(t, cluster).Resource(gvr).Namespace(obj.GetNamespace())
		_, err = ri.Create(context.Background(), obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			t.Fatalf("creating %s %s/%s in %s: %v", obj.GetKind(), obj.GetNamespace(), obj.GetName(), cluster, err)
		}
		if obj.GetKind() == "Namespace" {
			continue // namespaces stay: other tests use them, and nothing deletes their content here
		}
		name, ns := obj.GetName(), obj.GetNamespace()
		t.Cleanup(func() {
			if err := dyn(t, cluster).Resource(gvr).Namespace(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("cleanup: deleting %s/%s in %s: %v", ns, name, cluster, err)
			}
		})
	}
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
