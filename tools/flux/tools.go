//go:build tools

// Package flux pins Flux's source-controller and kustomize-controller, which
// the local mesh runs as local processes for pull delivery (issue 35). It is
// a module of its own so the provider's go.mod never depends on Flux's
// dependency tree. tools/build-binaries.sh builds both commands:
//
//	go -C tools/flux build github.com/fluxcd/source-controller
//	go -C tools/flux build github.com/fluxcd/kustomize-controller
package flux

import (
	_ "github.com/fluxcd/kustomize-controller"
	_ "github.com/fluxcd/source-controller"
)
