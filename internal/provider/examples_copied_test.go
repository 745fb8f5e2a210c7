package provider

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Each resource example's resource.tf, copied as a user copies it into a
// fresh directory beside the smallest provider block that registers the
// clusters it names (a kubeconfig context and the topology, no variable,
// no PEM file, no exec plugin): the plan succeeds and proposes changes
// (issue 38, item 8). TestAccExamplesPlan plans the same files with the
// shipped provider block.
func TestAccResourceExamplesPlanAsCopied(t *testing.T) {
	requireMesh(t)
	for _, ns := range []string{"users", "bar", "payments", "accounts"} {
		for _, c := range testClusters {
			ensureNamespace(t, c, ns)
		}
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "examples", "resources", "*", "resource.tf"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	if len(files) < 5 {
		t.Fatalf("found %d resource examples, want the five resources': %v", len(files), files)
	}
	for _, f := range files {
		res := filepath.Base(filepath.Dir(f))
		t.Run(res, func(t *testing.T) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			w := newRelTF(t)
			w.write(providerConfig(t, "") + string(src))
			out, code := w.run("plan", "-detailed-exitcode")
			if code != 2 {
				t.Fatalf("examples/resources/%s/resource.tf copied beside a minimal provider block: plan exited %d, want 2 (changes):\n%s", res, code, out)
			}
			if !strings.Contains(out, "to add") {
				t.Fatalf("the plan of examples/resources/%s/resource.tf adds nothing:\n%s", res, out)
			}
		})
	}
}
