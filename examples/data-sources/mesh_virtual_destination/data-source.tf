# A team attaches its policies to a virtual destination that the platform
# team owns in another Terraform state.
data "mesh_virtual_destination" "user" {
  hostname = "user.global"
}

resource "mesh_access_policy" "account_to_user" {
  name        = "account-to-user"
  destination = { virtual_destination = data.mesh_virtual_destination.user.hostname }
  sources     = [{ namespace = "accounts", service_account = "account" }]
}
