package provider

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
)

// A null element in mesh_cluster's lists and maps fails validation, naming
// the attribute, instead of reaching the model, which holds plain Go
// strings (and the plan, which would fail on converting it).
func TestClusterNullElementsFailAtValidate(t *testing.T) {
	ctx := context.Background()
	s, schema := servedProvider(t)
	typ := schema.ResourceSchemas["mesh_cluster"].ValueType()
	cases := map[string]struct {
		config map[string]any
		path   string
	}{
		"host":               {map[string]any{"east_west_hosts": []any{"*.global", nil}}, "east_west_hosts"},
		"selector value":     {map[string]any{"east_west_selector": map[string]any{"istio": nil}}, "east_west_selector"},
		"exempt selector":    {map[string]any{"default_deny": true, "default_deny_exempt": []any{nil}}, "default_deny_exempt"},
		"exempt label":       {map[string]any{"default_deny": true, "default_deny_exempt": []any{map[string]any{"app": nil}}}, "default_deny_exempt"},
		"none (the control)": {map[string]any{"east_west_hosts": []any{"*.global"}}, ""},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			c.config["name"] = "east"
			v, err := tfValue(typ, c.config)
			if err != nil {
				t.Fatal(err)
			}
			dv, err := tfprotov6.NewDynamicValue(typ, v)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := s.ValidateResourceConfig(ctx, &tfprotov6.ValidateResourceConfigRequest{TypeName: "mesh_cluster", Config: &dv})
			if err != nil {
				t.Fatal(err)
			}
			errs := protoErrors(resp.Diagnostics)
			if c.path == "" {
				if errs != "" {
					t.Fatalf("a configuration without null elements fails validation:\n%s", errs)
				}
				return
			}
			var at []string
			for _, d := range resp.Diagnostics {
				if d.Severity == tfprotov6.DiagnosticSeverityError && d.Attribute != nil && len(d.Attribute.Steps()) > 0 {
					at = append(at, d.Attribute.String())
				}
			}
			if !strings.Contains(strings.Join(at, " "), c.path) {
				t.Fatalf("want an error at %s, got errors at %v:\n%s", c.path, at, errs)
			}
		})
	}
}

// A mesh_cluster state with null where its schema has a default (edited
// by hand, or written without the attribute) still decodes, with the
// defaults a plan would fill, so that it can be refreshed and destroyed;
// one without its required name does not.
func TestClusterStateWithNullsDecodesWithDefaults(t *testing.T) {
	ctx := context.Background()
	r := NewClusterResource().(*clusterResource)
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx)
	state := func(attrs map[string]any) tfsdk.State {
		v, err := tfValue(typ, attrs)
		if err != nil {
			t.Fatal(err)
		}
		return tfsdk.State{Schema: sr.Schema, Raw: v}
	}
	var diags diag.Diagnostics
	m, ok := r.fromState(ctx, state(map[string]any{"id": "0123", "name": "east", "objects": map[string]any{}}), &diags)
	if !ok {
		t.Fatalf("a state with nulls where defaults exist does not decode: %v", diags)
	}
	want := clusterResourceModel{
		Name: "east", IstioNamespace: translate.DefaultIstioNS,
		DefaultDenyExempt: cluster.DefaultDenyExempt, EastWestHosts: translate.DefaultEastWestHosts, EastWestSelector: cluster.DefaultEastWestSelector,
	}
	got := clusterResourceModel{Name: m.Name, IstioNamespace: m.IstioNamespace, DefaultDeny: m.DefaultDeny, ExposeEastWest: m.ExposeEastWest,
		DefaultDenyExempt: m.DefaultDenyExempt, EastWestHosts: m.EastWestHosts, EastWestSelector: m.EastWestSelector, MTLSMode: m.MTLSMode}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("decoded %+v, want the defaults %+v", got, want)
	}
	if _, ok := r.fromState(ctx, state(map[string]any{"id": "0123", "objects": map[string]any{}}), &diags); ok || !diags.HasError() {
		t.Fatal("a state without its required name decodes")
	}
}
