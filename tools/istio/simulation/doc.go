// Package simulation asks Istio's own xDS generation what the translator's
// objects do. Each golden case's intent is translated live by the
// provider's translator (internal/oracle), and loaded, cluster by cluster, into a
// fake istiod (pilot/test/xds, pilot/pkg/simulation) configured as one
// cluster of a multi-network mesh whose istiod knows every network's
// east-west gateway (the mesh networks arrive after start and force a push,
// as a live istiod reloads them), with Istio's own cross-network-gateway
// beside the provider's Gateway. What the proxies receive is read back as
// a traffic table, checked in next to the golden file (<case>.traffic.txt):
//
//   - virtual destinations: per client cluster, where a request for the
//     hostname (and for each backend cluster's own host) goes, by Envoy
//     priority, with the SNI sent; per remote east-west gateway, what it
//     does with each SNI a client sends;
//   - traffic policies: per source cluster, each route's weighted Envoy
//     clusters, mirror, timeout and retries, and a service's cluster
//     subsets by Envoy priority;
//   - access policies and default_deny: Envoy's RBAC decision, from the
//     filters istiod generates, per caller and request.
//
// Besides comparing the tables, the tests state from the intent alone what
// Istio must do (client clusters, failover order by priority or locality
// after exclusions, endpoint ports and weights, exportTo isolation of the
// hostname and its per-cluster hosts, shift weights, mirrors, timeouts,
// retries, match conditions, workload_labels and source namespaces, the
// RBAC decision for every source, non-source trust domain, intruder and
// every method, path and port of every rule, ingress and exempt workloads
// open), so a
// changed table that breaks a promise fails even after -update, and a
// translator mutation fails with the client's requests Istio sends where
// and what the intent says. docs/testing.md says what this proves and what
// it does not (no Envoy: no ejection, no overprovisioning).
//
// The package lives in the tools/istio module, so that istio.io/istio never
// enters the provider's go.mod; that module requires the provider's
// (replaced by ../..) for its translator.
package simulation
