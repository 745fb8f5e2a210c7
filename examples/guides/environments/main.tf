terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
    }
  }
}

# One workspace per environment (terraform workspace select staging, or one
# HCP Terraform workspace each). The clusters are created in this same
# configuration; their outputs reach the mesh provider through this map.
# With EKS, for example:
#   endpoint       = aws_eks_cluster.east.endpoint
#   ca_certificate = base64decode(aws_eks_cluster.east.certificate_authority[0].data)
#   token          = data.aws_eks_cluster_auth.east.token
# Values known only after apply are fine: plan shows the objects of those
# clusters as known after apply, and the same apply writes them.
variable "clusters" {
  description = "The environment's clusters, as the cloud resources that create them output them."
  type = map(object({
    endpoint        = string
    ca_certificate  = string
    token           = string
    network         = string
    region          = string
    gateway_address = string
  }))
}

provider "mesh" {
  clusters = {
    for name, c in var.clusters : name => {
      kubernetes = {
        host                   = c.endpoint
        cluster_ca_certificate = c.ca_certificate
        token                  = c.token
      }
      network           = c.network
      region            = c.region
      trust_domain      = "${name}.${terraform.workspace}.mesh"
      labels            = { env = terraform.workspace }
      east_west_gateway = { address = c.gateway_address }
    }
  }
}

resource "mesh_cluster" "all" {
  for_each         = var.clusters
  name             = each.key
  mtls_mode        = "STRICT"
  expose_east_west = true
  default_deny     = terraform.workspace == "prod"
}

# The same intent in every environment; only the clusters differ.
resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    for i, name in sort(keys(var.clusters)) : {
      cluster   = name
      namespace = "users"
      service   = "user"
      priority  = i
    }
  ]
  # The clusters must exist (and be configured) before their objects.
  depends_on = [mesh_cluster.all]
}
