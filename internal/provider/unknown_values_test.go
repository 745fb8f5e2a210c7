package provider

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/tfjsonpath"
)

// Values known only after apply flow through every intent: a cluster's
// labels (cluster created in the same run), a virtual destination's backend
// namespace, and the policies on that virtual destination. Plan succeeds
// with those parts unknown, and apply agrees with the plan.
func TestAccUnknownValuesAcrossIntents(t *testing.T) {
	requireMesh(t)
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	provider := strings.Replace(providerConfig(t, ""), `labels = { cloud = "aws", env = "prod" }`, `labels = terraform_data.east_labels.output`, 1)
	config := provider + `
resource "terraform_data" "east_labels" {
  input = { cloud = "aws", env = "prod" }
}
resource "terraform_data" "namespace" {
  input = "users"
}
resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = terraform_data.namespace.output, service = "user", priority = 0 },
    { cluster = "onprem", namespace = "users", service = "user", priority = 1 },
  ]
  clients = { cluster_selector = { env = "prod" } }
}
resource "mesh_access_policy" "account_to_user" {
  name        = "account-to-user"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = [{ cluster_selector = { cloud = "aws" }, namespace = "accounts", service_account = "account" }]
}
resource "mesh_traffic_policy" "timeout" {
  name        = "timeout"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  timeout     = "2s"
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkNothingOwned(t),
		Steps: []resource.TestStep{
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{
						plancheck.ExpectUnknownValue("mesh_access_policy.account_to_user", tfjsonpath.New("destination_backends")),
						plancheck.ExpectUnknownValue("mesh_traffic_policy.timeout", tfjsonpath.New("resolved_destination")),
						plancheck.ExpectUnknownValue("mesh_traffic_policy.timeout", tfjsonpath.New("objects")),
					},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkInventoryMatches(t, "mesh_virtual_destination.user", "virtual-destination", "user"),
					checkInventoryMatches(t, "mesh_access_policy.account_to_user", "access-policy", "account-to-user"),
					resource.TestCheckResourceAttr("mesh_access_policy.account_to_user", "destination_backends.#", "2"),
					checkRoutes(t, "east", "timeout@2s"),
				),
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
