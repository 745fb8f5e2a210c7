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

# In east, a hand-written VirtualService users/user-routes (a 2s timeout)
# and DestinationRule users/user-dr serve user.global. These two intents
# say the same; with adopt_existing, the apply writes their objects and
# then deletes the hand-written two.
resource "mesh_virtual_destination" "user" {
  name           = "user"
  hostname       = "user.global"
  ports          = [{ number = 8080, protocol = "HTTP" }]
  backends       = [{ cluster = "east", namespace = "users", service = "user" }]
  adopt_existing = true
}

resource "mesh_traffic_policy" "user" {
  name           = "user-timeout"
  destination    = { virtual_destination = mesh_virtual_destination.user.hostname }
  timeout        = "2s"
  adopt_existing = true
}

import {
  to = mesh_virtual_destination.user
  id = "adopt:user"
}

import {
  to = mesh_traffic_policy.user
  id = "adopt:user-timeout"
}
