// Package engine writes translated Istio objects to clusters and keeps the
// inventory of what each intent owns.
//
// One file per phase: plan.go (desired objects to inventory entries, no
// cluster contact), apply.go (server-side apply, then prune), read.go
// (refresh: list what each intent owns and digest the fields it owns),
// delete.go (destroy), and errors.go (API errors turned into messages that
// name the cluster, the object and the fix).
package engine
