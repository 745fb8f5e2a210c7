terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
    }
  }
}

# What the provider is told about the mesh must match how Istio runs in
# each cluster: the network (Istio's topology.istio.io/network), the trust
# domain (meshConfig.trustDomain) and the address of the east-west gateway.
provider "mesh" {
  clusters = {
    east = {
      kubernetes        = { config_path = "~/.kube/config", config_context = "east" }
      network           = "net-east"
      trust_domain      = "east.mesh"
      east_west_gateway = { address = "203.0.113.10", port = 15443 }
    }
    west = {
      kubernetes        = { config_path = "~/.kube/config", config_context = "west" }
      network           = "net-west"
      trust_domain      = "west.mesh"
      east_west_gateway = { address = "203.0.113.20", port = 15443 }
    }
  }
  # The namespace an administrator created in every cluster, where the
  # provider keeps its records (this is the default).
  records_namespace = "mesh-intent-records"
}

# Each cluster's east-west gateway passes the global hostnames (*.global by
# default) through to the local services, for callers on other networks.
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
