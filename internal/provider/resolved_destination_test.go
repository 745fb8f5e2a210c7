package provider

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

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
