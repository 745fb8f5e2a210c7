package localmesh

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestFluxProcRestartsAControllerThatEnds: a controller that ends on its
// own is started again on fresh ports, the end is counted and logged, and
// stop ends the restarted one. The first start exits at once; the restart
// runs until stopped.
func TestFluxProcRestartsAControllerThatEnds(t *testing.T) {
	sh := shell(t)
	starts := 0
	restarted := make(chan struct{})
	spec := fluxSpec{bin: sh, ports: 2, args: func(ports []int) []string {
		starts++
		if starts == 1 {
			return []string{"-c", "echo first start; exit 3"}
		}
		close(restarted)
		return []string{"-c", "exec sleep 600"}
	}}
	dir := t.TempDir()
	p, err := startFluxProc(dir, filepath.Join(dir, "kubeconfig"), spec)
	if err != nil {
		t.Fatal(err)
	}
	<-restarted
	if n := p.Exits(); n != 1 {
		t.Errorf("ends counted: %d, want 1", n)
	}
	f := &flux{procs: []*fluxProc{p}}
	if err := f.stop(); err != nil {
		t.Fatalf("stopping the restarted controller: %v", err)
	}
	log, err := os.ReadFile(filepath.Join(dir, "sh.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(log), "first start") || !strings.Contains(string(log), "sh ended (exit status 3), end 1 of at most") {
		t.Errorf("the log does not show the first run and its end:\n%s", log)
	}
}

// TestFluxProcGivesUpAfterRestarts: a controller that ends at every start
// is started maxFluxRestarts more times, then left stopped with an error
// naming it and its log, which stop returns.
func TestFluxProcGivesUpAfterRestarts(t *testing.T) {
	sh := shell(t)
	defer func(d, m time.Duration) { fluxRestartDelay, fluxRestartMaxDelay = d, m }(fluxRestartDelay, fluxRestartMaxDelay)
	fluxRestartDelay, fluxRestartMaxDelay = time.Millisecond, 4*time.Millisecond
	dir := t.TempDir()
	p, err := startFluxProc(dir, filepath.Join(dir, "kubeconfig"), fluxSpec{bin: sh, ports: 1,
		args: func([]int) []string { return []string{"-c", "exit 1"} }})
	if err != nil {
		t.Fatal(err)
	}
	<-p.done
	if n := p.Exits(); n != maxFluxRestarts+1 {
		t.Errorf("ends: %d, want %d (the first start and every restart)", n, maxFluxRestarts+1)
	}
	err = (&flux{procs: []*fluxProc{p}}).stop()
	if err == nil || !strings.Contains(err.Error(), "sh ended 11 times") || !strings.Contains(err.Error(), "sh.log") {
		t.Errorf("stop after giving up: %v, want the controller and its log named", err)
	}
}

// shell is sh's path, or the test fails saying what to install.
func shell(t *testing.T) string {
	t.Helper()
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("these tests run sh as a stand-in controller: install a POSIX shell (Debian: dash): %v", err)
	}
	return sh
}
