# The account service in the AWS clusters may read users in east, but not
# on-premises; the on-premises account service may call both.
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
