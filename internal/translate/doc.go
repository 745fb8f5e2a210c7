// Package translate is the shared core of the translation from mesh intent
// to per-cluster Istio objects: the Object and its Key, the cluster
// Registry, attribute Paths and Errors, and validators every intent uses;
// and Contents, which numbers objects by content so that engine.Plan
// renders what several clusters get alike once.
//
// Each intent translates in a package of its own, which depends on this
// one and never the other way round:
//
//	cluster             mesh_cluster              -> Gateway, PeerAuthentication, AuthorizationPolicy
//	virtualdestination  mesh_virtual_destination  -> ServiceEntry, DestinationRule
//	trafficpolicy       mesh_traffic_policy       -> VirtualService, DestinationRule (uses virtualdestination.PlanReach)
//	accesspolicy        mesh_access_policy        -> AuthorizationPolicy
//
// Beside them, composition is the typed interface between the intents
// whose objects are shared (traffic policies) and the engine that writes
// those objects; trafficpolicy implements it. It sits here, with the
// translator it serves, so that no package outside translate is both
// imported by a translator and importing translate.
//
// Every package has one entry point, Translate, which calls one small
// builder per Istio kind it emits. Translation is a pure function of its
// inputs: no I/O, no Terraform and no Kubernetes client types, and the same
// input always yields the same output (objects sorted, names derived from
// intent names). Plan and apply both call it, so determinism is what keeps
// Terraform plans stable. Topology facts that are not known yet (a cluster
// created in the same apply) are carried as Unknown placeholders; the
// engine marks every object that contains one as "known after apply".
package translate
