# Terraform 1.14 and later, in a .tfquery.hcl file next to the
# configuration (which declares the provider and its clusters):
#   terraform query                                  lists what the clusters hold
#   terraform query -generate-config-out=generated.tf writes a resource and
#                                                    an import block for each
list "mesh_access_policy" "in_onprem" {
  provider         = mesh
  include_resource = true
  config {
    cluster = "onprem"
  }
}
