terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
    }
  }
}

provider "mesh" {
  clusters = {
    east = { kubernetes = { config_path = "~/.kube/config" }, network = "net-east", east_west_gateway = { address = "203.0.113.10" } }
    west = { kubernetes = { config_path = "~/.kube/config" }, network = "net-west", east_west_gateway = { address = "203.0.113.20" } }
  }
}

# One place for the configuration, used by the resource and by its
# rendering, so that what a reviewer reads is what the plan applies.
locals {
  ledger = {
    name     = "ledger"
    hostname = "ledger.payments.global"
    ports    = [{ number = 8080, protocol = "HTTP" }]
    backends = [
      { cluster = "east", namespace = "payments", service = "ledger", priority = 0 },
      { cluster = "west", namespace = "payments", service = "ledger", priority = 1 },
    ]
  }
}

resource "mesh_virtual_destination" "ledger" {
  name     = local.ledger.name
  hostname = local.ledger.hostname
  ports    = local.ledger.ports
  backends = local.ledger.backends
}

data "mesh_rendered_objects" "ledger" {
  type          = "mesh_virtual_destination"
  configuration = jsonencode(local.ledger)
}

# One object's YAML, by the key the plan shows.
output "ledger_east_service_entry" {
  value = data.mesh_rendered_objects.ledger.objects["east/ServiceEntry.networking.istio.io/istio-system/vd-ledger"]
}
