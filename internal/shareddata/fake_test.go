package shareddata

import (
	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
)

// The composition's unit tests run an engine on client-go's fake dynamic
// client (enginetest), with the composition registered as the provider
// registers it; pull clusters publish to go-containerregistry's in-memory
// registry (newPullRegistry).

// newEngine is an engine over one writing fake cluster per name, with
// the composition of shared objects registered.
func newEngine(clusters ...string) (*engine.Engine, enginetest.Clusters) {
	e, fc := enginetest.NewEngine(clusters...)
	e.Shared = Compositions{}
	return e, fc
}

// newPullEngine is newEngine with east pushed (a fake cluster) and onprem
// pulling target, its API server unreachable.
func newPullEngine(target oci.Target) (*engine.Engine, enginetest.Clusters) {
	e, fc := newEngine("east")
	e.Delivery = onPull{target}
	return e, fc
}
