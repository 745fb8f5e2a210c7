output "hostname" {
  description = "The global hostname callers use."
  value       = mesh_virtual_destination.service.hostname
}

output "objects" {
  description = "Number of Istio objects the team's intents own, across clusters."
  value = (length(mesh_virtual_destination.service.objects) + length(mesh_traffic_policy.service.objects) +
  length(mesh_access_policy.service.objects) + sum(concat([0], [for p in mesh_traffic_policy.calls : length(p.objects)])))
}

output "traffic_policies" {
  description = "Names of the team's traffic policies, for the workspace's mesh_workspace roster."
  value       = concat([mesh_traffic_policy.service.name], [for p in mesh_traffic_policy.calls : p.name])
}
