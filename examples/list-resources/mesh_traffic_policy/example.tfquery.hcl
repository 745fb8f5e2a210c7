# Terraform 1.14 and later, in a .tfquery.hcl file next to the
# configuration (which declares the provider and its clusters):
#   terraform query                                  lists what the clusters hold
#   terraform query -generate-config-out=generated.tf writes a resource and
#                                                    an import block for each
list "mesh_traffic_policy" "on_user" {
  provider         = mesh
  include_resource = true
  config {
    hostname = "user.global"
  }
}
