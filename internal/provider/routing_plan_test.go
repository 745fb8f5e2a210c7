package provider

import (
	"regexp"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// routingPlanVD is the virtual destination of the reviewing-plans guide's
// one-backend change (examples/guides/reviewing-plans): east first, then
// west, then onprem; the change removes the onprem backend.
func routingPlanVD(withOnprem bool) string {
	onprem := ""
	if withOnprem {
		onprem = `    { cluster = "onprem", namespace = "ledger", service = "ledger", priority = 2 },
`
	}
	return `
resource "mesh_virtual_destination" "ledger" {
  name     = "rel-routing"
  hostname = "rel-routing.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "ledger", service = "ledger", priority = 0 },
    { cluster = "west", namespace = "ledger", service = "ledger", priority = 1 },
` + onprem + `  ]
}
`
}

// The one-backend change of the reviewing-plans guide: the text of
// terraform plan states, in words and one line per client cluster, the
// failover order before and after, and the apply then records what the
// plan said.
func TestAccRouting_planStatesTheOneBackendChange(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "ledger")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: "rel-routing"})
	w.write(providerConfig(t, "") + routingPlanVD(true))
	created := w.apply()
	if !regexp.MustCompile(`(?m)^\s*\+ routing\s+= \{`).MatchString(created) {
		t.Errorf("the create plan does not show routing:\n%s", created)
	}
	for _, c := range []string{"east", "west", "onprem"} {
		line := regexp.MustCompile(`(?m)^\s*\+ "` + c + `"\s+= "east > west > onprem"$`)
		if !line.MatchString(created) {
			t.Errorf("the create plan does not state %s's failover order as east > west > onprem:\n%s", c, created)
		}
	}
	w.planIsEmpty()

	w.write(providerConfig(t, "") + routingPlanVD(false))
	out, code := w.run("plan")
	if code != 0 {
		t.Fatalf("plan failed (exit %d):\n%s", code, out)
	}
	for _, c := range []string{"east", "west", "onprem"} {
		line := regexp.MustCompile(`(?m)^\s*~ "` + c + `"\s+= "east > west > onprem" -> "east > west"$`)
		if !line.MatchString(out) {
			t.Errorf("the plan does not show %s's failover order change as one line:\n%s", c, out)
		}
	}
	w.apply()
	s, _ := w.stateFile()
	for _, r := range s.Resources {
		if r.Type != "mesh_virtual_destination" {
			continue
		}
		got, _ := r.Instances[0].Attributes["routing"].(map[string]any)
		if len(got) != 3 || got["east"] != "east > west" || got["onprem"] != "east > west" {
			t.Errorf("state routing after apply: %v", got)
		}
	}
	w.planIsEmpty()
}
