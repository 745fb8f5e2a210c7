# The one-backend change of the reviewing-plans guide: ledger.global is
# served from east first, then west, then the datacenter. The change removes
# the datacenter's backend (the commented line), and the plan says, for each
# client cluster, "east > west > onprem" -> "east > west".
terraform {
  required_providers {
    mesh = { source = "mesh-intent/mesh", version = "~> 0.1.0" }
  }
}

# Three clusters on three networks, each with an east-west gateway.
provider "mesh" {
  clusters = {
    east = {
      kubernetes        = { config_path = "~/.kube/config", config_context = "east" }
      network           = "net-east"
      east_west_gateway = { address = "203.0.113.10" }
    }
    west = {
      kubernetes        = { config_path = "~/.kube/config", config_context = "west" }
      network           = "net-west"
      east_west_gateway = { address = "203.0.113.20" }
    }
    onprem = {
      kubernetes        = { config_path = "~/.kube/config", config_context = "onprem" }
      network           = "net-onprem"
      east_west_gateway = { address = "203.0.113.30" }
    }
  }
}

resource "mesh_virtual_destination" "ledger" {
  name     = "ledger"
  hostname = "ledger.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "ledger", service = "ledger", priority = 0 },
    { cluster = "west", namespace = "ledger", service = "ledger", priority = 1 },
    # { cluster = "onprem", namespace = "ledger", service = "ledger", priority = 2 },
  ]
}
