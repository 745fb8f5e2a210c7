package provider

import (
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// A virtual destination owned by one state is read by another through the
// mesh_virtual_destination data source (from its records), and an access
// policy in the second state attaches to it: applied, exact, an empty plan
// after. A hostname nobody owns is a plan error naming it.
func TestAccVirtualDestinationDataSource_anotherState(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	owner := newRelTF(t)
	team := newRelTF(t)
	// Cleanups run last first: the team's state is destroyed, then the
	// owner's, whose cleanup checks that nothing of ours is left.
	relCleanup(t, owner, nil, engine.Owner{Kind: "virtual-destination", Name: "rel-shared"}, engine.Owner{Kind: "access-policy", Name: "rel-team"})
	t.Cleanup(func() {
		if out, code := team.run("destroy", "-auto-approve"); code != 0 {
			t.Errorf("cleanup: destroying the team's state failed:\n%s", out)
		}
	})

	owner.write(providerConfig(t, "") + relVDConfig("shared", "rel-shared", 8080, `["east", "west", "onprem"]`))
	owner.apply()

	team.write(providerConfig(t, "") + `
data "mesh_virtual_destination" "shared" {
  hostname = "rel-shared.global"
}

resource "mesh_access_policy" "team" {
  name        = "rel-team"
  destination = { virtual_destination = data.mesh_virtual_destination.shared.hostname }
  sources     = [{ namespace = "accounts", service_account = "account" }]
}

output "backends" {
  value = [for b in data.mesh_virtual_destination.shared.backends : "${b.cluster}/${b.namespace}/${b.service}"]
}
`)
	team.apply()
	team.requireExact("mesh_access_policy.team", "access-policy", "rel-team")
	if out, code := team.run("output", "-json", "backends"); code != 0 || !strings.Contains(out, "east/users/user") || !strings.Contains(out, "onprem/users/user") {
		t.Fatalf("the data source does not return the owner's backends (exit %d): %s", code, out)
	}
	team.planIsEmpty()

	team.write(providerConfig(t, "") + `
data "mesh_virtual_destination" "nobody" {
  hostname = "nobody.global"
}
`)
	out, code := team.run("plan")
	if flat := strings.Join(strings.Fields(out), " "); code == 0 || !strings.Contains(flat, `No virtual destination with hostname "nobody.global"`) {
		t.Fatalf("a hostname nobody owns is not a plan error naming it (exit %d):\n%s", code, out)
	}
	team.write(providerConfig(t, "")) // for the cleanup's destroy
}
