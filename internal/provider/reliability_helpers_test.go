package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/faultproxy"
)

// The reliability tests drive the real Terraform CLI themselves, rather
// than through terraform-plugin-testing, because they need what the
// framework hides: the state file right after a failed apply (before any
// refresh), a SIGINT in the middle of an apply, two working directories
// at once, and Terraform's own logs. Terraform runs the provider as a
// plugin process: this test binary, started through a dev_overrides CLI
// configuration by a two-line wrapper script (see init below), so the
// provider under test is exactly the code of this build.

// relServeEnv makes the test binary serve the provider instead of running
// tests, when Terraform starts it through the wrapper script.
const relServeEnv = "MESH_RELIABILITY_SERVE_PROVIDER"

// relRunEnv marks the processes started for one working directory, so a
// test can find its provider processes.
const relRunEnv = "MESH_RELIABILITY_RUN"

func init() {
	if os.Getenv(relServeEnv) != "1" {
		return
	}
	wrapExecPlugins()
	err := providerserver.Serve(context.Background(), New("reliability-test"), providerserver.ServeOpts{
		Address: "registry.terraform.io/mesh-intent/mesh",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// relCommandTimeout bounds every Terraform command of these tests.
const relCommandTimeout = 90 * time.Second

// relRequiredProviders pins the provider address the dev override serves.
const relRequiredProviders = `
terraform {
  required_providers {
    mesh = { source = "mesh-intent/mesh" }
  }
}
`

// relTF is one Terraform working directory with its own state.
type relTF struct {
	t   *testing.T
	dir string
	env []string
	// logPath, when set, receives Terraform's and the provider's logs, at
	// logLevel (TRACE when empty).
	logPath  string
	logLevel string
}

// relForeign holds, per top-level test, the objects with our managed-by
// label that existed when the test began: left over by an earlier test
// that failed. They are not this test's to account for.
var relForeign sync.Map // test name -> map[string]bool

// relBegin records the objects that exist before a test writes any.
func relBegin(t *testing.T) {
	name, _, _ := strings.Cut(t.Name(), "/")
	if _, ok := relForeign.Load(name); ok {
		return
	}
	foreign := map[string]bool{}
	for _, k := range liveOwned(t, "", "") {
		foreign[k] = true
	}
	if len(foreign) > 0 {
		t.Logf("objects left by an earlier test, not counted by this one: %v", sortedKeys(foreign))
	}
	relForeign.Store(name, foreign)
	t.Cleanup(func() { relForeign.Delete(name) })
}

// relAllOwned is liveOwned for every intent, without the objects that
// existed before the test began.
func relAllOwned(t *testing.T) []string {
	t.Helper()
	foreign := relForeignSet(t)
	var out []string
	for _, k := range liveOwned(t, "", "") {
		if !foreign[k] {
			out = append(out, k)
		}
	}
	return out
}

// relForeignSet is what relBegin found before the test began.
func relForeignSet(t *testing.T) map[string]bool {
	name, _, _ := strings.Cut(t.Name(), "/")
	v, _ := relForeign.Load(name)
	foreign, _ := v.(map[string]bool)
	return foreign
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// newRelTF prepares a working directory whose Terraform runs this test
// binary as the mesh provider, through dev_overrides; no init is needed.
func newRelTF(t *testing.T) *relTF {
	t.Helper()
	requireMesh(t)
	relBegin(t)
	if _, err := exec.LookPath(accCLI()); err != nil {
		t.Fatal("the reliability tests need the Terraform CLI on PATH")
	}
	root := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	plugins := filepath.Join(root, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	wrapper := fmt.Sprintf("#!/bin/sh\n%s=1 exec %q \"$@\"\n", relServeEnv, self)
	if err := os.WriteFile(filepath.Join(plugins, "terraform-provider-mesh"), []byte(wrapper), 0o755); err != nil {
		t.Fatal(err)
	}
	rc := filepath.Join(root, "terraformrc")
	cli := fmt.Sprintf("provider_installation {\n  dev_overrides {\n    %q = %q\n  }\n  direct {}\n}\n", "mesh-intent/mesh", plugins)
	if err := os.WriteFile(rc, []byte(cli), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "TF_") || name == serveProviderEnv || name == relServeEnv || name == relRunEnv {
			continue // the caller's Terraform settings, logs and test switches
		}
		env = append(env, kv)
	}
	env = append(env, "TF_CLI_CONFIG_FILE="+rc, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0", relRunEnv+"="+dir)
	return &relTF{t: t, dir: dir, env: env}
}

// write replaces the configuration.
func (w *relTF) write(config string) {
	w.t.Helper()
	if err := os.WriteFile(filepath.Join(w.dir, "main.tf"), []byte(relRequiredProviders+config), 0o644); err != nil {
		w.t.Fatal(err)
	}
}

// command prepares a Terraform command in the working directory.
func (w *relTF) command(ctx context.Context, args ...string) (*exec.Cmd, *bytes.Buffer) {
	cmd := exec.CommandContext(ctx, accCLI(), args...) // terraform, or OpenTofu (opentofu_test.go)
	cmd.Dir = w.dir
	cmd.Env = append([]string(nil), w.env...)
	if w.logPath != "" {
		level := w.logLevel
		if level == "" {
			level = "TRACE"
		}
		cmd.Env = append(cmd.Env, "TF_LOG="+level, "TF_LOG_PROVIDER="+level, "TF_LOG_PATH="+w.logPath)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	// A command that outlives relCommandTimeout is killed, so a hanging
	// Terraform cannot hold the test run.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	return cmd, &out
}

// run runs one Terraform command and returns its output and exit code.
func (w *relTF) run(args ...string) (string, int) {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), relCommandTimeout)
	defer cancel()
	full := args
	switch args[0] {
	case "plan", "apply", "destroy", "import":
		full = append([]string{args[0], "-no-color", "-input=false"}, args[1:]...)
	}
	cmd, out := w.command(ctx, full...)
	start := time.Now()
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		w.t.Fatalf("terraform %s: %v\n%s", args[0], err, out)
	}
	w.t.Logf("terraform %s: exit %d in %s", strings.Join(args, " "), code, time.Since(start).Round(10*time.Millisecond))
	return out.String(), code
}

// apply applies and fails the test unless it succeeds.
func (w *relTF) apply(extra ...string) string {
	w.t.Helper()
	out, code := w.run(append([]string{"apply", "-auto-approve"}, extra...)...)
	if code != 0 {
		w.t.Fatalf("terraform apply failed (exit %d):\n%s", code, out)
	}
	return out
}

// applyFails applies and fails the test unless the apply fails.
func (w *relTF) applyFails() string {
	w.t.Helper()
	out, code := w.run("apply", "-auto-approve")
	if code == 0 {
		w.t.Fatalf("terraform apply succeeded, want it to fail:\n%s", out)
	}
	return out
}

// refreshOnly applies a refresh-only plan: state takes what the clusters
// hold, and nothing is written to them.
func (w *relTF) refreshOnly() {
	w.t.Helper()
	w.apply("-refresh-only")
}

// planIsEmpty fails the test unless a plan (with refresh) has no changes.
func (w *relTF) planIsEmpty() {
	w.t.Helper()
	out, code := w.run("plan", "-detailed-exitcode")
	if code != 0 {
		w.t.Fatalf("plan is not empty (exit %d):\n%s", code, out)
	}
}

// destroyTarget destroys one resource of this working directory.
func (w *relTF) destroyTarget(addr string) {
	w.t.Helper()
	out, code := w.run("destroy", "-auto-approve", "-target="+addr)
	if code != 0 {
		w.t.Fatalf("terraform destroy -target=%s failed (exit %d):\n%s", addr, code, out)
	}
}

// destroy destroys everything of this working directory.
func (w *relTF) destroy() {
	w.t.Helper()
	out, code := w.run("destroy", "-auto-approve")
	if code != 0 {
		w.t.Fatalf("terraform destroy failed (exit %d):\n%s", code, out)
	}
}

// relStateFile is the part of a version 4 state file the tests read.
type relStateFile struct {
	Resources []struct {
		Module    string `json:"module"`
		Mode      string `json:"mode"`
		Type      string `json:"type"`
		Name      string `json:"name"`
		Instances []struct {
			Status     string         `json:"status"`
			Attributes map[string]any `json:"attributes"`
		} `json:"instances"`
	} `json:"resources"`
}

// relEntry is one object of an inventory in state.
type relEntry struct {
	Key    string // cluster/Kind/namespace/name, as liveOwned returns
	Digest string
}

// stateFile reads the state file as Terraform left it, without refreshing.
func (w *relTF) stateFile() (relStateFile, []byte) {
	w.t.Helper()
	var s relStateFile
	raw, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate"))
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		w.t.Fatal(err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		// Terraform treats an empty state file as no state; a hard exit
		// leaves one behind.
		return s, raw
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		w.t.Fatalf("reading the state file: %v", err)
	}
	return s, raw
}

// relInState is what the state file says of one managed resource.
type relInState struct {
	entries []relEntry // its objects attribute
	present bool       // the resource is in state
	tainted bool
}

// inventory returns the objects attribute of a managed resource (type.name)
// in the state file, whether it is in state at all, and whether it is
// tainted. A resource not in state has no objects.
func (w *relTF) inventory(addr string) relInState {
	w.t.Helper()
	s, _ := w.stateFile()
	// module.<name>.<type>.<name> for a resource in a module.
	module := ""
	if rest, ok := strings.CutPrefix(addr, "module."); ok {
		m, local, _ := strings.Cut(rest, ".")
		module, addr = "module."+m, local
	}
	typ, name, _ := strings.Cut(addr, ".")
	for _, r := range s.Resources {
		if r.Mode != "managed" || r.Type != typ || r.Name != name || r.Module != module {
			continue
		}
		var out []relEntry
		tainted := false
		for _, inst := range r.Instances {
			tainted = tainted || inst.Status == "tainted"
			objs, _ := inst.Attributes["objects"].(map[string]any)
			for k, v := range objs {
				digest, _ := v.(string)
				e, err := engine.EntryFromStateKey(k, digest)
				if err != nil {
					w.t.Fatalf("%s: %v", addr, err)
				}
				out = append(out, relEntry{Key: liveKey(e), Digest: digest})
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
		return relInState{entries: out, present: true, tainted: tainted}
	}
	return relInState{}
}

// allInventories lists the keys of every inventory in the state file.
func (w *relTF) allInventories() []string {
	w.t.Helper()
	s, _ := w.stateFile()
	var out []string
	for _, r := range s.Resources {
		if r.Mode != "managed" || !strings.HasPrefix(r.Type, "mesh_") {
			continue
		}
		addr := r.Type + "." + r.Name
		if r.Module != "" {
			addr = r.Module + "." + addr
		}
		for _, e := range w.mustInventory(addr) {
			out = append(out, e.Key)
		}
	}
	sort.Strings(out)
	return out
}

func (w *relTF) mustInventory(addr string) []relEntry {
	return w.inventory(addr).entries
}

func relKeys(es []relEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Key
	}
	return out
}

// requireExact fails the test unless the state file lists exactly the
// objects the intent owns in the clusters (checkInventoryMatches, without
// a refresh in between).
func (w *relTF) requireExact(addr, kind, name string) {
	w.t.Helper()
	want := relKeys(w.mustInventory(addr))
	got := liveOwned(w.t, kind, name)
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		w.t.Fatalf("state and clusters disagree for %s\nstate:    %v\nclusters: %v", addr, want, got)
	}
}

// requireExactIn is requireExact limited to some clusters.
func (w *relTF) requireExactIn(addr, kind, name string, clusters ...string) {
	w.t.Helper()
	var want []string
	for _, k := range relKeys(w.mustInventory(addr)) {
		for _, c := range clusters {
			if strings.HasPrefix(k, c+"/") {
				want = append(want, k)
			}
		}
	}
	got := liveOwnedIn(w.t, clusters, kind, name)
	if strings.Join(want, "\n") != strings.Join(got, "\n") {
		w.t.Fatalf("state and clusters %v disagree for %s\nstate:    %v\nclusters: %v", clusters, addr, want, got)
	}
}

// requireNoOrphans fails the test unless every object carrying our
// managed-by label in any cluster is listed in the state of one of the
// working directories.
func requireNoOrphans(t *testing.T, dirs ...*relTF) {
	t.Helper()
	listed := map[string]bool{}
	for _, w := range dirs {
		for _, k := range w.allInventories() {
			listed[k] = true
		}
	}
	var orphans []string
	for _, k := range relAllOwned(t) {
		if !listed[k] {
			orphans = append(orphans, k)
		}
	}
	if len(orphans) > 0 {
		t.Fatalf("objects with our managed-by label that no state lists: %v", orphans)
	}
}

// relCleanup destroys a working directory's resources at the end of a
// test, even a failed one, with the faults healed first, and then removes
// by force whatever of the given intents is left, so later tests start
// from empty clusters.
func relCleanup(t *testing.T, w *relTF, heal func(), owners ...engine.Owner) {
	t.Cleanup(func() {
		if heal != nil {
			heal()
		}
		if _, err := os.Stat(filepath.Join(w.dir, "terraform.tfstate")); err == nil {
			if out, code := w.run("destroy", "-auto-approve"); code != 0 {
				t.Errorf("cleanup: terraform destroy failed:\n%s", out)
			}
		}
		for _, o := range owners {
			if left := liveOwned(t, o.Kind, o.Name); len(left) > 0 {
				t.Errorf("cleanup: %s left %v; deleting them", o, left)
				relForceDelete(t, left)
			}
		}
		// Tests run one at a time and each leaves the clusters without
		// objects of ours (checkNothingOwned), so anything left is this
		// test's, composed objects of traffic policies included.
		if left := relAllOwned(t); len(left) > 0 {
			t.Errorf("cleanup: objects left: %v; deleting them", left)
			relForceDelete(t, left)
		}
	})
}

// relForceDelete deletes objects given as liveOwned keys, with admin
// rights.
func relForceDelete(t *testing.T, keys []string) {
	for _, k := range keys {
		parts := strings.SplitN(k, "/", 4)
		for _, gvr := range allOwnedGVRs {
			ri := dyn(t, parts[0]).Resource(gvr).Namespace(parts[2])
			o, err := ri.Get(context.Background(), parts[3], metav1.GetOptions{})
			if err == nil && o.GetKind() == parts[1] {
				_ = ri.Delete(context.Background(), parts[3], metav1.DeleteOptions{})
			}
		}
	}
}

// relProxies puts a fault proxy in front of every local API server.
type relProxies map[string]*faultproxy.Proxy

func newRelProxies(t *testing.T) relProxies {
	t.Helper()
	requireMesh(t)
	ps := relProxies{}
	for _, c := range testClusters {
		target := strings.TrimSuffix(strings.TrimPrefix(testMesh.Server(c), "https://"), "/")
		p, err := faultproxy.New(target)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		ps[c] = p
	}
	return ps
}

// heal removes every fault.
func (ps relProxies) heal(t *testing.T) {
	for c, p := range ps {
		p.SetLatency(0)
		if err := p.Heal(); err != nil {
			t.Errorf("healing the proxy of %s: %v", c, err)
		}
	}
}

// connection reaches a cluster through its proxy with the admin client
// certificate. TLS passes through the proxy, so the API server's own
// certificate is verified against its CA; the certificate names localhost
// and 127.0.0.1, and tls_server_name checks the former.
func (ps relProxies) connection(t *testing.T, cluster string) string {
	t.Helper()
	cfg := testMesh.RESTConfig(cluster)
	return fmt.Sprintf(`host                   = %q
      tls_server_name        = "localhost"
      cluster_ca_certificate = %q
      client_certificate     = %q
      client_key             = %q`, ps[cluster].URL(), cfg.CAData, cfg.CertData, cfg.KeyData)
}

// relWatch polls a cluster, with admin rights and without the proxy, until
// cond holds for the objects an intent owns there (given as liveOwned
// keys, with their resourceVersions), then closes the returned channel and
// runs then once. It stops at the end of the test.
func relWatch(t *testing.T, cluster string, owner engine.Owner, cond func(keys []string, versions map[string]string) bool, then func()) <-chan struct{} {
	fired := make(chan struct{})
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop) })
	d := dyn(t, cluster)
	go func() {
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			keys, versions, _ := relOwnedVersions(d, cluster, owner)
			if cond(keys, versions) {
				close(fired)
				then()
				return
			}
		}
	}()
	return fired
}

// relOwnedVersions lists the objects an intent owns in a cluster (as
// liveOwned keys), with their resourceVersions; a kind that could not be
// listed is left out, and its error returned.
func relOwnedVersions(d dynamic.Interface, cluster string, owner engine.Owner) ([]string, map[string]string, error) {
	sel := engine.LabelManagedBy + "=" + engine.ManagedByValue + "," + engine.LabelOwnerKind + "=" + owner.Kind + "," + engine.LabelOwnerName + "=" + owner.Name
	var keys []string
	versions := map[string]string{}
	var errs []error
	for _, gvr := range []schema.GroupVersionResource{gvrSE, gvrDR, gvrConfigMap, gvrGateway, gvrPeerAuth, gvrAuthz} {
		list, err := d.Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, o := range list.Items {
			k := fmt.Sprintf("%s/%s/%s/%s", cluster, o.GetKind(), o.GetNamespace(), o.GetName())
			keys = append(keys, k)
			versions[k] = o.GetResourceVersion()
		}
	}
	sort.Strings(keys)
	return keys, versions, errors.Join(errs...)
}

// relFired reports whether a watch has fired.
func relFired(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
