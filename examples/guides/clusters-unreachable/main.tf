terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
    }
  }
}

variable "registry_token" {
  description = "A token that may push to registry.example.com/mesh/*; never stored in state."
  type        = string
  sensitive   = true
}

provider "mesh" {
  # Names this state's artifact (its tag) and its publisher: one per state.
  workspace = "platform-prod"
  clusters = {
    # Reached by the runner: objects are written with server-side apply.
    east = {
      kubernetes        = { config_path = "~/.kube/config", config_context = "east" }
      network           = "net-east"
      east_west_gateway = { address = "203.0.113.10" }
    }
    # Not reached by the runner: the provider publishes the cluster's
    # objects as an OCI artifact, and Flux in the cluster pulls and applies it.
    onprem = {
      delivery = {
        oci = {
          repository = "registry.example.com/mesh/onprem"
          token      = var.registry_token
        }
      }
      network           = "net-onprem"
      east_west_gateway = { address = "198.51.100.20" }
    }
  }
}

resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "onprem", namespace = "users", service = "user", priority = 1 },
  ]
}
