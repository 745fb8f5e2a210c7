// Package translate turns mesh intent into per-cluster Istio objects.
//
// It is a pure function of its inputs: no I/O, no Terraform and no
// Kubernetes client types, and the same input always yields the same output
// (objects sorted, names derived from intent names). Plan and apply both
// call it, so determinism is what keeps Terraform plans stable.
//
// Every intent has one entry point (TranslateCluster, ...), which calls one
// small builder per Istio kind it emits. Topology facts that are not known
// yet (a cluster created in the same apply) are carried as Unknown
// placeholders; the engine marks every object that contains one as "known
// after apply".
package translate
