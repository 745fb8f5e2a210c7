# A mesh_cluster is imported by its cluster name; its settings are read back
# from the objects it owns in that cluster.
terraform import mesh_cluster.east east
