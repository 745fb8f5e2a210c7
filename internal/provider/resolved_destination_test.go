package provider

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

func resolvedFixture() trafficpolicy.Destination {
	return trafficpolicy.Destination{
		VirtualDestination: "user.global", VirtualDestinationName: "user", VirtualDestinationNamespace: "istio-system",
		BackendClusters: []string{"east", "west"},
		ClientBackends:  map[string][]string{"east": {"east", "west"}, "west": {"east", "west"}},
	}
}

// The new form is no JSON to Terraform (so terraform plan prints it on
// one line, not as a jsonencode block) and reads back as it was written.
func TestResolvedDestination_isOneLineAndRoundTrips(t *testing.T) {
	d := resolvedFixture()
	s := encodeResolved(d)
	if json.Valid([]byte(s)) || strings.Contains(s, "\n") {
		t.Fatalf("resolved_destination %q is JSON or spans lines: terraform plan would print it as a jsonencode block", s)
	}
	got, ok := decodeResolved(s)
	if !ok || !sameDestination(got, d) {
		t.Fatalf("decode(%q) = %+v, %v; want %+v", s, got, ok, d)
	}
}

// A 0.1.0 state holds the bare JSON: it still reads, and a plan that
// resolves the same destination keeps it (no update of every policy for
// the new form); a changed destination gets the new form.
func TestResolvedDestination_readsAndKeepsA010State(t *testing.T) {
	d := resolvedFixture()
	raw, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	old := types.StringValue(string(raw))
	got, ok := decodeResolved(old.ValueString())
	if !ok || !sameDestination(got, d) {
		t.Fatalf("0.1.0 value %s reads as %+v, %v", raw, got, ok)
	}
	if v := resolvedValue(old, d); !v.Equal(old) {
		t.Errorf("same destination: planned %s, want the state's %s kept", v, old)
	}
	moved := d
	moved.BackendClusters = []string{"east"}
	if v := resolvedValue(old, moved); v.ValueString() != encodeResolved(moved) {
		t.Errorf("changed destination: planned %s, want %s", v, encodeResolved(moved))
	}
	if v := resolvedValue(types.StringNull(), d); v.ValueString() != encodeResolved(d) {
		t.Errorf("create: planned %s, want %s", v, encodeResolved(d))
	}
}

// resolvedConfig is a virtual destination with backends in east and west
// (and onprem when withOnprem) and a traffic policy on it.
func resolvedConfig(t *testing.T, withOnprem bool) string {
	onprem := ""
	if withOnprem {
		onprem = `    { cluster = "onprem", namespace = "ledger", service = "ledger", priority = 2 },
`
	}
	return providerConfig(t, "") + `
resource "mesh_virtual_destination" "ledger" {
  name     = "rel-resolved"
  hostname = "rel-resolved.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "ledger", service = "ledger", priority = 0 },
    { cluster = "west", namespace = "ledger", service = "ledger", priority = 1 },
` + onprem + `  ]
}

resource "mesh_traffic_policy" "ledger" {
  name        = "rel-resolved-timeout"
  destination = { virtual_destination = mesh_virtual_destination.ledger.hostname }
  timeout     = "2s"
}
`
}

// resolvedInStateFile is the traffic policy's resolved_destination in the
// state file; with set, it is replaced there by set's result first (as a
// 0.1.0 state holds it).
func resolvedInStateFile(t *testing.T, w *relTF, set func(string) string) string {
	t.Helper()
	file := filepath.Join(w.dir, "terraform.tfstate")
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(raw, &s); err != nil {
		t.Fatal(err)
	}
	resources, _ := s["resources"].([]any)
	for _, r := range resources {
		res, _ := r.(map[string]any)
		if res["type"] != "mesh_traffic_policy" {
			continue
		}
		inst, _ := res["instances"].([]any)
		if len(inst) != 1 {
			t.Fatalf("mesh_traffic_policy has %d instances in state", len(inst))
		}
		attrs, _ := inst[0].(map[string]any)["attributes"].(map[string]any)
		v, _ := attrs["resolved_destination"].(string)
		if set == nil {
			return v
		}
		attrs["resolved_destination"] = set(v)
		serial, _ := s["serial"].(float64)
		s["serial"] = serial + 1
		out, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return attrs["resolved_destination"].(string)
	}
	t.Fatal("no mesh_traffic_policy in state")
	return ""
}

// A state whose resolved_destination is 0.1.0's bare JSON plans no change
// (the policy still resolves and keeps the value); the next change of the
// destination writes the one-line form (its plan shows the old JSON once),
// and the changes after that print on one line.
func TestAccResolvedDestination_a010StateStillWorks(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "ledger")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: "rel-resolved"})
	w.write(resolvedConfig(t, true))
	w.apply()
	if v := resolvedInStateFile(t, w, nil); !strings.HasPrefix(v, resolvedPrefix) {
		t.Fatalf("resolved_destination after create: %q, want the one-line form", v)
	}
	bare := resolvedInStateFile(t, w, func(v string) string { return strings.TrimPrefix(v, resolvedPrefix) })
	if !json.Valid([]byte(bare)) {
		t.Fatalf("the 0.1.0 form written to state is no JSON: %q", bare)
	}
	w.planIsEmpty()
	if v := resolvedInStateFile(t, w, nil); v != bare {
		t.Fatalf("an empty plan changed the 0.1.0 resolved_destination to %q", v)
	}

	// The change from the bare JSON shows the old value as JSON, once.
	w.write(resolvedConfig(t, false))
	w.apply()
	v := resolvedInStateFile(t, w, nil)
	d, ok := decodeResolved(v)
	if !strings.HasPrefix(v, resolvedPrefix) || !ok || strings.Join(d.BackendClusters, ",") != "east,west" {
		t.Fatalf("resolved_destination after the destination changed: %q, want the one-line form with backends east,west", v)
	}
	w.planIsEmpty()

	// From then on a change of the destination is one line.
	w.write(resolvedConfig(t, true))
	if out := w.apply(); strings.Contains(out, "jsonencode(") || !strings.Contains(out, "~ resolved_destination = \""+resolvedPrefix) {
		t.Errorf("the plan does not show resolved_destination's change on one line:\n%s", out)
	}
	w.planIsEmpty()
}
