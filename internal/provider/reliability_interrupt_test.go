package provider

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// relInterruptConfig is an apply across three clusters with a dependency
// chain: three mesh_cluster and a virtual destination start together; an
// access policy and a traffic policy wait for the virtual destination.
func relInterruptConfig(provider string) string {
	var b strings.Builder
	b.WriteString(provider)
	for _, c := range testClusters {
		fmt.Fprintf(&b, `
resource "mesh_cluster" %[1]q {
  name             = %[1]q
  mtls_mode        = "STRICT"
  default_deny     = true
  expose_east_west = true
}
`, c)
	}
	b.WriteString(relVDConfig("int", "rel-int", 8080, `["east", "west", "onprem"]`))
	b.WriteString(`
resource "mesh_access_policy" "int" {
  name        = "rel-int"
  destination = { virtual_destination = mesh_virtual_destination.int.hostname }
  sources     = [{ clusters = ["east", "west", "onprem"], namespace = "accounts", service_account = "account" }]
  rules       = [{ methods = ["GET"] }]
}

resource "mesh_traffic_policy" "int" {
  name        = "rel-int"
  destination = { virtual_destination = mesh_virtual_destination.int.hostname }
  sources     = { clusters = ["east", "west"] }
  timeout     = "3s"
}
`)
	return b.String()
}

// relInterruptOwners are the intents of relInterruptConfig, for cleanup.
var relInterruptOwners = []engine.Owner{
	{Kind: "cluster", Name: "east"}, {Kind: "cluster", Name: "west"}, {Kind: "cluster", Name: "onprem"},
	{Kind: "virtual-destination", Name: "rel-int"}, {Kind: "access-policy", Name: "rel-int"},
}

// Terraform is interrupted (SIGINT, as Ctrl-C sends it to the whole
// process group) while an apply across three slow clusters is writing:
// Terraform stops the provider, in-flight requests are cancelled and the
// resources not started yet are skipped. Right afterwards no object with
// our managed-by label exists that state does not list; plan and apply then
// converge, with every inventory exact.
func TestAccReliability_interruptedApply(t *testing.T) {
	relInterrupted(t, 1)
}

// The same, interrupted twice: Terraform exits at once without waiting for
// the provider ("data loss may have occurred"), so objects written by
// requests in flight are in no state. The next plan and apply still
// converge and leave no orphan: the objects carry our owner labels, so the
// apply recognises them as ours and takes them back into its inventory.
func TestAccReliability_interruptedTwice(t *testing.T) {
	relInterrupted(t, 2)
}

