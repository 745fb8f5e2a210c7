# Provider functions need Terraform 1.8 (OpenTofu 1.7) and the provider
# named in required_providers.
terraform {
  required_version = ">= 1.8"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
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

resource "mesh_traffic_policy" "user_shift" {
  name          = "user-shift"
  destination   = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources       = { clusters = ["east", "onprem"] }
  timeout       = "2s"
  traffic_shift = [{ local = true, weight = 80 }, { cluster = "onprem", weight = 20 }]
}

resource "mesh_access_policy" "account_to_user" {
  name        = "account-to-user"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = [{ namespace = "accounts", service_account = "account" }]
  rules       = [{ methods = ["GET"], paths = ["/users/*"], ports = [8080] }]
}

# The routing of user.global in one place: failover order, traffic shift
# and who may call, per cluster, from the intents' own routing statements.
# terraform plan prints it under "Changes to Outputs": a change to any of
# the three intents shows as a changed line of its host.
output "routing" {
  value = provider::mesh::routing_summary(
    [mesh_virtual_destination.user],
    [mesh_traffic_policy.user_shift],
    [mesh_access_policy.account_to_user],
  )
}
