# ---------------------------------------------------------------------------
# How traffic behaves. Istio routes at the caller, so these become routes in
# the clusters where the callers run, and only there.
# ---------------------------------------------------------------------------

# account in west sends a fifth of its calls for user to the datacenter
# (keeping it warm for failover) and the rest to east, with a deadline and
# retries on every call.
resource "mesh_traffic_policy" "user_shift" {
  name          = "user-shift"
  destination   = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources       = { clusters = ["west"], namespaces = ["accounts"] }
  timeout       = "2s"
  retries       = { attempts = 3, per_try_timeout = "500ms", retry_on = ["5xx", "connect-failure"] }
  traffic_shift = [{ cluster = "east", weight = 80 }, { cluster = "onprem", weight = 20 }]
}

# Long-lived connections across networks: keepalive keeps them open through
# NATs and load balancers on the way, for every caller of user.
resource "mesh_traffic_policy" "user_connections" {
  name        = "user-connections"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  connection_pool = {
    tcp = { max_connections = 200, connect_timeout = "1s", keepalive = { time = "60s", interval = "10s" } }
  }
}
