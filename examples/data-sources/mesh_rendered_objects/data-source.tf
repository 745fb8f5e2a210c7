# The configuration of a virtual destination, kept in one place so that the
# resource and its rendering use the same values.
locals {
  user = {
    name     = "user"
    hostname = "user.global"
    ports    = [{ number = 8080, protocol = "HTTP" }]
    backends = [
      { cluster = "east", namespace = "users", service = "user", priority = 0 },
      { cluster = "west", namespace = "users", service = "user", priority = 1 },
    ]
  }
}

resource "mesh_virtual_destination" "user" {
  name     = local.user.name
  hostname = local.user.hostname
  ports    = local.user.ports
  backends = local.user.backends
}

# What the virtual destination writes in each cluster, for review: the
# YAML behind every digest of mesh_virtual_destination.user.objects.
data "mesh_rendered_objects" "user" {
  type          = "mesh_virtual_destination"
  configuration = jsonencode(local.user)
}

output "user_objects" {
  value = data.mesh_rendered_objects.user.yaml
}

# One object's YAML, by the key a plan shows for it.
output "user_east_service_entry" {
  value = data.mesh_rendered_objects.user.objects["east/ServiceEntry.networking.istio.io/istio-system/vd-user"]
}
