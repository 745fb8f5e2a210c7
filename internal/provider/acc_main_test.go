package provider

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
)

// The acceptance tests share one local mesh per test package: real
// kube-apiservers with Istio's CRDs, started once in TestMain. They run
// only with TF_ACC set (make test sets it) and drive the real Terraform CLI.

// testClusters are the local clusters every acceptance test can use.
var testClusters = []string{"east", "west", "onprem"}

// testMesh is the running local mesh, nil in unit-test runs.
var testMesh *localmesh.Mesh

// protoV6ProviderFactories serves the provider in-process to Terraform.
var protoV6ProviderFactories = map[string]func() (tfprotov6.ProviderServer, error){
	"mesh": providerserver.NewProtocol6WithError(New("test")()),
}

func TestMain(m *testing.M) {
	wrapExecPlugins()
	if os.Getenv("TF_ACC") == "" {
		os.Exit(m.Run())
	}
	os.Exit(runAcceptance(m))
}

func runAcceptance(m *testing.M) int {
	tf, err := exec.LookPath("terraform")
	if os.Getenv(openTofuEnv) != "" {
		if tf, err = useOpenTofu(); err != nil { // opentofu_test.go
			fmt.Fprintln(os.Stderr, "acceptance tests under OpenTofu:", err)
			return 1
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "acceptance tests need the Terraform CLI on PATH (terraform not found). Install Terraform >= 1.5 and run make test again.")
		return 1
	}
	// terraform-plugin-testing uses this binary instead of downloading one.
	os.Setenv("TF_ACC_TERRAFORM_PATH", tf)
	os.Setenv("CHECKPOINT_DISABLE", "1")

	ctrllog.SetLogger(logr.Discard()) // envtest logs through controller-runtime
	bin := os.Getenv("LOCAL_MESH_BIN")
	if bin == "" {
		fmt.Fprintln(os.Stderr, "acceptance tests need the local mesh binaries: run them through 'make test', or set LOCAL_MESH_BIN=$(tools/build-binaries.sh | tail -n1).")
		return 1
	}
	dir, err := os.MkdirTemp("", "mesh-acc-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	// A CLI configuration of our own: the tests need no registry, and a
	// TF_CLI_CONFIG_FILE pointing at a missing file only adds warnings.
	cliConfig := dir + "/terraformrc"
	if err := os.WriteFile(cliConfig, nil, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	os.Setenv("TF_CLI_CONFIG_FILE", cliConfig)

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	start := time.Now()
	mesh, err := localmesh.Start(ctx, localmesh.Options{Clusters: testClusters, Dir: dir, BinDir: bin})
	cancel()
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the local mesh: %v\n", err)
		return 1
	}
	fmt.Fprintf(os.Stderr, "local mesh %v started in %s\n", testClusters, time.Since(start).Round(time.Millisecond))
	testMesh = mesh
	code := m.Run()
	if err := mesh.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the local mesh: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	return code
}

// wrapExecPlugins does for the test binary what main does for the
// provider's: the provider runs in this binary (in process, or re-executed
// to serve Terraform), so exec credential plugins run through it, under a
// deadline. Called first in TestMain and in the init functions that serve
// the provider, since a wrapped plugin inherits their environment.
func wrapExecPlugins() {
	if code, ok := kubeclient.RunExecWrapper(os.Args); ok {
		os.Exit(code)
	}
	if self, err := os.Executable(); err == nil {
		kubeclient.ExecWrapper = self
	}
}
