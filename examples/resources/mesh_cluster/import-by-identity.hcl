# Terraform 1.12 and later: an import block with the resource's identity
# instead of an import id. terraform query (Terraform 1.14) writes such
# blocks for what it lists.
import {
  to = mesh_cluster.east
  identity = {
    name = "east"
  }
}
