package provider

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
)

// A second Terraform state that sets the same workspace as another on a
// pull cluster (a copied root module) fails at plan naming the first
// state's claim and its traffic policies: the first state's roster claim
// is in the artifact both would publish (found by review: the two states
// overwrote each other's objects there, the publisher annotation being the
// workspace, the same for both). Offline but for the in-process registry.
func TestSecondStateWithTheSameWorkspaceOnAPullClusterFailsThePlan(t *testing.T) {
	t.Setenv(envConfigPath, "")
	t.Setenv(envConfigPaths, "")
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repository := strings.TrimPrefix(srv.URL, "http://") + "/mesh/onprem"
	first := &engine.Engine{Delivery: &pullDelivery{artifacts: map[string]engine.PullArtifact{
		"onprem": {Target: oci.Target{Repository: repository, Tag: "team-a", Insecure: true}, Publisher: "team-a"},
	}}}
	if err := (shareddata.Claims{Engine: first}).WriteClaim(context.Background(), shareddata.Claim{Cluster: "onprem", Identity: "team-a", Token: "token-of-the-first-state",
		Members: map[string]string{"0123456789abcdef": "payments"}}); err != nil {
		t.Fatal(err)
	}
	planFailsWith(t, `
provider "mesh" {
  clusters = {
    onprem = { delivery = { oci = { repository = "`+repository+`", insecure = true } } }
  }
  workspace = "team-a"
}
resource "mesh_workspace" "this" {
  traffic_policies = []
}
`, `Workspace identity claimed by another state[\s\S]*"team-a"[\s\S]*onprem[\s\S]*payments`)
}
