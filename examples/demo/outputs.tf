output "virtual_ips" {
  description = "The stable virtual IP each global hostname has in every client cluster."
  value = {
    (mesh_virtual_destination.user.hostname)   = mesh_virtual_destination.user.vip
    (mesh_virtual_destination.ledger.hostname) = mesh_virtual_destination.ledger.vip
  }
}

output "objects_per_cluster" {
  description = "How many Istio objects the intent above owns in each cluster."
  value = {
    for c in ["east", "west", "onprem"] : c => length([
      for o in concat(
        mesh_cluster.east.objects, mesh_cluster.west.objects, mesh_cluster.onprem.objects,
        mesh_virtual_destination.user.objects, mesh_virtual_destination.ledger.objects,
        mesh_access_policy.account_to_user.objects, mesh_access_policy.user_to_ledger.objects,
      ) : o if o.cluster == c
    ])
  }
}
