# A team's slice of the mesh: one service published under a global
# hostname, how its callers' requests behave, and who may call it. Each
# team instantiates it in its own root (its own Terraform state) or several
# times in one root; the platform team owns the clusters (mesh_cluster) and
# the provider block.

terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
    }
  }
}

locals {
  # Object names start with the team's name, so two teams never collide.
  name = "${var.team}-${var.service}"
}

resource "mesh_virtual_destination" "service" {
  name     = local.name
  hostname = "${var.service}.${var.team}.global"
  ports    = [{ number = var.port, protocol = "HTTP" }]
  backends = [
    for i, cluster in var.clusters : {
      cluster   = cluster
      namespace = var.namespace
      service   = var.service
      priority  = i
    }
  ]
  # Every registered cluster may call it unless a selector narrows that.
  clients = length(var.client_cluster_selector) == 0 ? null : { cluster_selector = var.client_cluster_selector }
}

resource "mesh_traffic_policy" "service" {
  name        = local.name
  destination = { virtual_destination = mesh_virtual_destination.service.hostname }
  timeout     = var.timeout
  retries     = { attempts = var.retry_attempts, retry_on = ["5xx", "connect-failure"] }
}

resource "mesh_access_policy" "service" {
  name        = local.name
  destination = { virtual_destination = mesh_virtual_destination.service.hostname }
  sources = [
    for caller in var.callers : {
      namespace       = caller.namespace
      service_account = caller.service_account
    }
  ]
}
