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
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// pullProviderConfig registers east (push) and onprem (pull, to repository
// on an in-process registry; its kubernetes connection is given, and only
// read), for state "acc-pull".
func pullProviderConfig(t *testing.T, repository string) string {
	t.Helper()
	return fmt.Sprintf(`provider "mesh" {
  clusters = {
    east = {
      kubernetes = {
      %s
      }
      %s
    }
    onprem = {
      kubernetes = {
      %s
      }
      %s
      delivery = { oci = { repository = %q, insecure = true } }
    }
  }
  workspace = "acc-pull"
}
`, kubeconfigConnection(t, "east"), testTopology["east"], kubeconfigConnection(t, "onprem"), testTopology["onprem"], repository)
}

// The provider side of pull delivery under Terraform, against the local
// mesh and an in-process registry (Flux itself is not running here): the
// pull cluster's objects are published, not applied; the next plan is
// empty; a tag re-pushed by hand is drift the apply undoes; destroy
// empties the artifact of the state's objects.
func TestAccPull_publishRefreshRepushDestroy(t *testing.T) {
	requireMesh(t)
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repository := strings.TrimPrefix(srv.URL, "http://") + "/mesh/onprem"
	target := oci.Target{Repository: repository, Tag: "acc-pull", Insecure: true}
	ctx := context.Background()
	config := pullProviderConfig(t, repository) + meshClusterConfig("onprem", `  mtls_mode        = "STRICT"
  expose_east_west = true`) + meshClusterConfig("east", `  expose_east_west = true`)
	artifactKeys := func() ([]string, error) {
		a, found, err := oci.Fetch(ctx, target)
		if err != nil || !found {
			return nil, fmt.Errorf("the artifact: found %v, %v", found, err)
		}
		var keys []string
		for k := range a.Objects {
			keys = append(keys, k)
		}
		return keys, nil
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			keys, err := artifactKeys()
			if err != nil {
				return err
			}
			if len(keys) != 0 {
				return fmt.Errorf("after destroy the artifact still holds %v", keys)
			}
			return checkNothingOwned(t)(nil)
		},
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					resource.TestCheckResourceAttr("mesh_cluster.onprem", "objects.%", "2"),
					func(s *terraform.State) error {
						keys, err := artifactKeys()
						if err != nil {
							return err
						}
						if len(keys) != 2 {
							return fmt.Errorf("the artifact holds %v, want onprem's 2 objects", keys)
						}
						if live := liveOwnedIn(t, []string{"onprem"}, "cluster", "onprem"); len(live) != 0 {
							return fmt.Errorf("objects were pushed to the pull cluster: %v", live)
						}
						if live := liveOwnedIn(t, []string{"east"}, "cluster", "east"); len(live) == 0 {
							return fmt.Errorf("the push cluster got nothing")
						}
						return nil
					},
				),
			},
			{
				// Refreshed from the artifact: the digests are the plan's.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Someone re-pushes the tag with onprem's Gateway changed:
				// the plan shows it, the apply puts it back.
				PreConfig: func() {
					a, _, err := oci.Fetch(ctx, target)
					if err != nil {
						t.Fatal(err)
					}
					objs := a.Objects.Clone()
					for k, m := range objs {
						if strings.Contains(k, "/Gateway/") {
							changed := map[string]any{}
							for f, v := range m {
								changed[f] = v
							}
							changed["spec"] = map[string]any{"selector": map[string]any{"istio": "hijacked"}}
							objs[k] = changed
						}
					}
					if _, err := oci.Publish(ctx, target, objs, ""); err != nil {
						t.Fatal(err)
					}
				},
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("mesh_cluster.onprem", plancheck.ResourceActionUpdate)},
				},
				Check: func(*terraform.State) error {
					a, _, err := oci.Fetch(ctx, target)
					if err != nil {
						return err
					}
					for k, m := range a.Objects {
						if strings.Contains(k, "/Gateway/") && strings.Contains(fmt.Sprint(m["spec"]), "hijacked") {
							return fmt.Errorf("the apply left the re-pushed Gateway: %v", m["spec"])
						}
					}
					return nil
				},
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
		},
	})
}
