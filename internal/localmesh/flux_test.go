package localmesh

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheckFluxBinaries: a binary directory without Flux's controllers or
// CRDs is refused with the name of what is missing and how to build it.
func TestCheckFluxBinaries(t *testing.T) {
	dir := t.TempDir()
	files := []string{SourceControllerBinary, KustomizeControllerBinary, FluxCRDFile}
	for i, missing := range files {
		for j, f := range files {
			p := filepath.Join(dir, f)
			if j == i {
				if err := os.RemoveAll(p); err != nil {
					t.Fatal(err)
				}
				continue
			}
			if err := os.WriteFile(p, nil, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		err := CheckFluxBinaries(dir)
		if err == nil || !strings.Contains(err.Error(), missing+" is missing") || !strings.Contains(err.Error(), "make local-mesh-bin") {
			t.Errorf("without %s: %v, want it named with the make local-mesh-bin hint", missing, err)
		}
	}
	for _, f := range files {
		if err := os.WriteFile(filepath.Join(dir, f), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := CheckFluxBinaries(dir); err != nil {
		t.Errorf("with every file present: %v", err)
	}
}

// TestFreePorts: the ports handed to Flux's listeners are distinct.
func TestFreePorts(t *testing.T) {
	ports, err := freePorts(5)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, p := range ports {
		if p == 0 || seen[p] {
			t.Fatalf("ports %v: zero or repeated", ports)
		}
		seen[p] = true
	}
}
