package provider

import (
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// Every resource type the provider serves is the Resource of one intent
// kind, and every kind's Resource is served: the type names come from
// intentkind (resourceBase.Metadata), where messages that name a resource
// (intentkind.ResourceOf) take them too.
func TestResourceTypeNamesAreTheKinds(t *testing.T) {
	_, resp := servedProvider(t)
	served := map[string]bool{}
	for typ := range resp.ResourceSchemas {
		served[typ] = true
	}
	for _, k := range intentkind.All {
		if !served[k.Resource] {
			t.Errorf("intent kind %s: resource type %s is not served", k.Owner, k.Resource)
		}
		delete(served, k.Resource)
	}
	for typ := range served {
		t.Errorf("resource type %s is the Resource of no intent kind", typ)
	}
}
