output "virtual_ips" {
  description = "The stable virtual IP each global hostname has in every client cluster."
  value = {
    (mesh_virtual_destination.user.hostname)   = mesh_virtual_destination.user.vip
    (mesh_virtual_destination.ledger.hostname) = mesh_virtual_destination.ledger.vip
  }
}

output "objects_per_cluster" {
  description = "How many Istio objects the intent above owns in each cluster (objects is keyed <cluster>/<Kind>.<group>/<namespace>/<name>)."
  value = {
    for c in ["east", "west", "onprem"] : c => length([
      for key in concat(
        keys(mesh_cluster.east.objects), keys(mesh_cluster.west.objects), keys(mesh_cluster.onprem.objects),
        keys(mesh_virtual_destination.user.objects), keys(mesh_virtual_destination.ledger.objects),
        keys(mesh_access_policy.account_to_user.objects), keys(mesh_access_policy.user_to_ledger.objects),
      ) : key if startswith(key, "${c}/")
    ])
  }
}
