package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
)

// TestAccBench_small is make bench in little, so that a change which
// breaks the benchmark fails make test rather than the next person who
// runs make bench: one run of a configuration of 8 intents (a traffic
// policy composed into its virtual destination's DestinationRule among
// them) on two clusters of a local mesh, with every check of a real run:
// the floor's writes (the requests the engine sends for the planned
// objects, gen.Render) applied, listed and deleted; the engine alone;
// Terraform's plan, apply, no-op plan and destroy, after which state must
// list exactly the inventory gen.Render returned and the clusters must
// hold what the floor wrote. Terraform alone (terraform-core) is left out:
// it measures nothing of the provider's.
func TestAccBench_small(t *testing.T) {
	if os.Getenv("TF_ACC") == "" {
		t.Skip("TF_ACC is not set: the small benchmark needs the local mesh and Terraform")
	}
	binDir := os.Getenv(localmesh.EnvBinDir)
	if binDir == "" {
		t.Fatalf("%s is not set: the directory of the local mesh binaries (tools/build-binaries.sh --print-dir)", localmesh.EnvBinDir)
	}
	if _, err := exec.LookPath("terraform"); err != nil {
		t.Fatalf("the Terraform CLI is not on PATH: %v", err)
	}
	bin := t.TempDir()
	o := options{
		intents: []int{8}, runs: []int{1}, clusters: []string{"east", "west"},
		parallelism: 10, concurrency: 10, work: filepath.Join(t.TempDir(), "work"), binDir: binDir,
		launcherDir: filepath.Join(bin, "overrides"), provider: filepath.Join(bin, "terraform-provider-mesh"),
		floor: filepath.Join(bin, "floor"), engine: filepath.Join(bin, "engine"), budget: time.Hour,
	}
	for out, pkg := range map[string]string{
		o.provider: "github.com/mesh-intent/terraform-provider-mesh",
		filepath.Join(o.launcherDir, "terraform-provider-mesh"): "github.com/mesh-intent/terraform-provider-mesh/bench/launcher",
		o.floor:  "github.com/mesh-intent/terraform-provider-mesh/bench/floor",
		o.engine: "github.com/mesh-intent/terraform-provider-mesh/bench/engine",
	} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		if raw, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, raw)
		}
	}
	if err := run(o); err != nil {
		t.Fatalf("the benchmark failed: %v", err)
	}
	results, err := os.ReadFile(filepath.Join(o.work, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(results), "\n| 8 | 1 |") {
		t.Errorf("results.md has no row for M = 8:\n%s", results)
	}
}
