//go:build tools

// Package opentofu only pins OpenTofu's tofu command for go mod tidy; the
// binary is built with go build github.com/opentofu/opentofu/cmd/tofu.
package opentofu

import _ "github.com/opentofu/opentofu/cmd/tofu"
