// Package simulation asks Istio's own xDS generation what the translator's
// golden objects do. Each virtual destination golden case is loaded, cluster
// by cluster, into a fake istiod (pilot/test/xds) configured as one cluster
// of a multi-network mesh whose istiod knows every network's east-west
// gateway; what a sidecar in each client cluster receives is read back as a
// traffic table: where a request for the hostname goes, in which priority
// order, with which weights and SNI, and whether each remote east-west
// gateway has a filter chain for that SNI. The tables are checked in next to
// the golden files (<case>.traffic.txt) and compared; the test also states,
// from the intent alone, the order Istio must produce.
//
// This package lives in the tools/istio module so that istio.io/istio never
// enters the provider's go.mod; it reads the golden files as YAML.
package simulation
