// Package trafficpolicy translates mesh_traffic_policy intents: routes
// (match, retries, timeouts, faults, traffic shifts, mirrors, headers,
// CORS) into one VirtualService per destination host and cluster, and
// destination settings (connection pool, load balancer, outlier detection,
// TLS) into its DestinationRule. Several policies on one host compose into
// one object (Compose, ComposeContributions); conflicts are errors that
// name both policies.
package trafficpolicy
