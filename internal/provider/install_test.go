package provider

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/dirhash"
)

// changelogVersion is the version of the top section of CHANGELOG.md,
// which make install must build (tools/releasecheck holds the GNUmakefile
// to it as well).
var changelogVersion = regexp.MustCompile(`(?m)^## (\d+\.\d+\.\d+) \(\d{4}-\d{2}-\d{2}\)$`)

// TestAccInstall_freshClone does what a user of a fresh clone does, with
// nothing of this test's own in between: `make install` (the GNUmakefile
// itself, with HOME a new empty directory), then, in a copy of
// examples/guides/getting-started, a plain `terraform init` and
// `terraform plan` against the local clusters (the guide's
// ~/.kube/config is the local mesh's kubeconfig, whose contexts are named
// east and west like the guide's). The CLI configuration is an empty file:
// no dev_overrides, no provider_installation, so Terraform finds the
// provider only if make install put it in the implied local mirror. Every
// connection to anything but the local clusters goes to a proxy that
// counts it and answers nothing; there must be none, so nothing came from
// the network (checkpoint is disabled, as in every test here).
func TestAccInstall_freshClone(t *testing.T) {
	requireMesh(t)
	for _, tool := range []string{"make", "go", "terraform"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Fatalf("TestAccInstall_freshClone needs %s on PATH: %v", tool, err)
		}
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := os.ReadFile(filepath.Join(repo, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := changelogVersion.FindSubmatch(changelog)
	if m == nil {
		t.Fatal("CHANGELOG.md has no dated \"## x.y.z (YYYY-MM-DD)\" section")
	}
	version := string(m[1])

	home := t.TempDir()
	kubeconfig, err := os.ReadFile(testMesh.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".kube"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, ".kube", "config"), kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	emptyRC := filepath.Join(t.TempDir(), "empty.tfrc")
	if err := os.WriteFile(emptyRC, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	proxy, connections := countingProxy(t)

	// The user's environment, with a new home; Go keeps its caches where
	// they are (a new home would mean downloading every module) and may not
	// download anything (GOPROXY=off, GOTOOLCHAIN=local).
	goEnv := map[string]string{}
	goEnvJSON, err := exec.Command("go", "env", "-json", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(goEnvJSON, &goEnv); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "TF_"), strings.HasPrefix(name, "KUBE"), strings.HasPrefix(name, "MESH_"),
			strings.HasSuffix(strings.ToUpper(name), "_PROXY"),
			name == "HOME", name == "VERSION", name == "PLUGINS_DIR", name == "GOPROXY", name == "GOTOOLCHAIN", name == "GOENV",
			name == "XDG_DATA_HOME", name == "XDG_DATA_DIRS", name == "MAKEFLAGS", name == "MFLAGS":
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "HOME="+home, "GOPROXY=off", "GOTOOLCHAIN=local", "GOENV=off",
		"GOCACHE="+goEnv["GOCACHE"], "GOMODCACHE="+goEnv["GOMODCACHE"], "GOPATH="+goEnv["GOPATH"],
		"TF_CLI_CONFIG_FILE="+emptyRC, "CHECKPOINT_DISABLE=1", "TF_IN_AUTOMATION=1", "TF_INPUT=0",
		"HTTPS_PROXY="+proxy, "HTTP_PROXY="+proxy, "https_proxy="+proxy, "http_proxy="+proxy)

	run := func(dir string, timeout time.Duration, extraEnv []string, name string, args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir, cmd.Env = dir, append(append([]string(nil), env...), extraEnv...)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return string(out), 0
		case errors.As(err, &exit) && ctx.Err() == nil:
			return string(out), exit.ExitCode()
		}
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
		return "", -1
	}

	// 1. make install (of a mutated GNUmakefile under tools/mutate).
	makefile := filepath.Join(repo, "GNUmakefile")
	if file, mutated, ok := strings.Cut(os.Getenv("MUTATE_FILE"), "="); ok && file == "GNUmakefile" {
		makefile = mutated
	}
	if out, code := run(repo, 10*time.Minute, nil, "make", "-f", makefile, "install"); code != 0 {
		t.Fatalf("make install exited %d:\n%s", code, out)
	}
	pkgDir := filepath.Join(home, ".terraform.d", "plugins", "registry.terraform.io", "mesh-intent", "mesh", version, runtime.GOOS+"_"+runtime.GOARCH)
	bin := filepath.Join(pkgDir, "terraform-provider-mesh_v"+version)
	if out, code := run(home, time.Minute, nil, bin, "-version"); code != 0 || strings.TrimSpace(out) != "terraform-provider-mesh "+version {
		t.Fatalf("%s -version said %q (exit %d), want \"terraform-provider-mesh %s\": make install must stamp the CHANGELOG's version", bin, out, code, version)
	}
	pkgHash, err := dirhash.HashDir(pkgDir, "", dirhash.Hash1)
	if err != nil {
		t.Fatal(err)
	}

	// 2. terraform init in a copy of the getting-started guide.
	work := filepath.Join(t.TempDir(), "getting-started")
	if err := os.CopyFS(work, os.DirFS(filepath.Join(repo, "examples", "guides", "getting-started"))); err != nil {
		t.Fatal(err)
	}
	if out, code := run(work, 2*time.Minute, nil, "terraform", "init", "-input=false", "-no-color"); code != 0 {
		t.Fatalf("terraform init exited %d:\n%s", code, out)
	}
	lock, err := os.ReadFile(filepath.Join(work, ".terraform.lock.hcl"))
	if err != nil {
		t.Fatalf("terraform init wrote no lock file: %v", err)
	}
	entry := regexp.MustCompile(`(?s)provider "registry\.terraform\.io/mesh-intent/mesh" \{\s*version\s*=\s*"([^"]*)"\s*constraints\s*=\s*"([^"]*)"\s*hashes\s*=\s*\[(.*?)\]`).FindSubmatch(lock)
	if entry == nil {
		t.Fatalf("the lock file has no entry for registry.terraform.io/mesh-intent/mesh with a version, constraints and hashes:\n%s", lock)
	}
	if string(entry[1]) != version {
		t.Errorf("the lock file selects mesh-intent/mesh %s, want %s", entry[1], version)
	}
	if string(entry[2]) != "~> 0.1.0" {
		t.Errorf("the lock file records the constraints %q, want the guide's \"~> 0.1.0\"", entry[2])
	}
	// The package Terraform locked is the directory make install wrote.
	if hashes := string(entry[3]); !strings.Contains(hashes, `"`+pkgHash+`"`) {
		t.Errorf("the lock file's hashes %s do not include %s, the hash of what make install wrote", strings.TrimSpace(hashes), pkgHash)
	}

	// 3. What Terraform says it selected.
	out, code := run(work, time.Minute, nil, "terraform", "version", "-json")
	var tv struct {
		ProviderSelections map[string]string `json:"provider_selections"`
	}
	if code != 0 {
		t.Fatalf("terraform version exited %d:\n%s", code, out)
	}
	if err := json.Unmarshal([]byte(out), &tv); err != nil {
		t.Fatalf("terraform version -json: %v\n%s", err, out)
	}
	if got := tv.ProviderSelections["registry.terraform.io/mesh-intent/mesh"]; got != version {
		t.Errorf("terraform version lists mesh-intent/mesh %q, want %s: %s", got, version, out)
	}

	// 4. terraform plan against the local clusters, with the provider's log.
	logPath := filepath.Join(t.TempDir(), "terraform.log")
	out, code = run(work, 3*time.Minute, []string{"TF_LOG=INFO", "TF_LOG_PATH=" + logPath},
		"terraform", "plan", "-input=false", "-no-color", "-detailed-exitcode")
	if code != 2 {
		t.Fatalf("terraform plan exited %d, want 2 (succeeded, with changes):\n%s", code, out)
	}
	if !strings.Contains(out, "Plan: 4 to add, 0 to change, 0 to destroy.") {
		t.Errorf("terraform plan does not plan the guide's four resources:\n%s", out)
	}
	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(logs), "terraform-provider-mesh "+version) {
		t.Errorf("the plan's log has no line \"terraform-provider-mesh %s\" from the provider", version)
	}

	if n := connections.Load(); n != 0 {
		t.Errorf("%d connection(s) to the network during make install, init and plan; want none", n)
	}
}

// countingProxy listens on a local port, to be given as HTTPS_PROXY and
// HTTP_PROXY: it counts the connections it gets and closes them unanswered.
// Go and Terraform never send requests for loopback addresses (the local
// clusters) through a proxy, so anything it counts went to the network.
func countingProxy(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			c.Close()
		}
	}()
	return "http://" + l.Addr().String(), &n
}
