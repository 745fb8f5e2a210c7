resource "mesh_virtual_destination" "bar" {
  name     = "bar"
  hostname = "bar.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [{ cluster = "east", namespace = "bar", service = "bar" }]
}

resource "mesh_traffic_policy" "bar" {
  for_each    = { shift = "2s", slow = "10s" }
  name        = "bar-${each.key}"
  destination = { virtual_destination = mesh_virtual_destination.bar.hostname }
  timeout     = each.value
}

# The roster of this state's workspace (the provider's workspace setting):
# every traffic policy it holds. A contribution of this workspace on a
# shared VirtualService or DestinationRule that names no policy listed here
# is an orphan: the plan lists it under orphans and the apply releases it.
resource "mesh_workspace" "this" {
  traffic_policies = [for p in mesh_traffic_policy.bar : p.name]
}
