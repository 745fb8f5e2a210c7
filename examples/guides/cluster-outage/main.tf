# The cluster-outage guide: ledger.global has a backend in each of three
# clusters, and a traffic policy splits its requests across them. While
# one cluster is down, a change of the weights still reaches the others.
terraform {
  required_providers {
    mesh = { source = "mesh-intent/mesh", version = "~> 0.1.0" }
  }
}

provider "mesh" {
  # How long a cluster that does not answer holds each run (per request;
  # a cluster that timed out once is not asked again in the same run).
  request_timeout = "10s"
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
    { cluster = "east", namespace = "ledger", service = "ledger" },
    { cluster = "west", namespace = "ledger", service = "ledger" },
    { cluster = "onprem", namespace = "ledger", service = "ledger" },
  ]
}

# During west's outage, move its share to east: this reaches east and
# onprem at once, and west when it answers again.
resource "mesh_traffic_policy" "ledger_split" {
  name        = "ledger-split"
  destination = { virtual_destination = mesh_virtual_destination.ledger.hostname }
  traffic_shift = [
    { cluster = "east", weight = 80 },
    { cluster = "west", weight = 0 },
    { cluster = "onprem", weight = 20 },
  ]
}
