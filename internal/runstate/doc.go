// Package runstate holds the run-scoped state of the provider: the
// in-memory indexes that one plan or apply builds as Terraform plans its
// resources, and that the intents planned later in the same run read.
// The provider makes one of each per run, where it is configured, and
// hands them to every resource:
//
//   - DestinationIndex: the virtual destinations planned in this run, by
//     hostname and VIP, which policies read instead of the clusters'
//     records;
//   - TrafficPolicyIndex: the traffic policies planned in this run, by
//     destination, checked against each other;
//   - WorkspaceRoster: what this run's mesh_workspace lists and the policy
//     instances the run holds;
//   - PlannedObjects: which intent planned each object, so that two
//     intents writing one object fail at plan, and which intent first
//     named each hand-written object it adopts, so that the plan's
//     adoption warning names it once.
//
// Every type is safe for concurrent use (Terraform plans resources in
// parallel) and its zero value is ready to use. They hold translator and
// engine values only; none of them knows Terraform.
package runstate
