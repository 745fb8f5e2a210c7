package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"
)

// A traffic policy whose virtual destination no longer resolves (its
// record gone, nothing in state) is still deleted with a composer, so the
// engine can release its contributions instead of panicking on a missing
// Compose.
func TestTrafficPolicyDeleteSpecHasAComposer(t *testing.T) {
	host := "gone.global"
	m := &trafficPolicyModel{ID: types.StringValue("id-p"), Name: "p", ResolvedDestination: types.StringNull()}
	m.Destination.VirtualDestination = &host
	spec, diags := m.spec(context.Background(), nil, statePhase)
	if !diags.HasError() {
		t.Fatal("the destination resolved: the test does not exercise an unresolved one")
	}
	if c := spec.Owner.Composition; c == nil || c.Composer == nil {
		t.Fatalf("composition %+v: a delete of this policy has no composer", c)
	}
}
