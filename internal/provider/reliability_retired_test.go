package provider

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// A cluster is decommissioned with its objects still listed in state: a
// virtual destination has clients there and a mesh_cluster bootstraps it.
// Once it leaves the provider's clusters, plans (and so applies) fail
// naming the cluster and the way out, and nothing is written;
// with the cluster in retired_clusters they succeed, dropping its objects
// from state with a warning and without a single request to it.
func TestAccReliability_retiredCluster(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	owners := []engine.Owner{{Kind: "virtual-destination", Name: "rel-retired"}, {Kind: "cluster", Name: "west"}}
	w := newRelTF(t)
	relCleanup(t, w, nil, owners...)
	// Registered last, so it runs first: what this test left in west on
	// purpose (the cluster "is gone") is removed before the checks.
	t.Cleanup(func() {
		for _, o := range owners {
			relForceDelete(t, liveOwnedIn(t, []string{"west"}, o.Kind, o.Name))
		}
	})
	vd := func(clients string) string { return relDestinationHCL("rel-retired", 8080, clients) }
	remaining := []string{"east", "onprem"}

	w.write(providerConfig(t, "") + vd(`["east", "west"]`) + `
resource "mesh_cluster" "west" {
  name             = "west"
  default_deny     = true
  expose_east_west = true
}
`)
	w.apply()
	inWest := liveOwnedIn(t, []string{"west"}, "", "")
	for _, o := range owners {
		if len(liveOwnedIn(t, []string{"west"}, o.Kind, o.Name)) == 0 {
			t.Fatalf("want objects of %s in west, got %v", o, inWest)
		}
	}

	// West leaves the registry, its mesh_cluster and its clients go. The
	// plan fails, for both intents (the mesh_cluster's destroy too),
	// naming west and retired_clusters; the apply stops at the same plan,
	// and nothing is written anywhere.
	w.write(providerConfigOf(t, remaining, "", kubeconfigConnection) + vd(`["east"]`))
	stateBefore := w.allInventories()
	unchanged := relSnapshot(t, owners...)
	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 1 {
		t.Fatalf("plan with west removed from clusters: exit %d, want 1 (an error):\n%s", code, out)
	}
	for _, want := range []string{
		`Error: Cluster west still holds objects of mesh_virtual_destination "rel-retired"`,
		`Error: Cluster west still holds objects of mesh_cluster "west"`,
		`add "west" to the provider's retired_clusters`,
		`objects["west/`,
	} {
		if !strings.Contains(flat, want) {
			t.Fatalf("the plan does not say %q:\n%s", want, out)
		}
	}
	out = w.applyFails()
	if !strings.Contains(out, "Cluster west still holds objects") || strings.Contains(out, "Creating...") || strings.Contains(out, "Modifying...") || strings.Contains(out, "Destroying...") {
		t.Fatalf("the apply did not stop at its plan:\n%s", out)
	}
	if got := w.allInventories(); strings.Join(got, ",") != strings.Join(stateBefore, ",") {
		t.Fatalf("state changed: before %v, after %v", stateBefore, got)
	}
	if got := relSnapshot(t, owners...); fmt.Sprint(got) != fmt.Sprint(unchanged) {
		t.Fatalf("objects were written: before %v, after %v", unchanged, got)
	}

	// A cluster cannot be registered and retired at once.
	w.write(providerConfig(t, `retired_clusters = ["west"]`) + vd(`["east"]`))
	if out, code := w.run("plan"); code == 0 || !strings.Contains(out, "Cluster both registered and retired") || !strings.Contains(out, "retired_clusters") {
		t.Fatalf("plan with west registered and retired: exit %d\n%s", code, out)
	}

	// Retired: the apply forgets west's objects, touching nothing there.
	w.write(providerConfigOf(t, remaining, `retired_clusters = ["west"]`, kubeconfigConnection) + vd(`["east"]`))
	before := relSnapshot(t, owners...)
	out = w.apply()
	flat = strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Forgetting", "virtual-destination rel-retired in retired cluster west", "cluster west in retired cluster west"} {
		if !strings.Contains(flat, want) {
			t.Fatalf("apply output lacks %q:\n%s", want, out)
		}
	}
	for _, key := range w.allInventories() {
		if strings.HasPrefix(key, "west/") {
			t.Fatalf("state still lists %s", key)
		}
	}
	if w.inventory("mesh_cluster.west").present {
		t.Fatal("mesh_cluster.west is still in state")
	}
	// In the clusters still registered, state lists exactly what exists.
	if got, live := relKeys(w.mustInventory("mesh_virtual_destination.this")), liveOwnedIn(t, remaining, "virtual-destination", "rel-retired"); strings.Join(got, ",") != strings.Join(live, ",") {
		t.Fatalf("state %v, clusters %v", got, live)
	}
	if got := liveOwnedIn(t, []string{"west"}, "", ""); strings.Join(got, ",") != strings.Join(inWest, ",") {
		t.Fatalf("objects in the retired cluster changed: before %v, after %v", inWest, got)
	}
	after := relSnapshot(t, owners...)
	for k, v := range before {
		if strings.HasPrefix(k, "west/") && after[k] != v {
			t.Fatalf("%s in the retired cluster was written: resourceVersion %s, then %s", k, v, after[k])
		}
	}
	w.planIsEmpty()
}
