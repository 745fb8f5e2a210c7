package provider

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
)

// rangedAttribute is a number attribute whose values the translator
// limits: from lo to hi (each inclusive unless open), as its description
// states with says.
type rangedAttribute struct {
	resource, path string
	// context: other attributes the probe needs (dotted paths).
	context map[string]any
	lo, hi  float64
	// loOpen: lo itself is refused (a share of requests above 0).
	loOpen bool
	// noHi: no upper bound worth stating (counts up to Istio's int32).
	noHi bool
	says string
}

var rangedAttributes = []rangedAttribute{
	{resource: "mesh_traffic_policy", path: "retries.attempts", lo: 0, noHi: true, says: "0 or more"},
	{resource: "mesh_traffic_policy", path: "fault.delay.percent", context: map[string]any{"fault.delay.fixed_delay": "1s"}, lo: 0, loOpen: true, hi: 100, says: "above 0 (at least 0.0001) and at most 100"},
	{resource: "mesh_traffic_policy", path: "fault.abort.percent", context: map[string]any{"fault.abort.http_status": 503}, lo: 0, loOpen: true, hi: 100, says: "above 0 (at least 0.0001) and at most 100"},
	{resource: "mesh_traffic_policy", path: "fault.abort.http_status", context: map[string]any{"fault.abort.percent": 1}, lo: 200, hi: 599, says: "from 200 to 599"},
	{resource: "mesh_traffic_policy", path: "mirror.percent", context: map[string]any{"destination.service": "user", "destination.namespace": "users", "mirror.subset": "v2", "mirror.labels": map[string]any{"version": "v2"}}, lo: 0, loOpen: true, hi: 100, says: "above 0 (at least 0.0001) and at most 100"},
	{resource: "mesh_traffic_policy", path: "traffic_shift.0.weight", context: map[string]any{"traffic_shift.0.subset": "v1", "traffic_shift.0.labels": map[string]any{"version": "v1"}}, lo: 0, hi: 100, says: "from 0 to 100"},
	{resource: "mesh_traffic_policy", path: "connection_pool.tcp.max_connections", lo: 0, noHi: true, says: "0 or more"},
	{resource: "mesh_traffic_policy", path: "connection_pool.tcp.keepalive.probes", lo: 0, noHi: true, says: "0 or more"},
	{resource: "mesh_traffic_policy", path: "connection_pool.http.http1_max_pending_requests", lo: 0, noHi: true, says: "0 or more"},
	{resource: "mesh_traffic_policy", path: "connection_pool.http.http2_max_requests", lo: 0, noHi: true, says: "0 or more"},
	{resource: "mesh_traffic_policy", path: "connection_pool.http.max_requests_per_connection", lo: 0, noHi: true, says: "0 or more"},
	{resource: "mesh_traffic_policy", path: "connection_pool.http.max_retries", lo: 0, noHi: true, says: "0 or more"},
	{resource: "mesh_traffic_policy", path: "outlier_detection.consecutive_5xx_errors", lo: 0, noHi: true, says: "0 or more"},
	{resource: "mesh_traffic_policy", path: "outlier_detection.consecutive_gateway_errors", lo: 0, noHi: true, says: "0 or more"},
	{resource: "mesh_traffic_policy", path: "outlier_detection.max_ejection_percent", lo: 0, hi: 100, says: "from 0 to 100"},
	{resource: "mesh_traffic_policy", path: "outlier_detection.min_health_percent", lo: 0, hi: 100, says: "from 0 to 100"},
	{resource: "mesh_virtual_destination", path: "ports.0.number", lo: 1, hi: 65535, says: "from 1 to 65535"},
	{resource: "mesh_virtual_destination", path: "ports.0.target_port", lo: 1, hi: 65535, says: "from 1 to 65535"},
	{resource: "mesh_virtual_destination", path: "backends.0.priority", lo: 0, noHi: true, says: "0 or more"},
	{resource: "mesh_virtual_destination", path: "backends.0.weight", lo: 1, hi: 1000, says: "from 1 to 1000"},
	{resource: "mesh_virtual_destination", path: "failover.outlier_detection.consecutive_5xx_errors", lo: 1, noHi: true, says: "1 or more"},
	{resource: "mesh_virtual_destination", path: "failover.outlier_detection.max_ejection_percent", lo: 1, hi: 100, says: "from 1 to 100"},
	{resource: "mesh_access_policy", path: "rules.0.ports", lo: 1, hi: 65535, says: "from 1 to 65535"},
}

