package runstate

import (
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// One object planned by two intents is an error naming both resources; the
// same intent planned again, and composed objects, are not.
func TestPlannedObjectsHaveOneOwner(t *testing.T) {
	se := engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "ServiceEntry", Namespace: "users", Name: "vd-user-backend"}
	user := engine.Owner{Kind: "virtual-destination", Name: "user"}
	other := engine.Owner{Kind: "virtual-destination", Name: "user-backend"}
	var p PlannedObjects
	if err := p.Claim(user, []engine.Entry{se}); err != nil {
		t.Fatal(err)
	}
	if err := p.Claim(user, []engine.Entry{se}); err != nil {
		t.Fatalf("the same intent planned again: %v", err)
	}
	err := p.Claim(other, []engine.Entry{se})
	if err == nil || !strings.Contains(err.Error(), `mesh_virtual_destination "user"`) || !strings.Contains(err.Error(), `mesh_virtual_destination "user-backend"`) || !strings.Contains(err.Error(), "ServiceEntry users/vd-user-backend in cluster east") {
		t.Fatalf("want an error naming both resources and the object, got %v", err)
	}
	composed := engine.Owner{Kind: "traffic-policy", Name: "a", Composition: &engine.Composition{}}
	if err := p.Claim(composed, []engine.Entry{se}); err != nil {
		t.Fatalf("a composed object is shared by design: %v", err)
	}
}
