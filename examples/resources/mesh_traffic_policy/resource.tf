resource "mesh_virtual_destination" "bar" {
  name     = "bar"
  hostname = "bar.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "bar", service = "bar", priority = 0 },
    { cluster = "west", namespace = "bar", service = "bar", priority = 0 },
    { cluster = "onprem", namespace = "bar", service = "bar", priority = 0 },
  ]
}

# Callers in the AWS clusters send 20% of their traffic for bar to the
# on-premises cluster and keep the rest in their own cluster, with a
# timeout and retries for every request.
resource "mesh_traffic_policy" "bar_shift" {
  name          = "bar-shift"
  destination   = { virtual_destination = mesh_virtual_destination.bar.hostname }
  sources       = { cluster_selector = { cloud = "aws" } }
  timeout       = "2s"
  retries       = { attempts = 3, per_try_timeout = "500ms", retry_on = ["5xx", "connect-failure"] }
  traffic_shift = [{ local = true, weight = 80 }, { cluster = "onprem", weight = 20 }]
}

# A resilience drill on bar: the accounts team's canary pods (labelled
# track = canary) in the AWS clusters wait one more second on one in ten
# of their GET requests under /v2 that carry x-drill = true. Every other
# request only gets bar-shift's routing: the two policies compose.
resource "mesh_traffic_policy" "bar_drill" {
  name        = "bar-drill"
  destination = { virtual_destination = mesh_virtual_destination.bar.hostname }
  sources = {
    cluster_selector = { cloud = "aws" }
    namespaces       = ["accounts"]
    workload_labels  = { track = "canary" }
  }
  match = [{ method = "GET", uri_prefix = "/v2", headers = { "x-drill" = "true" } }]
  fault = { delay = { percent = 10, fixed_delay = "1s" } }
}

# Connection settings for everyone calling bar across clusters: TCP
# keepalive keeps long-lived connections alive through NATs and load
# balancers between networks.
resource "mesh_traffic_policy" "bar_connections" {
  name        = "bar-connections"
  destination = { virtual_destination = mesh_virtual_destination.bar.hostname }
  connection_pool = {
    tcp  = { max_connections = 100, connect_timeout = "1s", keepalive = { time = "60s", interval = "10s" } }
    http = { max_requests_per_connection = 10 }
  }
  load_balancer = "LEAST_REQUEST"
}
