# With an import block (Terraform 1.5 and later); add
# -generate-config-out=generated.tf to terraform plan to have the
# configuration written for you.
import {
  to = mesh_virtual_destination.user
  id = "user"
}
