// Package shareddata holds the protocols of the data several Terraform
// states share in a cluster, above the generic engine (internal/engine,
// which never imports it): claim.go (workspace claims: which state holds
// a roster's identity, read strictly by format, written and released
// only by the state whose token they hold, in the records namespace or a
// pull cluster's artifact) and records.go (virtual destinations' records
// with their provenance, from the engine's listing of the records
// namespace, or a pull cluster's artifact); and the composition of the
// objects several intents share (docs/design.md, "Shared data above the
// engine"): contributions.go (the contributions a shared object holds,
// read from the engine's listings or a pull cluster's artifact),
// verdict.go (the one verdict on each contribution: plan, apply, refresh
// and the roster ask it), compose.go (a composed object written by
// server-side apply through the engine, with every contribution it
// keeps), pull_compose.go (composed objects on pull clusters: composed in
// the artifact, another state's refused) and compositions.go
// (Compositions: all of it as the engine's Shared hook, which the
// provider registers).
//
// The unit tests run on client-go's fake dynamic client
// (internal/engine/enginetest) and, for pull clusters, a registry served
// by go-containerregistry.
package shareddata
