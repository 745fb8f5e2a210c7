package provider

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// Bad pull-delivery settings fail at plan with the attribute path and the
// fix; none contacts a registry.
func TestDeliveryConfigValidation(t *testing.T) {
	cases := []struct {
		name  string
		oci   string // body of clusters.onprem.delivery.oci
		extra string // more provider attributes
		want  string // regexp over the error output
	}{
		{"repository with tag", `repository = "registry.example.com/mesh/onprem:v1"`, `workspace = "team-a"`,
			`Invalid repository[\s\S]*clusters\["onprem"\]\.delivery\.oci\.repository[\s\S]*without a\s+tag`},
		{"repository with scheme", `repository = "oci://registry.example.com/mesh/onprem"`, `workspace = "team-a"`,
			`Invalid repository[\s\S]*clusters\["onprem"\]\.delivery\.oci\.repository[\s\S]*without a\s+scheme`},
		{"repository without host", `repository = "onprem"`, `workspace = "team-a"`,
			`Invalid repository[\s\S]*clusters\["onprem"\]\.delivery\.oci\.repository[\s\S]*registry\s+host`},
		{"two kinds of credentials", `repository = "registry.example.com/mesh/onprem"
        token    = "t"
        username = "u"
        password = "p"`, `workspace = "team-a"`,
			`Two kinds of registry credentials[\s\S]*clusters\["onprem"\]\.delivery\.oci[\s\S]*username/password\s+and\s+token`},
		{"username without password", `repository = "registry.example.com/mesh/onprem"
        username = "u"`, `workspace = "team-a"`,
			`Incomplete registry credentials[\s\S]*clusters\["onprem"\]\.delivery\.oci\.password`},
		{"no workspace", `repository = "registry.example.com/mesh/onprem"`, ``,
			`Pull delivery needs a workspace[\s\S]*workspace[\s\S]*onprem`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			config := fmt.Sprintf(`
provider "mesh" {
  clusters = {
    onprem = {
      delivery = { oci = {
        %s
      } }
    }
  }
  %s
}
data "mesh_clusters" "all" {}
`, c.oci, c.extra)
			planFailsWith(t, config, c.want)
		})
	}
}

