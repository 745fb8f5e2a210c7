# east joins the mesh: its services are reachable from other networks
# through its east-west gateway, mTLS is strict, and nothing is allowed
# that no mesh_access_policy allows, except the public entry points: the
# ingress gateways stay open to every caller.
resource "mesh_cluster" "east" {
  name             = "east"
  istio_namespace  = "istio-system"
  mtls_mode        = "STRICT"
  default_deny     = true
  expose_east_west = true
  default_deny_exempt = [
    { istio = "ingressgateway" },
    { istio = "ingressgateway-partners" },
  ]
}
