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
    east = {
      kubernetes = { config_path = "~/.kube/config", config_context = "east" }
      network    = "net-east"
    }
  }
}

# The intent that the hand-written AuthorizationPolicy users/ap-user in
# east expressed. adopt_existing lets apply rewrite that object in place.
resource "mesh_access_policy" "user" {
  name           = "user"
  destination    = { service = "user", namespace = "users", clusters = ["east"] }
  sources        = [{ namespace = "accounts", service_account = "account" }]
  adopt_existing = true
}

# adopt: marks objects this provider did not write; without it the import
# refuses them.
import {
  to = mesh_access_policy.user
  id = "adopt:user"
}
