terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
    }
  }
}

# The payments team's root: its own state, the platform's clusters.
provider "mesh" {
  workspace = "payments"
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

module "ledger" {
  source = "../../../modules/team"

  team      = "payments"
  service   = "ledger"
  namespace = "payments"
  clusters  = ["east", "west"]
  timeout   = "2s"
  callers   = [{ namespace = "accounts", service_account = "account" }]
}

module "invoices" {
  source = "../../../modules/team"

  team      = "payments"
  service   = "invoices"
  namespace = "payments"
  clusters  = ["west"]
  callers   = [{ namespace = "billing", service_account = "billing" }]
}

# Every traffic policy of this state, from both modules: a contribution of
# a policy instance this state held that is no longer listed is an orphan,
# released by the apply. The roster claims the identity "payments".
resource "mesh_workspace" "payments" {
  traffic_policies = concat(module.ledger.traffic_policies, module.invoices.traffic_policies)
}

output "hostnames" {
  value = [module.ledger.hostname, module.invoices.hostname]
}
