// Package oci publishes a cluster's objects as an OCI artifact in Flux's
// format, for clusters delivered by pull: Flux's source-controller pulls
// the artifact and its kustomize-controller applies the manifests it holds.
//
// The files: artifact.go (the artifact's bytes, built deterministically
// from a set of objects, and read back; a Writer's cache of each object's
// YAML between pushes), remote.go (Publish, Head and Fetch
// against a registry, with go-containerregistry), credentials.go (the
// registry credentials of one run: a docker config file, a username and
// password, or a token) and writer.go (one Writer per artifact and
// process: writes to it are serialised, and the changes queued while a
// push is in flight go out together in the next push).
//
// The tests run against go-containerregistry's in-memory registry served
// by net/http/httptest.
package oci
