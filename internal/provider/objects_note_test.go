package provider

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// objectsKey is a key of objects in a description's example plan.
var objectsKey = regexp.MustCompile(`(?m)^\s+[~+-] "([^/"]+)/([A-Za-z]+)\.`)

// Each resource's page shows a plan of its own objects (issue 38: every
// page showed the virtual destination's): every key of its example is of
// a kind the resource writes.
func TestEachResourcePageShowsItsOwnObjects(t *testing.T) {
	want := map[string][]string{
		"mesh_virtual_destination": {"ServiceEntry", "DestinationRule"},
		"mesh_traffic_policy":      {"VirtualService"},
		"mesh_access_policy":       {"AuthorizationPolicy"},
		"mesh_cluster":             {"PeerAuthentication", "AuthorizationPolicy", "Gateway"},
	}
	for _, newResource := range []func() resource.Resource{NewVirtualDestinationResource, NewTrafficPolicyResource, NewAccessPolicyResource, NewClusterResource} {
		r := newResource()
		var meta resource.MetadataResponse
		r.Metadata(context.Background(), resource.MetadataRequest{ProviderTypeName: "mesh"}, &meta)
		var resp resource.SchemaResponse
		r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
		keys := objectsKey.FindAllStringSubmatch(resp.Schema.MarkdownDescription, -1)
		if len(keys) == 0 {
			t.Errorf("%s: no objects example in its description", meta.TypeName)
			continue
		}
		for _, k := range keys {
			ok := false
			for _, kind := range want[meta.TypeName] {
				ok = ok || k[2] == kind
			}
			if !ok {
				t.Errorf("%s: its objects example shows a %s, which it does not write", meta.TypeName, k[2])
			}
		}
		if meta.TypeName != "mesh_virtual_destination" && strings.Contains(resp.Schema.MarkdownDescription, "vd-user") {
			t.Errorf("%s: its objects example shows the virtual destination's objects", meta.TypeName)
		}
	}
}
