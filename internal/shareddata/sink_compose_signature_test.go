package shareddata

import (
	"context"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
)

// The other tags of a pull cluster's repository are read as
// other states' artifacts, and one that is not a Flux artifact at all is
// "could not be read", a plan warning telling to give the credentials the
// right to pull it. But Flux users sign their artifacts: `cosign sign`
// (which Flux's OCIRepository verifies, spec.verify) stores the signature
// in the same repository under tag sha256-<digest>.sig, an image whose
// config is not Flux's; attestations (.att) and SBOMs (.sbom) likewise.
// None of them is a state's artifact, nor anything Flux could apply, yet
// every plan of every traffic policy on the cluster warns about each,
// with a wrong fix (the credentials can pull it: it is just not Flux's).
func TestSignatureTagInTheRepositoryIsNoUnreadArtifact(t *testing.T) {
	pr := newPullRegistry(t)
	e, _ := newEngine("onprem") // a connection: the cluster check runs, and finds nothing
	e.Delivery = onPull{pr}
	sig := pr
	sig.Tag = "sha256-4f53cda18c2baa0c0354bb5f9a3ecbe5ed12ab4d8e11ba873c2f11161202b945.sig"
	img, err := random.Image(64, 1) // not Flux's config media type, as a cosign signature's
	if err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(sig.String(), name.Insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := remote.Write(ref, img); err != nil {
		t.Fatal(err)
	}
	o := enginetest.ComposedOwner("a")
	errs, warns := e.PlanErrors(context.Background(), o, []engine.Entry{composedOn(t, o, "onprem").Entry})
	if len(errs) != 0 || len(warns) != 0 {
		t.Errorf("plan errors %v, warnings %v; want none (tag %s is a signature, not another state's artifact)", errs, warns, sig.Tag)
	}
}
