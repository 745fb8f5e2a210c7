package provider

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// A traffic policy whose virtual destination is gone (destroyed: no
// record anywhere, and every cluster answered) fails at plan, naming the
// hostname; it never falls back to the destination its state resolved
// before (issue 36, item 4), which would re-create the destination's
// DestinationRule with no owner.
func TestPlanOfAPolicyWhoseDestinationIsGoneFails(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	data := recordsData(f)
	host := "user.global"
	before, err := json.Marshal(trafficpolicy.DestinationOf(vdIn("user", "users"), data.Registry))
	if err != nil {
		t.Fatal(err)
	}
	m := &trafficPolicyModel{Destination: tpDestinationModel{VirtualDestination: &host}, ResolvedDestination: types.StringValue(string(before))}
	_, diags := m.destination(context.Background(), data, planPhase)
	if !diags.HasError() || !strings.Contains(errorsOf(diags), "Unknown virtual destination") || !strings.Contains(errorsOf(diags), host) {
		t.Fatalf("plan of a policy on a destroyed destination: diagnostics %v; want an error naming %s", diags, host)
	}

	// With its record back, the same plan resolves it.
	putRecord(t, f, "east", virtualdestination.DefaultRecordsNamespace, "aaaa1111", vdIn("user", "users"), "")
	data = recordsData(f)
	if _, diags := m.destination(context.Background(), data, planPhase); diags.HasError() {
		t.Fatalf("plan with the record present: %v", diags)
	}
}
