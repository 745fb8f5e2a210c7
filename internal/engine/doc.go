// Package engine writes translated Istio objects to clusters and keeps the
// inventory of what each intent owns.
//
// One file per phase: plan.go (desired objects to inventory entries, no
// cluster contact), apply.go (server-side apply, then prune; Delete is an
// apply of nothing), outage.go (a cluster that cannot be reached, where
// nothing changes, is a warning, not a failure), preflight.go (namespaces
// that do not exist, found by a dry-run apply before anything is
// written), foreign_routes.go (hand-written VirtualServices and
// DestinationRules on an intent's host, for a plan warning),
// adopt_routes.go (those adopt_existing takes over: which it can carry,
// and their delete once the intent's own are written), adopt_content.go
// (what a hand-written one says that the intent's objects would not),
// services.go
// (backend Services that do not exist, for a plan warning), read.go
// (refresh: list what each intent owns and
// digest the fields it owns), shared.go (Shared: the composition of
// objects several intents share, which the engine asks for and the
// provider registers, internal/shareddata's Compositions; nil refuses
// composed intents), composed_write.go (the server-side apply of a
// composed object: created, applied pinned,
// former composers released, contributions forgotten, others' spec
// fields removed),
// with engine.go (the Engine and its clients), inventory.go (owners,
// labels, entries, the kinds we write, and the composition vocabulary
// the engine keeps: Composition, LiveContribution, ContributionKey),
// listcache.go (one LIST per cluster and kind per process), digest.go
// (digests of the fields a manager owns, a contribution's digest, and
// the composed state the listing reads),
// canonical.go (the canonical JSON a digest hashes, written directly),
// managers.go (field managers: whose fields an apply may take over),
// drift.go (fields other managers set on our objects),
// limits.go (the API server's limits, checked at plan), sink.go (pull
// clusters: their objects published in an OCI artifact instead of applied,
// and read back from it),
// sink_compose.go (what composing on pull clusters reads: the other tags of the
// cluster's repository, and the warnings of checks that could not look),
// sink_flux.go (objects a Flux Kustomization applies, refused on push
// clusters), search.go (the reads import needs), exports.go (what the
// shared-data protocols above the engine, internal/shareddata, use of
// it: claims, records, and the composition of shared objects), retry.go (retries of writes that lost a race,
// with backoff), log.go (DEBUG logs of each decision) and
// errors.go (API errors turned into messages that name the cluster, the
// object and the fix, with kubectl hints rendered for the cluster by
// kubeclient). The intent kinds (owner kinds and the Kubernetes
// kinds each writes) are described in internal/intentkind.
//
// The unit tests run on client-go's fake dynamic client (fake_test.go);
// those of the composition run in internal/shareddata, on the same fake
// (enginetest);
// the acceptance tests of internal/provider run on real API servers.
package engine
