# The provider's source address and the versions this configuration accepts
# (0.1.0 and later 0.x releases).
terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source  = "mesh-intent/mesh"
      version = "~> 0.1.0"
    }
  }
}
