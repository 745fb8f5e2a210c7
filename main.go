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

// Run "go generate" to format example Terraform files and generate the docs
// for the registry and website.
//go:generate terraform fmt -recursive ./examples/
//go:generate go run github.com/hashicorp/terraform-plugin-docs/cmd/tfplugindocs generate -provider-name mesh

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
