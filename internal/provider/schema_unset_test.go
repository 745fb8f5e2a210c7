package provider

import (
	"context"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/resource"
)

// schemaAttr is what every attribute of the framework's provider, resource
// and data source schemas answers.
type schemaAttr interface {
	IsOptional() bool
	IsRequired() bool
	IsComputed() bool
	GetMarkdownDescription() string
}

// describedAttr is one attribute of one schema, by its path.
type describedAttr struct {
	path        string
	optional    bool
	computed    bool
	description string
}

// allSchemaAttrs walks the provider's schema and every resource's and data
// source's, nested attributes included, and returns each attribute by its
// path ("mesh_traffic_policy.retries.attempts", "provider.clusters.network").
func allSchemaAttrs(t *testing.T) []describedAttr {
	t.Helper()
	ctx := context.Background()
	p := New("test")()
	var out []describedAttr
	var walk func(prefix string, attrs reflect.Value)
	walk = func(prefix string, attrs reflect.Value) {
		it := attrs.MapRange()
		for it.Next() {
			a, ok := it.Value().Interface().(schemaAttr)
			if !ok {
				t.Fatalf("%s%s: %T is not an attribute", prefix, it.Key(), it.Value().Interface())
			}
			path := prefix + it.Key().String()
			out = append(out, describedAttr{path: path, optional: a.IsOptional(), computed: a.IsComputed(), description: a.GetMarkdownDescription()})
			if m := reflect.ValueOf(a).MethodByName("GetNestedObject"); m.IsValid() {
				walk(path+".", m.Call(nil)[0].MethodByName("GetAttributes").Call(nil)[0])
			}
		}
	}
	var ps provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &ps)
	walk("provider.", reflect.ValueOf(ps.Schema.GetAttributes()))
	for _, f := range p.Resources(ctx) {
		r := f()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "mesh"}, &md)
		var s resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &s)
		walk(md.TypeName+".", reflect.ValueOf(s.Schema.GetAttributes()))
	}
	for _, f := range p.DataSources(ctx) {
		d := f()
		var md datasource.MetadataResponse
		d.Metadata(ctx, datasource.MetadataRequest{ProviderTypeName: "mesh"}, &md)
		var s datasource.SchemaResponse
		d.Schema(ctx, datasource.SchemaRequest{}, &s)
		walk("data."+md.TypeName+".", reflect.ValueOf(s.Schema.GetAttributes()))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// saysWhenUnset matches the words by which a description says what happens
// when the attribute is not set: "Default `x`.", "Unset: ...", "Omitted:
// ...", "Without it, ...".
var saysWhenUnset = regexp.MustCompile(`(?i)\b(default|unset|omitted|without it)\b`)

// Every optional attribute of the provider, of every resource and of every
// data source says in its description what happens when it is not set: the
// default it takes, or the behaviour its absence leaves (Istio's own
// default, no limit, every cluster). A new attribute that does not fails
// here, with its path.
func TestOptionalAttributesSayWhatUnsetMeans(t *testing.T) {
	optional := 0
	for _, a := range allSchemaAttrs(t) {
		if !a.optional {
			continue
		}
		optional++
		if !saysWhenUnset.MatchString(a.description) {
			t.Errorf("%s is optional and its description does not say what happens when it is unset (write \"Default `x`.\" or \"Unset: ...\"):\n  %s", a.path, a.description)
		}
	}
	if optional < 100 {
		t.Fatalf("found only %d optional attributes: the walk misses nested attributes", optional)
	}
	t.Logf("%d optional attributes say what unset means", optional)
}

// objectsKeys are, per resource, an objects key of its own kind that its
// documentation must show, and the virtual destination's ServiceEntry key,
// which only mesh_virtual_destination may show.
var objectsKeys = map[string]string{
	"mesh_cluster":             "east/Gateway.networking.istio.io/istio-system/mesh-cross-network",
	"mesh_virtual_destination": "east/ServiceEntry.networking.istio.io/istio-system/vd-user",
	"mesh_traffic_policy":      "east/VirtualService.networking.istio.io/istio-system/tp-user.global",
	"mesh_access_policy":       "east/AuthorizationPolicy.security.istio.io/users/ap-account-to-user",
}

// Each resource's objects attribute shows keys of the objects that
// resource writes, not another resource's.
func TestObjectsDescribeTheirOwnKeys(t *testing.T) {
	seen := 0
	for _, a := range allSchemaAttrs(t) {
		resource, attr, _ := strings.Cut(a.path, ".")
		if attr != "objects" || strings.HasPrefix(a.path, "data.") {
			continue
		}
		want, ok := objectsKeys[resource]
		if !ok {
			if resource != "mesh_workspace" {
				t.Errorf("%s has objects and no entry in objectsKeys", resource)
			}
			continue
		}
		seen++
		if !strings.Contains(a.description, want) {
			t.Errorf("%s.objects does not show its own key %s:\n  %s", resource, want, a.description)
		}
		if vd := objectsKeys["mesh_virtual_destination"]; resource != "mesh_virtual_destination" && strings.Contains(a.description, vd) {
			t.Errorf("%s.objects shows a virtual destination's key %s", resource, vd)
		}
	}
	if seen != len(objectsKeys) {
		t.Errorf("found objects on %d resources, want %d", seen, len(objectsKeys))
	}
}
