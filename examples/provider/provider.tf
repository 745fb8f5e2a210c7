# The provider block is the cluster registry: how to reach each cluster
# (evaluated on every run, never stored in state) and the topology the
# translator needs.
provider "mesh" {
  clusters = {
    # A kubeconfig context.
    east = {
      kubernetes = {
        config_path    = "~/.kube/config"
        config_context = "east"
      }
      network      = "net-east"
      region       = "us-east-1"
      zone         = "us-east-1a"
      trust_domain = "east.mesh"
      labels       = { cloud = "aws", env = "prod" }
      east_west_gateway = {
        address = "203.0.113.10"
        port    = 15443
      }
    }

    # An EKS cluster with short-lived tokens from the AWS CLI.
    west = {
      kubernetes = {
        host                   = "https://ABCDEF.gr7.us-west-2.eks.amazonaws.com"
        cluster_ca_certificate = file("${path.module}/west-ca.pem")
        exec = {
          api_version = "client.authentication.k8s.io/v1beta1"
          command     = "aws"
          args        = ["eks", "get-token", "--cluster-name", "west"]
        }
      }
      network      = "net-west"
      region       = "us-west-2"
      trust_domain = "west.mesh"
      labels       = { cloud = "aws", env = "prod" }
      east_west_gateway = {
        address = "198.51.100.20"
      }
    }

    # An on-premises cluster reached with a service account token.
    onprem = {
      kubernetes = {
        host                   = "https://k8s.dc1.example.com:6443"
        token                  = var.onprem_token
        cluster_ca_certificate = file("${path.module}/onprem-ca.pem")
      }
      network      = "net-onprem"
      region       = "dc1"
      trust_domain = "onprem.mesh"
      # Still on the previous Istio minor: plan refuses shapes that
      # version cannot take (istio_version defaults to the newest).
      istio_version = "1.30"
      labels        = { cloud = "onprem", env = "prod" }
      east_west_gateway = {
        address = "ew.dc1.example.com"
      }
    }
  }

  # A cluster that was decommissioned together with its objects: state
  # forgets what intents still listed there, with a warning, without
  # contacting it.
  retired_clusters = ["eu-legacy"]
}

variable "onprem_token" {
  type      = string
  sensitive = true
}
