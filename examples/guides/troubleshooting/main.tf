terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source  = "mesh-intent/mesh"
      version = "~> 0.1.0"
    }
  }
}

provider "mesh" {
  clusters = {
    east = {
      # The kubectl commands that errors suggest for east carry this
      # kubeconfig and context: --kubeconfig ~/.kube/config --context east
      # (the path written out in full).
      kubernetes = { config_path = "~/.kube/config", config_context = "east" }
      network    = "net-east"
    }
  }
  # One request to a cluster may take this long; a cluster that does not
  # answer within it once is not asked again in the same command.
  request_timeout = "30s"
}
