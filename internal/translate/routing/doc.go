// Package routing states, in words, where an intent sends requests: for
// each client or source cluster, the clusters a request may reach in
// failover order, the weights of shifts and mirrors, and which callers an
// access policy allows. It is the `routing` attribute of every intent
// resource, so that a plan says what a change does to traffic, and the
// statement Istio's simulation of the translated objects is compared with.
//
// The statement is computed from the intent and the cluster registry
// alone, from the documented meaning of each attribute
// (docs/design/*.md), never from the translators' Istio objects or their
// internal plans: two independent computations of the same promise, one
// of which (the translator's objects, run through istiod) must agree with
// the other. It imports no Terraform and does no I/O.
//
// Each intent has a structured form (Destination, Traffic, Access) that a
// comparison reads, and a Statement: a map from cluster name to one line,
// which is what the plan shows. Summarize (summary.go) gathers the
// statements of several intents by hostname, for the provider function
// routing_summary. The line grammar:
//
//	virtual destination  tier > tier > ...      tier: "east" or "east, west"
//	                                             (equal share) or
//	                                             "east 75%, west 25%"
//	                     + " (ns a, b)" when clients.namespaces restricts it
//	traffic policy       [conditions: ]action; action; ...
//	                     e.g. "ns accounts GET /v2*: east 80%, wine 20%; mirror west 5%; timeout 2s"
//	                     conditions: [ns a,b] [k=v,...] [match | match ...],
//	                     a match: [METHOD] [/prefix* | /exact | ~regex] [headers k=v,...] or "any"
//	access policy        allow ns/sa from c1, c2[; ns/sa from c3]: rule | rule
//	                     e.g. "allow accounts/account from east: GET /users/* port 8080"
package routing