// Each ranged attribute is checked in one place, so that one mistake gives
// one diagnostic and the schema and the translator cannot disagree: the
// resource schemas carry no range validator of their own, the translator
// (run by terraform validate through ValidateConfig, and by plan) refuses
// exactly the values outside the range, and the description states that
// range. Every number attribute of a resource schema is in the table.
func TestRangesAreCheckedOnceAndAsDocumented(t *testing.T) {
	ctx := context.Background()
	schemas := map[string]schema.Schema{}
	resources := map[string]resource.Resource{}
	for _, f := range New("test")().Resources(ctx) {
		r := f()
		var md resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "mesh"}, &md)
		var sr resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sr)
		schemas[md.TypeName], resources[md.TypeName] = sr.Schema, r
	}
	inTable := map[string]bool{}
	for _, a := range rangedAttributes {
		inTable[a.resource+"."+a.path] = true
	}
	for name, s := range schemas {
		for _, l := range schemaLeaves(s.Attributes, "") {
			a := attributeAt(s.Attributes, l.path)
			numeric := false
			switch a := a.(type) {
			case schema.Int64Attribute:
				numeric = true
				if len(a.Validators) > 0 {
					t.Errorf("%s.%s has schema validators %v: the translator checks its range, so a mistake would be reported twice", name, l.path, a.Validators)
				}
			case schema.Float64Attribute:
				numeric = true
				if len(a.Validators) > 0 {
					t.Errorf("%s.%s has schema validators %v: the translator checks its range, so a mistake would be reported twice", name, l.path, a.Validators)
				}
			case schema.ListAttribute:
				if _, ok := l.sample.([]any); ok && fmt.Sprint(l.sample) == "[4242]" {
					numeric = true
					if len(a.Validators) > 0 {
						t.Errorf("%s.%s has schema validators: the translator checks its range, so a mistake would be reported twice", name, l.path)
					}
				}
			}
			if numeric && !inTable[name+"."+l.path] && !a.IsComputed() {
				t.Errorf("%s.%s is a number the user sets, missing from rangedAttributes", name, l.path)
			}
		}
	}
	for _, ra := range rangedAttributes {
		s, ok := schemas[ra.resource]
		if !ok {
			t.Fatalf("no resource %s", ra.resource)
		}
		a := attributeAt(s.Attributes, ra.path)
		if a == nil {
			t.Errorf("%s.%s is no attribute", ra.resource, ra.path)
			continue
		}
		if !strings.Contains(a.GetMarkdownDescription(), ra.says) {
			t.Errorf("%s.%s: the description does not state its range %q: %s", ra.resource, ra.path, ra.says, a.GetMarkdownDescription())
		}
		probe := func(v float64) diag.Diagnostics {
			values := leafContext(leafBase[ra.resource], schemaLeaves(s.Attributes, ""), leaf{path: ra.path})
			for k, c := range ra.context {
				values[k] = c
			}
			if ra.resource == "mesh_traffic_policy" && values["destination.service"] == nil {
				values["destination.service"], values["destination.namespace"] = "user", "users"
			}
			var sample any = v
			if _, isInt := a.(schema.Int64Attribute); isInt {
				sample = int(v)
			}
			if _, isList := a.(schema.ListAttribute); isList {
				sample = []any{int(v)}
			}
			values[ra.path] = sample
			raw, err := leafValue(s.Type().TerraformType(ctx), "", values)
			if err != nil {
				t.Fatalf("%s.%s = %v: %v", ra.resource, ra.path, v, err)
			}
			var resp resource.ValidateConfigResponse
			resources[ra.resource].(resource.ResourceWithValidateConfig).ValidateConfig(ctx,
				resource.ValidateConfigRequest{Config: tfsdk.Config{Schema: s, Raw: raw}}, &resp)
			return resp.Diagnostics
		}
		check := func(v float64, refused bool) {
			diags := probe(v)
			attr := strings.ReplaceAll(strings.ReplaceAll(ra.path, ".0.", "[0]."), ".0", "[0]")
			if _, isList := a.(schema.ListAttribute); isList {
				attr += "[0]" // the element
			}
			at := 0
			for _, d := range diags {
				if strings.Contains(d.Detail(), "Attribute "+attr+":") {
					at++
				}
			}
			switch {
			case refused && at != 1:
				t.Errorf("%s.%s = %v: want one error at %s, got %d: %v", ra.resource, ra.path, v, attr, at, diags)
			case !refused && at > 0:
				t.Errorf("%s.%s = %v is in its range (%s) but refused: %v", ra.resource, ra.path, v, ra.says, diags)
			}
		}
		check(ra.lo, ra.loOpen)
		if ra.loOpen {
			check(ra.lo+0.0001, false)
		}
		check(ra.lo-1, true)
		if !ra.noHi {
			check(ra.hi, false)
			check(ra.hi+1, true)
		} else {
			check(ra.lo+1000, false)
		}
	}
}

// attributeAt finds a schema attribute by dotted path (list elements as 0).
func attributeAt(attrs map[string]schema.Attribute, p string) schema.Attribute {
	name, rest, nested := strings.Cut(p, ".")
	a, ok := attrs[name]
	if !ok {
		return nil
	}
	if !nested {
		return a
	}
	switch a := a.(type) {
	case schema.SingleNestedAttribute:
		return attributeAt(a.Attributes, rest)
	case schema.ListNestedAttribute:
		_, rest, _ = strings.Cut(rest, ".")
		return attributeAt(a.NestedObject.Attributes, rest)
	}
	return nil
}
