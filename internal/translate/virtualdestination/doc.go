// Package virtualdestination translates a mesh_virtual_destination intent:
// a global hostname backed by services in several clusters becomes, in
// every client cluster, a ServiceEntry for the hostname and per-backend-
// cluster hosts, and DestinationRules that order failover by priority or
// locality; backend clusters get what the east-west gateway needs to pass
// the traffic in. PlanReach exposes the plan other intents depend on.
package virtualdestination
