//go:build tools

// Package apiserver pins the kube-apiserver used by the local mesh. It is a
// module of its own so the provider's go.mod never depends on k8s.io/kubernetes.
package apiserver

import _ "k8s.io/kubernetes/cmd/kube-apiserver"
