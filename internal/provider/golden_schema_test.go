package provider

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"
)

// Every object in the translator's golden files is accepted by a real API
// server with Istio's CRDs: a server-side apply, dry run, of each one. A
// field Istio's schema does not know, a wrong type or a bad enum fails here.
func TestAccGoldenObjectsPassIstioSchemas(t *testing.T) {
	requireMesh(t)
	files, err := filepath.Glob("../translate/*/testdata/*.golden.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files found (%v)", err)
	}
	d := dyn(t, "east")
	checked := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(raw, []byte("error:")) {
			continue // the translator refused this input
		}
		for _, doc := range bytes.Split(raw, []byte("\n---\n")) {
			var obj map[string]any
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if len(obj) == 0 || obj["kind"] == nil {
				continue // an error golden, or no objects
			}
			u := &unstructured.Unstructured{Object: obj}
			gv, _ := schema.ParseGroupVersion(u.GetAPIVersion())
			gvr := gv.WithResource(strings.ToLower(u.GetKind()) + "s")
			if u.GetKind() == "ServiceEntry" {
				gvr = gv.WithResource("serviceentries")
			} else if u.GetKind() == "AuthorizationPolicy" {
				gvr = gv.WithResource("authorizationpolicies")
			}
			ensureNamespace(t, "east", u.GetNamespace())
			body, _ := u.MarshalJSON()
			force := true
			// Strict: a field the schema does not know is an error, not a
			// warning the server would prune silently.
			_, err := d.Resource(gvr).Namespace(u.GetNamespace()).Patch(context.Background(), u.GetName(), types.ApplyPatchType, body,
				metav1.PatchOptions{FieldManager: "golden-check", Force: &force, DryRun: []string{metav1.DryRunAll}, FieldValidation: "Strict"})
			if err != nil {
				t.Errorf("%s: %s %s/%s rejected: %v", f, u.GetKind(), u.GetNamespace(), u.GetName(), err)
			}
			checked++
		}
	}
	t.Logf("%d golden objects accepted by the API server", checked)
	if checked < 50 {
		t.Fatalf("only %d objects checked; the golden files are expected to hold many more", checked)
	}
}