func relInterrupted(t *testing.T, interrupts int) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	proxies := newRelProxies(t)
	w := newRelTF(t)
	relCleanup(t, w, func() { relWaitForProviders(t, w); proxies.heal(t) }, relInterruptOwners...)
	w.write(relInterruptConfig(providerConfigWith(t, "", proxies.connection)))
	for _, p := range proxies {
		p.SetLatency(150 * time.Millisecond)
	}

	// SIGINT the moment the first object of the virtual destination is
	// written to east: the apply is then writing to every cluster, and the
	// policies that depend on the virtual destination have not started.
	// No clock orders the steps: the provider is frozen (SIGSTOP) before
	// the interrupt, so it can neither finish the virtual destination nor
	// answer Terraform's stop until Terraform has said, on its output, that
	// it took the interrupt. A second interrupt is sent only then, while
	// Terraform still waits for the frozen provider; once Terraform says it
	// exits at once, the provider is killed frozen (as Terraform's exit
	// ends its plugins; frozen, it would hold Terraform's exit), so nothing
	// it would still answer can reach the state.
	ctx, cancel := context.WithTimeout(context.Background(), relCommandTimeout)
	defer cancel()
	cmd, out := w.command(ctx, "apply", "-auto-approve", "-no-color", "-input=false")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	seen := relOutputShows(cmd, out, relInterruptTaken, relInterruptHard)
	taken, hard := seen[0], seen[1]
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited, done := make(chan struct{}), make(chan struct{})
	var frozen []int // written by the watch before done
	t.Cleanup(func() {
		if relFired(done) {
			relThaw(frozen)
		}
	})
	vd := engine.Owner{Kind: "virtual-destination", Name: "rel-int"}
	var second bool // the second interrupt was sent after Terraform took the first
	interrupted := relWatch(t, "east", vd, func(keys []string, _ map[string]string) bool { return len(keys) > 0 }, func() {
		defer close(done)
		frozen = relProviderPIDs(w)
		for _, pid := range frozen {
			_ = syscall.Kill(pid, syscall.SIGSTOP)
		}
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-taken:
		case <-exited:
		}
		if interrupts == 2 && relFired(taken) {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGINT)
			second = true
			select {
			case <-hard:
				for _, pid := range frozen {
					_ = syscall.Kill(pid, syscall.SIGKILL)
				}
			case <-exited:
			}
		}
		relThaw(frozen)
	})
	err := cmd.Wait()
	close(exited)
	if !relFired(interrupted) {
		t.Fatalf("the apply ended (%v) before the virtual destination wrote anything: the interrupt did not land mid-apply\n%s", err, out)
	}
	<-done
	if ctx.Err() != nil {
		t.Fatalf("Terraform did not exit by itself after the interrupt; killed after %s\n%s", relCommandTimeout, out)
	}
	if len(frozen) == 0 {
		t.Fatalf("no provider process of this run was found to hold while Terraform takes the interrupt\n%s", out)
	}
	if !relFired(taken) {
		t.Fatalf("Terraform exited (%v) without saying %q: the interrupt was not taken\n%s", err, relInterruptTaken, out)
	}
	if interrupts == 2 && (!second || !strings.Contains(out.String(), relInterruptHard)) {
		t.Fatalf("Terraform did not take the second interrupt (%q not in its output):\n%s", relInterruptHard, out)
	}
	if interrupts == 1 && strings.Contains(out.String(), relInterruptHard) {
		t.Fatalf("one interrupt, yet Terraform exited at once:\n%s", out)
	}
	if err == nil {
		t.Fatalf("the interrupted apply succeeded:\n%s", out)
	}
	t.Logf("interrupted apply: %v\n%s", err, relTail(out, 16))
	if interrupts == 1 && (!strings.Contains(out.String(), "because Terraform was interrupted") || strings.Contains(out.String(), "unreachable")) {
		t.Errorf("the errors of an interrupted apply must say it was interrupted, not that a cluster is unreachable:\n%s", out)
	}
	// After a second interrupt Terraform does not wait for its provider:
	// let that process finish (its requests are bounded) before looking.
	relWaitForProviders(t, w)

	if interrupts == 2 {
		// Terraform did not wait: what the provider wrote meanwhile is in
		// no state. The next apply must take it back.
		listed := map[string]bool{}
		for _, k := range w.allInventories() {
			listed[k] = true
		}
		var unlisted []string
		for _, k := range relAllOwned(t) {
			if !listed[k] {
				unlisted = append(unlisted, k)
			}
		}
		t.Logf("after the hard exit, %d objects exist that no state lists: %v", len(unlisted), unlisted)
		if len(unlisted) == 0 {
			t.Fatal("the hard exit lost nothing, so this test proves nothing: the interrupt came too late")
		}
		// Their owner instance is in no state any more. The next apply
		// creates new instances, which must not take those objects for
		// their own (they could as well be another state's): it stops,
		// naming them, and nothing is overwritten.
		for _, p := range proxies {
			p.SetLatency(0)
		}
		out := strings.Join(strings.Fields(w.applyFails()), " ")
		// The virtual destination's lost records are found at plan (its
		// hostname is served by an instance no state holds); the other
		// objects at apply, each named.
		atPlan := regexp.MustCompile(`Hostname served by another virtual destination .*virtual destination "rel-int" \(instance [0-9a-f]+, records in cluster`).MatchString(out)
		atApply := regexp.MustCompile(`(owned by another|Another) [a-z-]+ named "[^"]+" \(instance [0-9a-f-]+\), from another Terraform state or a replaced resource`).MatchString(out)
		if !atPlan && !atApply {
			t.Fatalf("the apply after a lost state must refuse the objects of the lost instance, naming it:\n%s", out)
		}
		named := atPlan
		for _, k := range unlisted {
			named = named || strings.Contains(out, k[strings.LastIndexByte(k, '/')+1:])
		}
		if !named {
			t.Fatalf("the refusal names none of the objects no state lists (%v):\n%s", unlisted, out)
		}
		// The documented recovery (docs/reliability.md): delete what no
		// state lists, then apply.
		left := map[string]bool{}
		for _, k := range w.allInventories() {
			left[k] = true
		}
		var lost []string
		for _, k := range unlisted {
			if !left[k] {
				lost = append(lost, k)
			}
		}
		relForceDelete(t, lost)
	}
	if interrupts == 1 {
		// A graceful interrupt saves what the provider returned: every
		// object that exists is in state, those cut in flight marked
		// unconfirmed.
		requireNoOrphans(t, w)
		for _, e := range w.mustInventory("mesh_virtual_destination.int") {
			if e.Digest != engine.DigestUnconfirmed && !relContains(liveOwned(t, vd.Kind, vd.Name), e.Key) {
				t.Errorf("state lists %s as applied, but it does not exist", e.Key)
			}
		}
		if n := len(w.mustInventory("mesh_access_policy.int")); n > 0 {
			t.Errorf("the access policy was started after the interrupt: %d objects", n)
		}
	}

	for _, p := range proxies {
		p.SetLatency(0)
	}
	planOut, code := w.run("plan", "-detailed-exitcode")
	if code != 2 {
		t.Fatalf("plan after the interrupt: exit %d, want 2 (changes to finish the apply):\n%s", code, planOut)
	}
	w.apply()
	requireNoOrphans(t, w)
	w.requireExact("mesh_virtual_destination.int", vd.Kind, vd.Name)
	w.requireExact("mesh_access_policy.int", "access-policy", "rel-int")
	for _, c := range testClusters {
		w.requireExact("mesh_cluster."+c, "cluster", c)
	}
	if n := len(w.mustInventory("mesh_traffic_policy.int")); n != 2 {
		t.Errorf("traffic policy: %d objects, want its VirtualService in east and west", n)
	}
	w.planIsEmpty()
	w.destroy()
	if left := relAllOwned(t); len(left) > 0 {
		t.Fatalf("left after destroy: %v", left)
	}
}

