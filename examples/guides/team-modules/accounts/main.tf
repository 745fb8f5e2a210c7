terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
    }
  }
}

# The accounts team's root: another state, the same clusters. workspace
# names this state in the messages other states' plans show about its
# traffic policies, and is the identity its roster claims.
provider "mesh" {
  workspace = "accounts"
  clusters = {
    east = {
      kubernetes        = { config_path = "~/.kube/config" }
      network           = "net-east"
      east_west_gateway = { address = "203.0.113.10" }
    }
    west = {
      kubernetes        = { config_path = "~/.kube/config" }
      network           = "net-west"
      east_west_gateway = { address = "203.0.113.20" }
    }
  }
}

module "account" {
  source = "../../../modules/team"

  team      = "accounts"
  service   = "account"
  namespace = "accounts"
  clusters  = ["east"]
  callers   = [{ namespace = "web", service_account = "frontend" }]

  # The accounts workloads' calls to the payments team's ledger: composed
  # with the payments team's own policy on that hostname.
  calls = {
    "ledger.payments.global" = { timeout = "2s", request_headers = { "x-caller-team" = "accounts" } }
  }
}

# The roster of the state: a contribution of a policy instance this state
# held that is no longer listed here (its resource forgotten with
# `terraform state rm`) is reported by the plan and released by the apply.
# It also claims the identity "accounts" in the clusters, so that no other
# state can name it by accident.
resource "mesh_workspace" "accounts" {
  traffic_policies = module.account.traffic_policies
}

# The payments team's ledger, owned by the other state, read from its
# records in the clusters.
data "mesh_virtual_destination" "ledger" {
  hostname = "ledger.payments.global"
}

output "ledger_backends" {
  value = data.mesh_virtual_destination.ledger.backends
}
