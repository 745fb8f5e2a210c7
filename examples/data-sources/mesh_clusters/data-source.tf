# Which registered clusters are reachable, and do they serve Istio's APIs?
data "mesh_clusters" "all" {}

output "unreachable" {
  value = [for c in data.mesh_clusters.all.clusters : "${c.name}: ${c.error}" if !c.reachable]
}
