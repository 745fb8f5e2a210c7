package provider

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
)

// serveProviderEnv makes the test binary serve the provider instead of
// running tests, the way Terraform starts a plugin.
const serveProviderEnv = "MESH_TEST_SERVE_PROVIDER"

func init() {
	if os.Getenv(serveProviderEnv) != "1" {
		return
	}
	wrapExecPlugins()
	err := providerserver.Serve(context.Background(), New("test"), providerserver.ServeOpts{
		Address: "registry.terraform.io/mesh-intent/mesh",
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// exampleProviderSources are the addresses the examples may use for this
// provider: the full source, and the hashicorp/ default Terraform assumes
// when a configuration has no required_providers block (registry doc
// snippets usually have none).
var exampleProviderSources = []string{"mesh-intent/mesh", "hashicorp/mesh"}

// TestExamplesValidate runs `terraform init -backend=false` and
// `terraform validate` in every directory under examples/ that holds .tf
// files. It needs the Terraform CLI but no cluster and no network: Terraform
// installs the provider from a filesystem mirror whose only package is this
// test binary, which serves the provider when Terraform starts it (see
// init below). Examples therefore cannot use other providers.
//
// The examples are copied first, so init writes its lock file and .terraform
// directory into a temporary directory, not the source tree.
//
// It runs with no KUBE_* variable and no KUBECONFIG set (terraformEnv
// scrubs them), as a credential-less CI validate job does: validate must
// not depend on the environment.
func TestExamplesValidate(t *testing.T) {
	tf := terraformCLI(t)

	root := t.TempDir()
	examples := filepath.Join(root, "examples")
	if err := os.CopyFS(examples, os.DirFS(filepath.Join("..", "..", "examples"))); err != nil {
		t.Fatalf("copying examples/: %v", err)
	}
	dirs := exampleDirs(t, examples)
	if len(dirs) == 0 {
		t.Fatal("found no directory with .tf files under examples/")
	}

	env := terraformEnv(t, root)
	for _, dir := range dirs {
		rel, _ := filepath.Rel(root, dir)
		t.Run(filepath.ToSlash(rel), func(t *testing.T) {
			t.Parallel()
			runTerraform(t, tf, dir, env, "init", "-backend=false", "-input=false", "-no-color")
			runTerraform(t, tf, dir, env, "validate", "-no-color")
		})
	}
}

// terraformCLI finds the Terraform CLI, or fails the test saying how to
// install it.
func terraformCLI(t *testing.T) string {
	t.Helper()
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal(t.Name() + " needs the Terraform CLI (>= 1.5) on PATH and did not find it: " +
			"install it (https://developer.hashicorp.com/terraform/install, or your package manager) and run the test again")
	}
	return tf
}

// runTerraform runs one Terraform command in dir and fails the test unless
// it succeeds.
func runTerraform(t *testing.T, tf, dir string, env []string, args ...string) {
	t.Helper()
	cmd := exec.Command(tf, args...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform %s in %s: %v\n%s", args[0], filepath.ToSlash(dir), err, out)
	}
}

// exampleDirs lists the directories under root that hold .tf files, sorted,
// skipping hidden ones such as .terraform.
func exampleDirs(t *testing.T, root string) []string {
	t.Helper()
	var dirs []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".tf") {
			if dir := filepath.Dir(p); !slices.Contains(dirs, dir) {
				dirs = append(dirs, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing examples: %v", err)
	}
	slices.Sort(dirs)
	return dirs
}

// terraformEnv writes, under dir, a filesystem mirror holding this test
// binary as every exampleProviderSources package and a CLI config that
// installs from that mirror only, and returns the environment to run
// Terraform with: the caller's, without its Terraform settings and without
// any kubeconfig or cluster credentials (KUBE_*, KUBECONFIG).
func terraformEnv(t *testing.T, dir string) []string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	mirror := filepath.Join(dir, "mirror")
	var include []string
	for _, src := range exampleProviderSources {
		pkg := filepath.Join(mirror, "registry.terraform.io", src, "0.1.0", runtime.GOOS+"_"+runtime.GOARCH)
		if err := os.MkdirAll(pkg, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(self, filepath.Join(pkg, "terraform-provider-mesh")); err != nil {
			t.Fatal(err)
		}
		include = append(include, fmt.Sprintf("%q", "registry.terraform.io/"+src))
	}
	rc := filepath.Join(dir, "terraformrc")
	config := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [%s]\n  }\n}\n",
		mirror, strings.Join(include, ", "))
	if err := os.WriteFile(rc, []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}

	var env []string
	for _, kv := range os.Environ() {
		// Settings of the caller's Terraform that would change where
		// providers come from or what the commands do.
		name, _, _ := strings.Cut(kv, "=")
		if name == "TF_CLI_CONFIG_FILE" || name == "TF_DATA_DIR" || name == "TF_PLUGIN_CACHE_DIR" ||
			name == "TF_WORKSPACE" || strings.HasPrefix(name, "TF_CLI_ARGS") {
			continue
		}
		// Where clusters are: validate must pass without them.
		if strings.HasPrefix(name, "KUBE") {
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"TF_CLI_CONFIG_FILE="+rc,
		"CHECKPOINT_DISABLE=1",
		"TF_IN_AUTOMATION=1",
		"TF_INPUT=0",
		serveProviderEnv+"=1",
	)
}
