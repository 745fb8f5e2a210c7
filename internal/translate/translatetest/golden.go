// Package translatetest holds what the translator packages' tests share:
// the golden-file runner, the offline check against Istio's CRD schemas
// and the YAML rendering of objects. Only tests import it.
package translatetest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Golden-file tests: testdata/<case>.yaml (in each intent's package) holds a registry and one
// intent; <case>.golden.yaml holds the objects per cluster, or the error.
// REFRESH_GOLDEN=true rewrites the golden files from the current output.

// goldenInput is the shape of a golden case file.
type goldenInput struct {
	Registry []translate.CaseCluster `json:"registry"`
	Intent   json.RawMessage         `json:"intent"`
}

// Translator translates the intent of one golden case.
type Translator func(raw []byte, reg *translate.Registry) ([]translate.Object, error)

// Golden runs every case of testdata/ (relative to the calling test's
// package) through tr and compares the result with its golden file.
func Golden(t *testing.T, tr Translator) {
	dir := "testdata"
	{
		cases, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var inputs []string
		for _, c := range cases {
			if !strings.HasSuffix(c, ".golden.yaml") {
				inputs = append(inputs, c)
			}
		}
		if len(inputs) == 0 {
			t.Errorf("%s has no golden cases", dir)
		}
		for _, in := range inputs {
			name := strings.TrimSuffix(filepath.Base(in), ".yaml")
			t.Run(name, func(t *testing.T) {
				got := runGolden(t, in, tr)
				// Translation must be deterministic: a second run gives the
				// same bytes.
				if again := runGolden(t, in, tr); !bytes.Equal(got, again) {
					t.Fatalf("two translations of the same input differ")
				}
				goldenPath := strings.TrimSuffix(in, ".yaml") + ".golden.yaml"
				if os.Getenv("REFRESH_GOLDEN") == "true" {
					if err := os.WriteFile(goldenPath, got, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(goldenPath)
				if err != nil {
					t.Fatalf("reading golden file (run with REFRESH_GOLDEN=true to create it): %v", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("output differs from %s (REFRESH_GOLDEN=true rewrites it)\n--- got ---\n%s\n--- want ---\n%s", goldenPath, got, want)
				}
			})
		}
	}
}

func runGolden(t *testing.T, path string, tr Translator) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var in goldenInput
	if err := yaml.UnmarshalStrict(raw, &in); err != nil {
		t.Fatalf("parsing %s: %v", path, err)
	}
	reg := translate.CaseRegistry(in.Registry)
	objs, err := tr(in.Intent, reg)
	if err != nil {
		checkFullStops(t, path, err)
		return []byte(fmt.Sprintf("error: %s\n", err))
	}
	for _, o := range objs {
		if err := CheckSchema(t, o); err != nil {
			t.Errorf("%s: output fails Istio's CRD schema: %v", path, err)
		}
	}
	return RenderYAML(t, objs)
}

// RenderYAML renders objects as a multi-document YAML stream, each document
// preceded by the cluster it goes to.
func RenderYAML(t testing.TB, objs []translate.Object) []byte {
	t.Helper()
	var b bytes.Buffer
	for i, o := range objs {
		m, err := o.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		y, err := yaml.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		fmt.Fprintf(&b, "# cluster: %s\n", o.Cluster)
		b.Write(y)
	}
	if len(objs) == 0 {
		b.WriteString("# no objects\n")
	}
	return b.Bytes()
}

// Input is one golden case of testdata/: its name, registry and intent.
type Input struct {
	Name     string
	Registry *translate.Registry
	Intent   json.RawMessage
}

// Inputs reads every golden case of testdata/, for tests that check a
// property over all of them.
func Inputs(t testing.TB) []Input {
	t.Helper()
	cases, err := filepath.Glob(filepath.Join("testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var out []Input
	for _, c := range cases {
		if strings.HasSuffix(c, ".golden.yaml") {
			continue
		}
		raw, err := os.ReadFile(c)
		if err != nil {
			t.Fatal(err)
		}
		var in goldenInput
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			t.Fatalf("parsing %s: %v", c, err)
		}
		out = append(out, Input{Name: strings.TrimSuffix(filepath.Base(c), ".yaml"), Registry: translate.CaseRegistry(in.Registry), Intent: in.Intent})
	}
	if len(out) == 0 {
		t.Fatal("testdata has no golden cases")
	}
	return out
}

// checkFullStops fails the test for a translation error whose detail does
// not end with a full stop: details are full sentences, and several of
// them join into one message.
func checkFullStops(t *testing.T, path string, err error) {
	t.Helper()
	var list translate.Errors
	var one *translate.Error
	switch {
	case errors.As(err, &list):
	case errors.As(err, &one):
		list = translate.Errors{one}
	default:
		return
	}
	for _, e := range list {
		if !strings.HasSuffix(strings.TrimRight(e.Detail, `)"`), ".") {
			t.Errorf("%s: the detail of %q at %s does not end with a full stop: %q", path, e.Summary, e.Path, e.Detail)
		}
	}
}
