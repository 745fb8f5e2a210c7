package provider

import (
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// A backend namespace that does not exist fails the plan (issue 38): the
// error is on backends[1].namespace and names the cluster, the namespace
// and how to create it; the apply stops at that plan, nothing is written
// in any cluster, and the state holds no instance (nothing tainted). Once
// the namespace exists, the apply succeeds and the plan is empty.
func TestAccPlanChecks_missingNamespace(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	const ns = "rel-ns-created-later"
	owner := engine.Owner{Kind: "virtual-destination", Name: "rel-nsmissing"}
	w := newRelTF(t)
	relCleanup(t, w, nil, owner)
	w.write(providerConfig(t, "") + `
resource "mesh_virtual_destination" "user" {
  name     = "rel-nsmissing"
  hostname = "rel-nsmissing.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user" },
    { cluster = "west", namespace = "` + ns + `", service = "user" },
  ]
}
`)
	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 1 {
		t.Fatalf("plan with west's backend namespace missing: exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"Namespace missing in cluster west", "backends[1].namespace", "Namespace " + ns + " does not exist in cluster west", "kubectl"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(flat, "Namespace missing in cluster east") {
		t.Errorf("the plan names east, whose namespace exists:\n%s", out)
	}
	w.applyFails()
	if left := liveOwned(t, owner.Kind, owner.Name); len(left) > 0 {
		t.Fatalf("the failed apply wrote %v", left)
	}
	s, _ := w.stateFile()
	for _, r := range s.Resources {
		if r.Type == "mesh_virtual_destination" && len(r.Instances) > 0 {
			t.Fatalf("state holds %s.%s (status %q) after an apply that wrote nothing", r.Type, r.Name, r.Instances[0].Status)
		}
	}

	ensureNamespace(t, "west", ns)
	w.apply()
	w.requireExact("mesh_virtual_destination.user", owner.Kind, owner.Name)
	w.planIsEmpty()
}
