package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// The configuration an intent keeps in the clusters comes back as the same
// value: every leaf of every intent resource set at once, and the least
// configuration (nulls left out), survive configJSON and configValue.
func TestKeptConfigurationRoundTrips(t *testing.T) {
	ctx := context.Background()
	for typeName, sr := range resourceSchemas(t) {
		if typeName == "mesh_cluster" || typeName == "mesh_workspace" {
			continue // imported from its objects (a roster: from the contributions), not from a kept configuration
		}
		typ := sr.Schema.Type().TerraformType(ctx)
		all := map[string]any{}
		for k, v := range leafBase[typeName] {
			all[k] = v
		}
		for _, l := range schemaLeaves(sr.Schema.Attributes, "") {
			top, _, _ := strings.Cut(l.path, ".")
			if a := sr.Schema.Attributes[top]; a.IsComputed() && !a.IsOptional() {
				continue // never in a configuration
			}
			all[l.path] = l.sample
		}
		for name, values := range map[string]map[string]any{"least": leafBase[typeName], "every leaf": all} {
			v, err := leafValue(typ, "", values)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := configJSON(v)
			if err != nil {
				t.Fatalf("%s, %s: %v", typeName, name, err)
			}
			if strings.Contains(raw, "null") {
				t.Errorf("%s, %s: null values are kept: %s", typeName, name, raw)
			}
			back, err := configValue(typ, raw)
			if err != nil {
				t.Fatalf("%s, %s: %v\n%s", typeName, name, err, raw)
			}
			if !back.Equal(v) {
				t.Errorf("%s, %s: the configuration does not come back:\nkept: %s\nwant: %s\ngot:  %s", typeName, name, raw, v, back)
			}
		}
	}
}

// A kept configuration that does not fit the schema is refused with the
// attribute that does not fit, never half-read.
func TestKeptConfigurationRefusesWhatDoesNotFit(t *testing.T) {
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"name":  tftypes.String,
		"ports": tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{"number": tftypes.Number}}},
	}}
	for raw, want := range map[string]string{
		`{"name":"a","color":"red"}`:      `AttributeName("color"): unsupported attribute`,
		`{"name":{"a":1}}`:                `AttributeName("name"): unsupported type`,
		`{"ports":[{"number":"eighty"}]}`: `AttributeName("ports").ElementKeyInt(0).AttributeName("number")`,
		`{"ports":{"number":80}}`:         `AttributeName("ports"): invalid JSON`,
		`not json`:                        "invalid character",
	} {
		_, err := configValue(typ, raw)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", raw, err, want)
		}
	}
}
