# user.global is served from east first and from the on-premises cluster when
# east fails. Clients in the AWS clusters never fail over to on-premises.
resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    {
      cluster     = "onprem"
      namespace   = "users"
      service     = "user"
      priority    = 1
      exclude_for = { cluster_selector = { cloud = "aws" } }
    },
  ]
  failover = {
    mode              = "priority"
    outlier_detection = { consecutive_5xx_errors = 5, interval = "10s", base_ejection_time = "30s" }
  }
  # ServiceEntries go only where callers run.
  clients = { cluster_selector = { env = "prod" }, namespaces = ["accounts"] }
}
