# The demo: a company runs the same mesh on two public clouds and one
# datacenter, and writes down what its traffic may do, once, as intent.
#
#   east    AWS, us-east-1   runs account and the primary copy of user
#   west    GCP, us-west-2   runs account
#   onprem  datacenter dc1   runs the standby copy of user, and ledger
#
# The services themselves are not part of the demo (the local clusters are
# bare API servers); what it shows is the Istio configuration each cluster
# needs so that:
#
#   1. account reaches user at user.global. east's copy of user serves it;
#      when that copy fails, calls move to the datacenter. The datacenter
#      is the only fallback: no public cloud is ever a standby for user.
#   2. AWS is not allowed to talk to the datacenter: account in east may
#      call user in east, and only there. Routing leaves the datacenter out
#      for east's callers, and the datacenter refuses east's identity anyway.
#   3. A cluster learns a global name only if something in it calls the
#      name: west never hears of ledger.global, and onprem, which calls
#      nothing, gets only what its gateway needs to accept calls.
#
# `make demo` applies this to three local API servers and prints, per
# cluster, the objects it produced. The namespaces the backends live in
# (users, ledger) must exist in the clusters; make demo creates them.

terraform {
  required_version = ">= 1.5"
  required_providers {
    mesh = {
      source = "mesh-intent/mesh"
    }
  }
}

# The registry: how to reach each cluster (read on every run, never stored)
# and the facts that shape the translation: the network a cluster is on, its
# SPIFFE trust domain, where it is, and the labels placements select on.
provider "mesh" {
  clusters = {
    east = {
      kubernetes        = { config_path = var.kubeconfig, config_context = "east" }
      network           = "net-east"
      region            = "us-east-1"
      zone              = "us-east-1a"
      trust_domain      = "east.mesh"
      labels            = { cloud = "aws", env = "prod" }
      east_west_gateway = { address = "203.0.113.10", port = 15443 }
    }
    west = {
      kubernetes        = { config_path = var.kubeconfig, config_context = "west" }
      network           = "net-west"
      region            = "us-west-2"
      zone              = "us-west-2b"
      trust_domain      = "west.mesh"
      labels            = { cloud = "gcp", env = "prod" }
      east_west_gateway = { address = "203.0.113.20", port = 15443 }
    }
    onprem = {
      kubernetes   = { config_path = var.kubeconfig, config_context = "onprem" }
      network      = "net-onprem"
      region       = "dc1"
      trust_domain = "onprem.mesh"
      labels       = { cloud = "onprem", env = "prod" }
      # The datacenter's gateway is published under a DNS name, not an IP.
      east_west_gateway = { address = "ew.dc1.example.com", port = 15443 }
    }
  }
}

# ---------------------------------------------------------------------------
# Joining the mesh. Every cluster speaks mutual TLS only. The clusters that
# serve other networks (east and onprem run user and ledger) open their
# east-west gateway to mesh traffic and deny whatever no access policy
# allows. west only makes calls out: it exposes nothing and keeps Istio's
# default of allowing any request.
# ---------------------------------------------------------------------------

resource "mesh_cluster" "east" {
  name             = "east"
  mtls_mode        = "STRICT"
  expose_east_west = true
  default_deny     = true
}

resource "mesh_cluster" "west" {
  name      = "west"
  mtls_mode = "STRICT"
}

resource "mesh_cluster" "onprem" {
  name             = "onprem"
  mtls_mode        = "STRICT"
  expose_east_west = true
  default_deny     = true
}

# ---------------------------------------------------------------------------
# user.global: one name for user, wherever it runs.
#
# Callers are the account pods (namespace accounts), which run in the two
# public clouds, so only east and west get a ServiceEntry for the name. The
# backends are tried in priority order: east first, the datacenter when
# east's copy is ejected by outlier detection.
#
# The datacenter backend is excluded for AWS callers: for account in east
# the name resolves to east's copy alone, and if that fails the call fails
# rather than crossing into dc1. account in west goes to east, then dc1.
# ---------------------------------------------------------------------------

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
    mode = "priority"
    # Five 5xx in a row take a backend out for at least 30s; that is what
    # moves traffic to the next priority.
    outlier_detection = { consecutive_5xx_errors = 5, interval = "10s", base_ejection_time = "30s" }
  }

  clients = { clusters = ["east", "west"], namespaces = ["accounts"] }
}

# ledger.global: the system of record stays in the datacenter. Only user's
# copy in AWS calls it by this name (user on-prem talks to it locally), so
# only east learns the name; onprem gets what its gateway needs to accept the
# calls, and west gets nothing at all.
resource "mesh_virtual_destination" "ledger" {
  name     = "ledger"
  hostname = "ledger.global"
  ports    = [{ number = 9090, protocol = "GRPC" }]
  backends = [{ cluster = "onprem", namespace = "ledger", service = "ledger" }]
  clients  = { cluster_selector = { cloud = "aws" }, namespaces = ["users"] }
}

# ---------------------------------------------------------------------------
# Who may call what. Istio checks identities where the request arrives, so
# these become AuthorizationPolicies in the clusters that run the backends,
# and the same intent yields different principals in each: east admits
# account from east.mesh and west.mesh, onprem admits account from west.mesh
# only.
# ---------------------------------------------------------------------------

resource "mesh_access_policy" "account_to_user" {
  name        = "account-to-user"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }

  sources = [
    # account on AWS: user in east, never the datacenter.
    {
      cluster_selector     = { cloud = "aws" }
      namespace            = "accounts"
      service_account      = "account"
      destination_clusters = { clusters = ["east"] }
    },
    # account on GCP: wherever user runs, so its failover can land on-prem.
    { cluster_selector = { cloud = "gcp" }, namespace = "accounts", service_account = "account" },
  ]

  rules = [{ methods = ["GET", "POST"], paths = ["/users/*"], ports = [8080] }]
}

resource "mesh_access_policy" "user_to_ledger" {
  name        = "user-to-ledger"
  destination = { virtual_destination = mesh_virtual_destination.ledger.hostname }
  sources     = [{ clusters = ["east"], namespace = "users", service_account = "user" }]
}
