resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "onprem", namespace = "users", service = "user", priority = 1 },
  ]
}

# The account service in the AWS clusters may read users in east, but not
# on-premises; the on-premises account service may call both. Enforced where
# user runs, with principals from each source cluster's trust domain.
resource "mesh_access_policy" "account_to_user" {
  name        = "account-to-user"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources = [
    {
      cluster_selector     = { cloud = "aws" }
      namespace            = "accounts"
      service_account      = "account"
      destination_clusters = { clusters = ["east"] }
    },
    { clusters = ["onprem"], namespace = "accounts", service_account = "account" },
  ]
  rules = [{ methods = ["GET"], paths = ["/users/*"], ports = [8080] }]
}
