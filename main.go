// Command terraform-provider-mesh serves the mesh provider to Terraform
// (plugin protocol 6).
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/mesh-intent/terraform-provider-mesh/internal/provider"
)

// Docs: "make docs" runs tfplugindocs (pinned in tools/docs).

// version is set by goreleaser.
var version = "dev"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "start the provider with support for debuggers like delve")
	flag.Parse()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/mesh-intent/mesh",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}
