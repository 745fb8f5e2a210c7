# Terraform 1.12 and later: an import block with the resource's identity
# instead of an import id. terraform query (Terraform 1.14) writes such
# blocks for what it lists.
import {
  to = mesh_virtual_destination.user
  identity = {
    name = "user"
  }
}

# When the clusters hold objects of several instances of that name (two
# states wrote it, or a replaced resource left its objects), name the
# instance to import: an import by name alone is refused then.
# import {
#   to = mesh_virtual_destination.user
#   identity = {
#     name = "user"
#     id   = "9f3c2a1b7e6d5c4f"
#   }
# }
