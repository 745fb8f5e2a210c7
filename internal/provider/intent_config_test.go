package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
)

// The configuration an intent keeps in the clusters comes back as the same
// value: every leaf of every intent resource set at once, and the least
// configuration (nulls left out), survive discovery.ConfigJSON and
// discovery.ConfigValue.
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
			raw, err := discovery.ConfigJSON(v)
			if err != nil {
				t.Fatalf("%s, %s: %v", typeName, name, err)
			}
			if strings.Contains(raw, "null") {
				t.Errorf("%s, %s: null values are kept: %s", typeName, name, raw)
			}
			back, err := discovery.ConfigValue(typ, raw)
			if err != nil {
				t.Fatalf("%s, %s: %v\n%s", typeName, name, err, raw)
			}
			if !back.Equal(v) {
				t.Errorf("%s, %s: the configuration does not come back:\nkept: %s\nwant: %s\ngot:  %s", typeName, name, raw, v, back)
			}
		}
	}
}