// A pull cluster needs no kubernetes connection, and is not given the
// environment's kubeconfig: the plan succeeds without either.
func TestPullClusterNeedsNoConnection(t *testing.T) {
	t.Setenv(envConfigPath, "")
	t.Setenv(envConfigPaths, "")
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
provider "mesh" {
  clusters = {
    onprem = { delivery = { oci = { repository = "registry.example.com/mesh/onprem" } } }
  }
  workspace = "team-a"
}
data "mesh_clusters" "all" {}
`,
			PlanOnly:           true,
			ExpectNonEmptyPlan: false,
		}},
	})
}

// Each pull cluster's artifact: its repository, the workspace as tag and
// publisher, the credentials of this run.
func TestBuildDeliveryNamesTheArtifact(t *testing.T) {
	pull := map[string]ociModel{"onprem": {
		Repository: types.StringValue("registry.example.com/mesh/onprem"), Insecure: types.BoolNull(),
		DockerConfigFile: types.StringNull(), Username: types.StringNull(), Password: types.StringNull(), Token: types.StringValue("tok"),
	}}
	var diags diag.Diagnostics
	d := buildDelivery(pull, "team-a", true, false, &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	a, ok, err := d.Pull("onprem")
	if err != nil || !ok || a.Target.String() != "registry.example.com/mesh/onprem:team-a" || a.Publisher != "team-a" || a.Target.Credentials.Token != "tok" {
		t.Errorf("onprem's artifact: %+v, %v, %v", a, ok, err)
	}
	if _, ok, _ := d.Pull("east"); ok {
		t.Error("a cluster without delivery is pulled")
	}
	buildDelivery(pull, "default", false, false, &diags)
	if !diags.HasError() || !strings.Contains(fmt.Sprint(diags), "workspace") {
		t.Errorf("pull without an explicit workspace: %v", diags)
	}
}

// trafficPolicyOnPull is a traffic policy on pull cluster onprem, whose
// artifacts are in repository (plain HTTP), for workspace team-a.
func trafficPolicyOnPull(repository string) string {
	return fmt.Sprintf(`
provider "mesh" {
  clusters = {
    onprem = { delivery = { oci = { repository = %q, insecure = true } } }
  }
  workspace = "team-a"
}
resource "mesh_traffic_policy" "p" {
  name        = "p"
  destination = { service = "user", namespace = "users" }
  sources     = { clusters = ["onprem"] }
  timeout     = "2s"
}
`, repository)
}

// A traffic policy on a pull cluster plans: its VirtualService is
// composed in the state's artifact (engine/sink_compose.go).
func TestComposedIntentOnPullClusterPlans(t *testing.T) {
	t.Setenv(envConfigPath, "")
	t.Setenv(envConfigPaths, "")
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             trafficPolicyOnPull(strings.TrimPrefix(srv.URL, "http://") + "/mesh/onprem"),
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}

// Another state (workspace team-b) publishes the same destination's
// VirtualService for the pull cluster, in its own artifact beside this
// state's: the plan fails at sources, naming that artifact, its state and
// policy, and the fix.
func TestComposedIntentOfAnotherStateOnPullClusterFailsThePlan(t *testing.T) {
	t.Setenv(envConfigPath, "")
	t.Setenv(envConfigPaths, "")
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repository := strings.TrimPrefix(srv.URL, "http://") + "/mesh/onprem"
	theirs := map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
		"metadata": map[string]any{"name": "tp-user.users.svc.cluster.local", "namespace": "users",
			"labels":      map[string]any{engine.LabelManagedBy: engine.ManagedByValue, "traffic-policy.mesh-intent.io/q": "id-q"},
			"annotations": map[string]any{"traffic-policy.mesh-intent.io/q": "{}"}},
		"spec": map[string]any{"hosts": []any{"user.users.svc.cluster.local"}}}
	key, err := oci.Key(theirs)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := oci.Publish(context.Background(), oci.Target{Repository: repository, Tag: "team-b", Insecure: true}, oci.Objects{key: theirs}, "team-b"); err != nil {
		t.Fatal(err)
	}
	planFailsWith(t, trafficPolicyOnPull(repository), `published for pull cluster onprem by another state[\s\S]*sources[\s\S]*team-b[\s\S]*traffic\s+policy\s+"q"[\s\S]*by\s+push`)
}

// Two pull clusters whose repositories are one artifact (the same
// repository, or two spellings the registry resolves as one) fail at plan
// naming both clusters, at the second one's repository (found by review:
// their publishes removed each other's objects).
func TestTwoPullClustersOnOneArtifactFailThePlan(t *testing.T) {
	t.Setenv(envConfigPath, "")
	t.Setenv(envConfigPaths, "")
	planFailsWith(t, `
provider "mesh" {
  clusters = {
    east = { delivery = { oci = { repository = "docker.io/mesh/fleet" } } }
    west = { delivery = { oci = { repository = "index.docker.io/mesh/fleet" } } }
  }
  workspace = "team-a"
}
data "mesh_clusters" "all" {}
`, `Two pull clusters on one artifact[\s\S]*clusters\["west"\]\.delivery\.oci\.repository[\s\S]*east and west`)
}

// delivery.oci.retired: the cluster is pushed again, and its former
// artifact (same repository, the workspace as tag) is named to the engine
// for emptying; it is no pull cluster, so it shares an artifact with none.
func TestBuildDeliveryRetiredArtifactIsPush(t *testing.T) {
	pull := map[string]ociModel{"onprem": {
		Repository: types.StringValue("registry.example.com/mesh/onprem"), Insecure: types.BoolNull(), Retired: types.BoolValue(true),
		DockerConfigFile: types.StringNull(), Username: types.StringNull(), Password: types.StringNull(), Token: types.StringNull(),
	}}
	var diags diag.Diagnostics
	d := buildDelivery(pull, "team-a", true, false, &diags)
	if diags.HasError() {
		t.Fatal(diags)
	}
	if _, ok, _ := d.Pull("onprem"); ok {
		t.Error("a retired artifact's cluster is delivered by pull")
	}
	if a, ok := d.Retired("onprem"); !ok || a.Target.String() != "registry.example.com/mesh/onprem:team-a" {
		t.Errorf("onprem's former artifact: %+v, %v", a, ok)
	}
}
