# The one-backend change of the reviewing-plans guide: ledger.global is
# served from east first, then west, then the datacenter. The change removes
# the datacenter's backend (the commented line), and the plan says, for each
# client cluster, "east > west > onprem" -> "east > west".
terraform {
  required_providers {
    mesh = { source = "mesh-intent/mesh" }
  }
}

resource "mesh_virtual_destination" "ledger" {
  name     = "ledger"
  hostname = "ledger.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "ledger", service = "ledger", priority = 0 },
    { cluster = "west", namespace = "ledger", service = "ledger", priority = 1 },
    # { cluster = "onprem", namespace = "ledger", service = "ledger", priority = 2 },
  ]
}
