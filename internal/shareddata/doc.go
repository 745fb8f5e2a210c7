// Package shareddata holds the protocols of the data several Terraform
// states share in a cluster, above the generic engine (internal/engine,
// which never imports it): claim.go (workspace claims: which state holds
// a roster's identity, read strictly by format, written and released
// only by the state whose token they hold, in the records namespace or a
// pull cluster's artifact) and records.go (virtual destinations' records
// with their provenance, from the engine's listing of the records
// namespace, or a pull cluster's artifact). Contributions, their verdict
// and the composition of shared objects are still in the engine
// (docs/design.md, "Shared data above the engine").
//
// The unit tests run on client-go's fake dynamic client
// (internal/engine/enginetest) and, for pull clusters, a registry served
// by go-containerregistry.
package shareddata
