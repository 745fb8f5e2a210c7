// Package flux holds what pull delivery needs to know about Flux's own
// objects, as pure functions: no client, no registry, no Terraform.
//
//   - bootstrap.go: the objects a cluster admin applies once per cluster and
//     state (an OCIRepository pointing at the state's artifact for that
//     cluster and a Kustomization with prune that applies it), rendered as
//     YAML;
//   - status.go: a Kustomization's status read back (the revision it
//     applied and attempted, its Ready condition, its inventory as object
//     keys), for refresh and plan warnings.
//
// The artifact itself (media types, layout, publishing) is
// internal/delivery/oci's.
package flux
