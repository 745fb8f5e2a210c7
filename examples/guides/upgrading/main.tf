terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
      # Minor versions may change plans (CHANGELOG.md says how); pin one,
      # read its changelog, then move on.
      version = "~> 0.1.0"
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

# A resource renamed in the configuration keeps its objects: moved tells
# Terraform it is the same instance, so nothing is deleted and recreated.
moved {
  from = mesh_access_policy.users
  to   = mesh_access_policy.user
}

resource "mesh_access_policy" "user" {
  name        = "user"
  destination = { service = "user", namespace = "users", clusters = ["east"] }
  sources     = [{ namespace = "accounts", service_account = "account" }]
}
