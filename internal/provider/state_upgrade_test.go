package provider

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// v0State is testdata/state-v0/demo.tfstate: the state examples/demo left
// with the provider as it was before objects became a map (commit 021393a),
// schema version 0 for every resource.
func v0State(t *testing.T) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "state-v0", "demo.tfstate"))
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// resourceSchemas are the current schemas by resource type.
func resourceSchemas(t *testing.T) map[string]resource.SchemaResponse {
	ctx := context.Background()
	out := map[string]resource.SchemaResponse{}
	for _, newResource := range New("test")().Resources(ctx) {
		r := newResource()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "mesh"}, &meta)
		var sr resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sr)
		if sr.Schema.Version != schemaVersion {
			t.Errorf("%s: schema version %d, want %d", meta.TypeName, sr.Schema.Version, schemaVersion)
		}
		out[meta.TypeName] = sr
	}
	return out
}

// Every resource of a state written before objects became a map upgrades:
// each old entry is one key with the same digest, and every other
// attribute keeps its value.
func TestStateUpgradeFromVersion0(t *testing.T) {
	ctx := context.Background()
	schemas := resourceSchemas(t)
	seen := map[string]bool{}
	for _, rs := range v0State(t)["resources"].([]any) {
		r := rs.(map[string]any)
		typ := r["type"].(string)
		sr, ok := schemas[typ]
		if !ok {
			t.Fatalf("%s is no resource of the provider", typ)
		}
		seen[typ] = true
		for _, inst := range r["instances"].([]any) {
			attrs := inst.(map[string]any)["attributes"].(map[string]any)
			raw, err := json.Marshal(attrs)
			if err != nil {
				t.Fatal(err)
			}
			resp := resource.UpgradeStateResponse{State: tfsdk.State{Schema: sr.Schema}}
			upgradeObjects(ctx, resource.UpgradeStateRequest{RawState: &tfprotov6.RawState{JSON: raw}}, &resp)
			if resp.Diagnostics.HasError() {
				t.Fatalf("%s.%s: %v", typ, r["name"], resp.Diagnostics)
			}
			var want []string
			for _, o := range attrs["objects"].([]any) {
				e := o.(map[string]any)
				want = append(want, liveKey(engine.Entry{Cluster: e["cluster"].(string), Kind: e["kind"].(string), Namespace: e["namespace"].(string), Name: e["name"].(string)})+" "+e["digest"].(string))
			}
			var objects map[string]tftypes.Value
			var fields map[string]tftypes.Value
			if err := resp.State.Raw.As(&fields); err != nil {
				t.Fatal(err)
			}
			if err := fields["objects"].As(&objects); err != nil {
				t.Fatal(err)
			}
			var got []string
			for k, v := range objects {
				var digest string
				if err := v.As(&digest); err != nil {
					t.Fatal(err)
				}
				e, err := engine.EntryFromStateKey(k, digest)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, liveKey(e)+" "+digest)
			}
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("%s.%s: objects\ngot  %v\nwant %v", typ, r["name"], got, want)
			}
			// Every other attribute, as the current schema reads it from
			// the old state, is unchanged.
			delete(attrs, "objects")
			rest, err := json.Marshal(attrs)
			if err != nil {
				t.Fatal(err)
			}
			before, err := discovery.ConfigValue(sr.Schema.Type().TerraformType(ctx), string(rest))
			if err != nil {
				t.Fatal(err)
			}
			var beforeFields map[string]tftypes.Value
			if err := before.As(&beforeFields); err != nil {
				t.Fatal(err)
			}
			for k, v := range beforeFields {
				if k != "objects" && !v.Equal(fields[k]) {
					t.Errorf("%s.%s: %s changed: %s -> %s", typ, r["name"], k, v, fields[k])
				}
			}
		}
	}
	// mesh_workspace came after version 1: no state of it is older.
	if len(seen) != len(schemas)-1 {
		t.Errorf("the version 0 state covers %v of the %d resource types", sortedKeys(seen), len(schemas))
	}
}
