//go:build tools

// Package docs pins tfplugindocs, which generates docs/ from the provider
// schema, templates/ and examples/. A module of its own keeps its
// dependencies out of the provider's go.mod.
package docs

import _ "github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs"
