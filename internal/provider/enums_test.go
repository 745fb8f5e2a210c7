package provider

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// enumProbes translate a valid intent in which one enumerated attribute
// (resource type, then attribute path with [] for list elements) has the
// given value; nil when the translator accepts it.
var enumProbes = map[string]func(v string) error{
	"mesh_cluster.mtls_mode": func(v string) error {
		_, err := cluster.Translate(cluster.Intent{Name: "east", MTLSMode: v}, probeRegistry())
		return err
	},
	"mesh_virtual_destination.ports[].protocol": func(v string) error {
		in := probeVirtualDestination()
		in.Ports[0].Protocol = v
		_, err := virtualdestination.Translate(in, probeRegistry())
		return err
	},
	"mesh_virtual_destination.failover.mode": func(v string) error {
		in := probeVirtualDestination()
		in.Failover = &virtualdestination.Failover{Mode: v}
		_, err := virtualdestination.Translate(in, probeRegistry())
		return err
	},
	"mesh_traffic_policy.load_balancer": func(v string) error {
		return probeTrafficPolicy(func(in *trafficpolicy.Intent) { in.LoadBalancer = v })
	},
	"mesh_traffic_policy.tls_mode": func(v string) error {
		return probeTrafficPolicy(func(in *trafficpolicy.Intent) { in.TLSMode = v })
	},
	"mesh_traffic_policy.match[].method": func(v string) error {
		return probeTrafficPolicy(func(in *trafficpolicy.Intent) { in.Match = []trafficpolicy.Match{{Method: v}} })
	},
	"mesh_traffic_policy.cors.allow_methods[]": func(v string) error {
		return probeTrafficPolicy(func(in *trafficpolicy.Intent) {
			in.CORS = &trafficpolicy.CORS{AllowOrigins: []string{"https://example.com"}, AllowMethods: []string{v}}
		})
	},
	"mesh_access_policy.rules[].methods[]": func(v string) error {
		in := accesspolicy.Intent{
			Name:    "probe",
			Sources: []accesspolicy.Source{{Namespace: "accounts", ServiceAccount: "account"}},
			Rules:   []accesspolicy.Rule{{Methods: []string{v}}},
		}
		_, err := accesspolicy.Translate(in, accesspolicy.Destination{Service: "user", Namespace: "users"}, probeRegistry())
		return err
	},
}

func probeRegistry() *translate.Registry {
	return translate.NewRegistry(
		translate.Cluster{Name: "east", Network: "net-east", Region: "us-east-1", EastWestGateway: &translate.Gateway{Address: "203.0.113.10"}},
		translate.Cluster{Name: "west", Network: "net-west", Region: "us-west-2", EastWestGateway: &translate.Gateway{Address: "203.0.113.20"}},
	)
}

func probeVirtualDestination() virtualdestination.Intent {
	return virtualdestination.Intent{
		Name: "user", Hostname: "user.global",
		Ports: []virtualdestination.Port{{Number: 8080, Protocol: "HTTP"}},
		Backends: []virtualdestination.Backend{
			{Cluster: "east", Namespace: "users", Service: "user", Priority: 0},
			{Cluster: "west", Namespace: "users", Service: "user", Priority: 1},
		},
	}
}

func probeTrafficPolicy(set func(*trafficpolicy.Intent)) error {
	in := trafficpolicy.Intent{Name: "probe", Timeout: "2s"}
	set(&in)
	_, err := trafficpolicy.Translate(in, trafficpolicy.Destination{Service: "user", Namespace: "users"}, probeRegistry())
	return err
}

// TestEnumsAgreeWithTranslator finds every attribute whose schema accepts
// a fixed list of values (a OneOf validator, on a string or on the
// elements of a list) and translates a valid intent with each value: the
// translator must accept everything the schema (and so the docs) offers.
// Every such attribute needs a probe, and every probe an attribute.
func TestEnumsAgreeWithTranslator(t *testing.T) {
	found := map[string][]string{}
	for _, newResource := range New("test")().Resources(context.Background()) {
		r := newResource()
		var meta resource.MetadataResponse
		r.Metadata(context.Background(), resource.MetadataRequest{ProviderTypeName: "mesh"}, &meta)
		var resp resource.SchemaResponse
		r.Schema(context.Background(), resource.SchemaRequest{}, &resp)
		collectEnums(meta.TypeName, resp.Schema.Attributes, found)
	}
	if len(found) == 0 {
		t.Fatal("no enumerated attribute found in any schema")
	}
	for attr, values := range found {
		probe, ok := enumProbes[attr]
		if !ok {
			t.Errorf("%s accepts %v but has no probe in enumProbes", attr, values)
			continue
		}
		for _, v := range values {
			if err := probe(v); err != nil {
				t.Errorf("%s = %q: the schema accepts it, the translator refuses it: %v", attr, v, err)
			}
		}
	}
	for attr := range enumProbes {
		if _, ok := found[attr]; !ok {
			t.Errorf("enumProbes has %s, but no such enumerated attribute is in the schemas", attr)
		}
	}
}

// collectEnums records, under "<prefix>.<path>", the values of every OneOf
// validator (as its description lists them) among attrs and below.
func collectEnums(prefix string, attrs map[string]schema.Attribute, found map[string][]string) {
	ctx := context.Background()
	for name, a := range attrs {
		at := prefix + "." + name
		switch a := a.(type) {
		case schema.StringAttribute:
			for _, v := range a.Validators {
				if values, ok := oneOfValues(v.Description(ctx)); ok {
					found[at] = values
				}
			}
		case schema.ListAttribute:
			for _, v := range a.Validators {
				if values, ok := oneOfValues(v.Description(ctx)); ok {
					found[at+"[]"] = values
				}
			}
		case schema.SingleNestedAttribute:
			collectEnums(at, a.Attributes, found)
		case schema.ListNestedAttribute:
			collectEnums(at+"[]", a.NestedObject.Attributes, found)
		case schema.SetNestedAttribute:
			collectEnums(at+"[]", a.NestedObject.Attributes, found)
		case schema.MapNestedAttribute:
			collectEnums(at+"[]", a.NestedObject.Attributes, found)
		}
	}
}

// oneOfValues reads the values out of stringvalidator.OneOf's description
// (`value must be one of: ["A" "B"]`), also when wrapped by a list validator.
func oneOfValues(desc string) ([]string, bool) {
	const marker = "value must be one of: ["
	i := strings.Index(desc, marker)
	if i < 0 {
		return nil, false
	}
	rest := desc[i+len(marker):]
	j := strings.Index(rest, "]")
	if j < 0 {
		return nil, false
	}
	var values []string
	for _, f := range strings.Fields(rest[:j]) { // quoted or bare, by version
		if u, err := strconv.Unquote(f); err == nil {
			f = u
		}
		values = append(values, f)
	}
	return values, len(values) > 0 && !slices.Contains(values, "")
}
