terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source  = "mesh-intent/mesh"
      version = "~> 0.1.0"
    }
  }
}

# Two clusters on two networks, each with an east-west gateway, reached
# through one kubeconfig that has a context per cluster.
provider "mesh" {
  clusters = {
    east = {
      kubernetes        = { config_path = "~/.kube/config", config_context = "east" }
      network           = "net-east"
      region            = "us-east-1"
      trust_domain      = "east.mesh"
      east_west_gateway = { address = "203.0.113.10" }
    }
    west = {
      kubernetes        = { config_path = "~/.kube/config", config_context = "west" }
      network           = "net-west"
      region            = "us-west-2"
      trust_domain      = "west.mesh"
      east_west_gateway = { address = "203.0.113.20" }
    }
  }
}

# Mesh-wide settings of each cluster: strict mutual TLS, and the east-west
# gateway exposes *.global services to the other network.
resource "mesh_cluster" "east" {
  name             = "east"
  mtls_mode        = "STRICT"
  expose_east_west = true
}

resource "mesh_cluster" "west" {
  name             = "west"
  mtls_mode        = "STRICT"
  expose_east_west = true
}

# user.global: served by east, failing over to west.
resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "west", namespace = "users", service = "user", priority = 1 },
  ]
}

# Only the account service may call it.
resource "mesh_access_policy" "user" {
  name        = "user"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = [{ namespace = "accounts", service_account = "account" }]
}
