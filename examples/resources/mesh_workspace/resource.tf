resource "mesh_virtual_destination" "bar" {
  name     = "bar"
  hostname = "bar.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [{ cluster = "east", namespace = "bar", service = "bar" }]
}

# Two policies on one hostname, for different requests: the API answers
# within 2s, reports may take 10s.
resource "mesh_traffic_policy" "bar" {
  for_each    = { api = "2s", reports = "10s" }
  name        = "bar-${each.key}"
  destination = { virtual_destination = mesh_virtual_destination.bar.hostname }
  match       = [{ uri_prefix = "/${each.key}" }]
  timeout     = each.value
}

# The roster of this state: every traffic policy it holds. A contribution
# of a policy instance this state held that is no longer listed here is an
# orphan: the plan lists it under orphans and the apply releases it. The
# roster claims its identity (id: the provider's workspace when set, else
# minted) in every registered cluster.
resource "mesh_workspace" "this" {
  traffic_policies = [for p in mesh_traffic_policy.bar : p.name]
}
