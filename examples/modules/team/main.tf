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

# How the team's own workloads call other teams' hostnames: one policy per
# hostname, for callers in the team's namespace only. It composes with the
# policies other teams (other states) declare on the same hostname: each
# keeps its own routes, and a setting two of them give different values
# for the same requests is a plan error naming both.
resource "mesh_traffic_policy" "calls" {
  for_each    = var.calls
  name        = "${local.name}-to-${replace(each.key, ".", "-")}"
  destination = { virtual_destination = each.key }
  sources     = { namespaces = [var.namespace] }
  timeout     = each.value.timeout
  headers     = length(each.value.request_headers) == 0 ? null : { request = { set = each.value.request_headers } }
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
