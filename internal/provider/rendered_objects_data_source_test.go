package provider

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/runstate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
)

// The data source renders what the resource plans: for the example's
// configuration, the same object keys as the resource's objects, and the
// YAML of each, with nothing written by the data source itself.
func TestAccRenderedObjects_matchesTheResource(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	example, err := os.ReadFile(filepath.Join("..", "..", "examples", "data-sources", "mesh_rendered_objects", "data-source.tf"))
	if err != nil {
		t.Fatal(err)
	}
	w := newRelTF(t)
	relCleanup(t, w, nil)
	w.write(providerConfig(t, "") + string(example) + `
output "same_keys" {
  value = sort(keys(data.mesh_rendered_objects.user.objects)) == sort(keys(mesh_virtual_destination.user.objects))
}
output "keys" {
  value = length(data.mesh_rendered_objects.user.objects) > 0
}
`)
	// The rendering alone writes nothing.
	if out, code := w.run("plan", "-refresh=false"); code != 0 || !strings.Contains(out, "kind: ServiceEntry") {
		t.Fatalf("plan with the rendering: exit %d, want success showing the YAML:\n%s", code, out)
	}
	if left := relAllOwned(t); len(left) > 0 {
		t.Fatalf("the plan wrote %v", left)
	}
	w.apply()
	for name, want := range map[string]string{"same_keys": "true", "keys": "true"} {
		out, code := w.run("output", "-raw", name)
		if code != 0 || strings.TrimSpace(out) != want {
			t.Fatalf("output %s = %q (exit %d), want %s", name, out, code, want)
		}
	}
	out, _ := w.run("output", "-raw", "user_objects")
	if !strings.Contains(out, "# east/ServiceEntry.networking.istio.io/istio-system/vd-user, owned by virtual-destination user") || !strings.Contains(out, "- user.global") {
		t.Fatalf("the YAML stream does not show the east ServiceEntry of user.global:\n%s", out)
	}
	w.planIsEmpty()
}

// A configuration that does not fit the resource's schema is an error on
// the configuration attribute; so is one the translator refuses.
func TestRenderConfigurationErrors(t *testing.T) {
	data := &providerData{Registry: translate.NewRegistry(translate.Cluster{Name: "east"}), Destinations: &runstate.DestinationIndex{}}
	cases := map[string]struct{ typ, config, want string }{
		"unknown attribute": {"mesh_virtual_destination", `{"name":"user","hostnam":"user.global"}`, "hostnam"},
		"not JSON":          {"mesh_virtual_destination", `name = "user"`, "Configuration does not fit"},
		"no name":           {"mesh_cluster", `{}`, "Configuration lacks name"},
		"translator":        {"mesh_virtual_destination", `{"name":"user","hostname":"user.global","ports":[{"number":8080,"protocol":"HTTP"}],"backends":[{"cluster":"nowhere","namespace":"users","service":"user"}]}`, "nowhere"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, _, diags := renderConfiguration(context.Background(), data, tc.typ, tc.config)
			if !diags.HasError() {
				t.Fatalf("rendered %s", tc.config)
			}
			var all []string
			for _, d := range diags.Errors() {
				all = append(all, d.Summary()+": "+d.Detail())
			}
			if !strings.Contains(strings.Join(all, "\n"), tc.want) {
				t.Fatalf("errors %v do not mention %q", all, tc.want)
			}
		})
	}
	objects, stream, diags := renderConfiguration(context.Background(), data, "mesh_virtual_destination",
		`{"name":"user","hostname":"user.global","ports":[{"number":8080,"protocol":"HTTP"}],"backends":[{"cluster":"east","namespace":"users","service":"user"}]}`)
	if diags.HasError() || len(objects) == 0 || !strings.Contains(stream, "user.global") {
		t.Fatalf("a valid configuration: %v objects, diagnostics %v", len(objects), diags)
	}
	if _, _, ok := data.Destinations.Lookup("user.global"); ok {
		t.Fatal("the rendering counted as a planned virtual destination")
	}
}

// Leaving out an attribute that has a default renders what writing the
// default renders, as a plan would fill it: for mesh_cluster, whose
// defaults include lists and a map (default_deny_exempt, east_west_hosts,
// east_west_selector), the configuration with them omitted and the one
// spelling out cluster's defaults give the same objects, and the
// default exemption (the ingress gateway) is among them.
func TestRenderConfigurationFillsDefaults(t *testing.T) {
	data := &providerData{Registry: translate.NewRegistry(translate.Cluster{Name: "east", Network: "east-net"}), Destinations: &runstate.DestinationIndex{}}
	omitted := `{"name":"east","default_deny":true,"expose_east_west":true}`
	spelled, err := json.Marshal(map[string]any{
		"name": "east", "default_deny": true, "expose_east_west": true,
		"default_deny_exempt": cluster.DefaultDenyExempt,
		"east_west_hosts":     translate.DefaultEastWestHosts,
		"east_west_selector":  cluster.DefaultEastWestSelector,
		"istio_namespace":     translate.DefaultIstioNS,
	})
	if err != nil {
		t.Fatal(err)
	}
	got, _, diags := renderConfiguration(context.Background(), data, "mesh_cluster", omitted)
	if diags.HasError() {
		t.Fatalf("rendering %s: %v", omitted, diags)
	}
	want, _, diags := renderConfiguration(context.Background(), data, "mesh_cluster", string(spelled))
	if diags.HasError() {
		t.Fatalf("rendering %s: %v", spelled, diags)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("defaults left out render\n%v\nwritten out they render\n%v", got, want)
	}
	exempt := false
	for key := range got {
		exempt = exempt || strings.Contains(key, "/"+cluster.DefaultDenyExemptPrefix)
	}
	if !exempt {
		t.Errorf("no %s* AuthorizationPolicy among %v: the default exemption was not rendered", cluster.DefaultDenyExemptPrefix, slices.Sorted(maps.Keys(got)))
	}
}
