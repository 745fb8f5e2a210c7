// Command terraform-provider-mesh serves the mesh provider to Terraform
// (plugin protocol 6).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
	"github.com/mesh-intent/terraform-provider-mesh/internal/provider"
)

// Docs: "make docs" runs tfplugindocs (pinned in tools/docs).

// version is stamped at build: -ldflags "-X main.version=..." by make build,
// make install (the GNUmakefile's VERSION) and goreleaser (the tag). A plain
// go build says "dev".
var version = "dev"

func main() {
	// Exec credential plugins run through this binary, under a deadline.
	if code, ok := kubeclient.RunExecWrapper(os.Args); ok {
		os.Exit(code)
	}
	if self, err := os.Executable(); err == nil {
		kubeclient.ExecWrapper = self
	}
	var debug, showVersion bool
	flag.BoolVar(&debug, "debug", false, "start the provider with support for debuggers like delve")
	flag.BoolVar(&showVersion, "version", false, "print the provider's version and exit")
	flag.Parse()
	if showVersion {
		fmt.Println("terraform-provider-mesh", version)
		return
	}

	quietUnlessAsked()
	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address: "registry.terraform.io/mesh-intent/mesh",
		Debug:   debug,
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}

// quietUnlessAsked turns the plugin SDK's own logging off when the user
// asked Terraform for no logs. The SDK logs at TRACE by default, formatting
// every gRPC call and framework step as JSON that Terraform then parses and
// throws away: about a third of a no-op plan's time at 500 resources
// (docs/performance.md). Any TF_LOG* variable set keeps the default
// behaviour, so TF_LOG=TRACE still shows everything.
func quietUnlessAsked() {
	for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_MUX"} {
		if os.Getenv(v) != "" {
			return
		}
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		_ = os.Setenv(v, "OFF")
	}
}
