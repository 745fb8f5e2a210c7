// Package engine writes translated Istio objects to clusters and keeps the
// inventory of what each intent owns.
//
// One file per phase: plan.go (desired objects to inventory entries, no
// cluster contact), apply.go (server-side apply, then prune; Delete is an
// apply of nothing), read.go (refresh: list what each intent owns and
// digest the fields it owns), compose.go (objects several intents share),
// with inventory.go (owners, labels, entries, the kinds we write),
// listcache.go (one LIST per cluster and kind per process), digest.go
// (digests of the fields a manager owns) and errors.go (API errors turned
// into messages that name the cluster, the object and the fix).
//
// The unit tests run on client-go's fake dynamic client (fake_test.go);
// the acceptance tests of internal/provider run on real API servers.
package engine
