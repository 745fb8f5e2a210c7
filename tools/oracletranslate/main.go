// Command oracletranslate answers one request of Istio's oracles
// (internal/oraclecall) from its standard input: the translator's objects
// or the routing statement of a case. tools/mutate builds it with a
// mutation's overlay and hands it to the simulation's prebuilt test
// binary (MESH_ORACLE_TRANSLATOR), so that a translator mutation does not
// relink istiod.
package main

import (
	"fmt"
	"os"

	"github.com/mesh-intent/terraform-provider-mesh/internal/oraclecall"
)

func main() {
	if err := oraclecall.Serve(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "oracletranslate:", err)
		os.Exit(1)
	}
}
