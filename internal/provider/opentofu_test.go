package provider

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The acceptance tests under OpenTofu. make test runs a subset of them a
// second time (mk/opentofu.mk: apply, no-op plan, prune, import, drift,
// destroy, a team module from two roots) with openTofuEnv naming the tofu
// binary that tools/build-opentofu.sh built; the CLI then is OpenTofu
// wherever the tests run one: terraform-plugin-testing's TestCases
// (TF_ACC_TERRAFORM_PATH) and the tests that drive the CLI themselves
// (relTF, through dev_overrides keyed mesh-intent/mesh, which OpenTofu
// reads as registry.opentofu.org/mesh-intent/mesh).

// openTofuEnv names the OpenTofu binary the acceptance tests run instead
// of terraform.
const openTofuEnv = "MESH_ACC_OPENTOFU"

// accCLI is the CLI the acceptance tests run: terraform, or OpenTofu.
func accCLI() string {
	if p := os.Getenv(openTofuEnv); p != "" {
		return p
	}
	return "terraform"
}

// useOpenTofu checks the OpenTofu binary openTofuEnv names and sets up
// terraform-plugin-testing for it: the provider it serves in process is
// registered under OpenTofu's registry host, where OpenTofu looks for a
// provider that configurations name without a source.
func useOpenTofu() (string, error) {
	p := os.Getenv(openTofuEnv)
	out, err := exec.Command(p, "version").Output() // stderr: warnings about the CLI configuration
	if err != nil {
		return "", fmt.Errorf("%s=%s does not run: %v\n%s", openTofuEnv, p, err, out)
	}
	if !strings.HasPrefix(string(out), "OpenTofu v") {
		return "", fmt.Errorf("%s=%s is not OpenTofu: %s", openTofuEnv, p, out)
	}
	os.Setenv("TF_ACC_PROVIDER_HOST", "registry.opentofu.org")
	return p, nil
}

// The CLI the acceptance tests run is the one asked for: OpenTofu 1.11
// under make test's OpenTofu subset, Terraform otherwise. The subset
// includes this test, so that it cannot pass under Terraform unnoticed.
func TestAccCLI_isTheOneAsked(t *testing.T) {
	requireMesh(t)
	out, err := exec.Command(accCLI(), "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v\n%s", accCLI(), err, out)
	}
	want := regexp.MustCompile(`^Terraform v1\.`)
	if os.Getenv(openTofuEnv) != "" {
		want = regexp.MustCompile(`^OpenTofu v1\.11\.`)
		if got := os.Getenv("TF_ACC_TERRAFORM_PATH"); got != os.Getenv(openTofuEnv) {
			t.Errorf("terraform-plugin-testing runs %q, not OpenTofu", got)
		}
		if got := os.Getenv("TF_ACC_PROVIDER_HOST"); got != "registry.opentofu.org" {
			t.Errorf("terraform-plugin-testing serves the provider on host %q, not registry.opentofu.org", got)
		}
	}
	if !want.Match(out) {
		t.Fatalf("the acceptance tests run %s, which says %q; want %s", accCLI(), out, want)
	}
	t.Logf("acceptance tests run %s", strings.SplitN(string(out), "\n", 2)[0])
}
