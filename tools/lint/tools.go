//go:build tools

// Package lint pins the linters that make lint runs: staticcheck and
// goimports. A module of its own keeps their dependencies out of the
// provider's go.mod.
package lint

import (
	_ "golang.org/x/tools/cmd/goimports"
	_ "honnef.co/go/tools/cmd/staticcheck"
)
