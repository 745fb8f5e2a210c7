terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
    }
  }
}

# HCP Terraform's Kubernetes dynamic credentials: with
# TFC_KUBERNETES_PROVIDER_AUTH = true on the workspace (and a tag per
# cluster for more than one), HCP Terraform writes a short-lived token file
# for each run and fills this variable with where it is.
variable "tfc_kubernetes_dynamic_credentials" {
  description = "Set by HCP Terraform."
  type = object({
    default = object({ token_path = string })
    aliases = map(object({ token_path = string }))
  })
}

# The platform workspace's outputs: addresses and CA bundles of the clusters.
data "terraform_remote_state" "platform" {
  backend = "remote"
  config = {
    organization = "example"
    workspaces   = { name = "platform-prod" }
  }
}

locals {
  platform = data.terraform_remote_state.platform.outputs
}

provider "mesh" {
  clusters = {
    east = {
      kubernetes = {
        host                   = local.platform.east_endpoint
        cluster_ca_certificate = local.platform.east_ca
        token                  = file(var.tfc_kubernetes_dynamic_credentials.aliases["east"].token_path)
      }
      network           = "net-east"
      east_west_gateway = { address = local.platform.east_gateway }
    }
    west = {
      kubernetes = {
        host                   = local.platform.west_endpoint
        cluster_ca_certificate = local.platform.west_ca
        token                  = file(var.tfc_kubernetes_dynamic_credentials.aliases["west"].token_path)
      }
      network           = "net-west"
      east_west_gateway = { address = local.platform.west_gateway }
    }
  }
}

resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "west", namespace = "users", service = "user", priority = 1 },
  ]
}