// Terraform's own words, on its output, for the first interrupt it takes
// and for a second one that makes it exit without waiting.
const (
	relInterruptTaken = "Interrupt received."
	relInterruptHard  = "Two interrupts received. Exiting immediately."
)

// relOutputShows makes cmd's output (both streams) go to out as before,
// and returns, for each text, a channel closed once that output holds it.
// Set it before cmd starts.
func relOutputShows(cmd *exec.Cmd, out *bytes.Buffer, texts ...string) []chan struct{} {
	w := &relOutputWatch{out: out}
	for _, text := range texts {
		w.texts = append(w.texts, []byte(text))
		w.seen = append(w.seen, make(chan struct{}))
	}
	cmd.Stdout, cmd.Stderr = w, w
	return w.seen
}

// relOutputWatch is an output that tells when it first holds each text.
// The command writes it from one goroutine (Stdout and Stderr are the
// same writer); out is read once the command has ended.
type relOutputWatch struct {
	out   *bytes.Buffer
	texts [][]byte
	seen  []chan struct{}
}

func (o *relOutputWatch) Write(b []byte) (int, error) {
	n, err := o.out.Write(b)
	for i, text := range o.texts {
		if !relFired(o.seen[i]) && bytes.Contains(o.out.Bytes(), text) {
			close(o.seen[i])
		}
	}
	return n, err
}

// relThaw resumes processes stopped with SIGSTOP (once each: SIGCONT to a
// running or finished process does nothing).
func relThaw(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGCONT)
	}
}

// relWaitForProviders waits until no provider process started for w runs,
// and kills one that is still running after 30 seconds.
func relWaitForProviders(t *testing.T, w *relTF) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pids := relProviderPIDs(w)
		if len(pids) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				t.Logf("provider process %d still runs after Terraform exited; killing it", pid)
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// relProviderPIDs lists the live provider processes started by w's
// Terraform: those whose environment has w's marker.
func relProviderPIDs(w *relTF) []int {
	marker := []byte(relRunEnv + "=" + w.dir)
	serve := []byte(relServeEnv + "=1")
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		vars := bytes.Split(env, []byte{0})
		if containsBytes(vars, marker) && containsBytes(vars, serve) && !relZombie(pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

func relZombie(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

func containsBytes(list [][]byte, b []byte) bool {
	for _, x := range list {
		if bytes.Equal(x, b) {
			return true
		}
	}
	return false
}

func relContains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// relTail returns the last n lines of out.
func relTail(out fmt.Stringer, n int) string {
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
