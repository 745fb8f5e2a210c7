package provider

import (
	"context"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// Every resource type the provider serves is the Resource of one intent
// kind, and every kind's Resource is served: the type names come from
// intentkind (resourceBase.Metadata), where messages that name a resource
// (intentkind.ResourceOf) take them too.
func TestResourceTypeNamesAreTheKinds(t *testing.T) {
	s, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "GetProviderSchema", resp.Diagnostics)
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
