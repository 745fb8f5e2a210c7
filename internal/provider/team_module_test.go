package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// teamRoot is a root module that uses examples/modules/team for one team.
func teamRoot(t *testing.T, module, team, service, clusters, callerNS string) string {
	return providerConfig(t, "") + `
module "` + service + `" {
  source    = "` + module + `"
  team      = "` + team + `"
  service   = "` + service + `"
  namespace = "users"
  clusters  = ` + clusters + `
  callers   = [{ namespace = "` + callerNS + `", service_account = "caller" }]
}

output "hostname" {
  value = module.` + service + `.hostname
}
`
}

// The team module of examples/modules/team, used by two teams from two
// roots with two states, against the local clusters: both apply, each
// state lists exactly what is in the clusters for its intents, no object
// is in neither state, the plans after are empty, and destroying one team
// leaves the other's objects as they were.
func TestAccTeamModule_twoRoots(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	module := filepath.Join(t.TempDir(), "team")
	if err := os.CopyFS(module, os.DirFS(filepath.Join("..", "..", "examples", "modules", "team"))); err != nil {
		t.Fatal(err)
	}
	payments, accounts := newRelTF(t), newRelTF(t)
	// Cleanups run last first: the accounts root is destroyed, then the
	// payments root, whose cleanup checks that nothing of ours is left.
	relCleanup(t, payments, nil, engine.Owner{Kind: "virtual-destination", Name: "payments-ledger"}, engine.Owner{Kind: "virtual-destination", Name: "accounts-account"})
	t.Cleanup(func() {
		if out, code := accounts.run("destroy", "-auto-approve"); code != 0 {
			t.Errorf("cleanup: destroying the accounts root failed:\n%s", out)
		}
	})

	payments.write(teamRoot(t, module, "payments", "ledger", `["east", "west"]`, "accounts"))
	accounts.write(teamRoot(t, module, "accounts", "account", `["onprem"]`, "web"))
	for _, w := range []*relTF{payments, accounts} {
		// terraform get installs the module; the provider comes from the
		// working directory's dev_overrides, with no init.
		if out, code := w.run("get", "-no-color"); code != 0 {
			t.Fatalf("terraform get failed (exit %d):\n%s", code, out)
		}
		w.apply()
	}
	payments.requireExact("module.ledger.mesh_virtual_destination.service", "virtual-destination", "payments-ledger")
	payments.requireExact("module.ledger.mesh_access_policy.service", "access-policy", "payments-ledger")
	accounts.requireExact("module.account.mesh_virtual_destination.service", "virtual-destination", "accounts-account")
	accounts.requireExact("module.account.mesh_access_policy.service", "access-policy", "accounts-account")
	requireNoOrphans(t, payments, accounts)
	if out, code := payments.run("output", "-raw", "hostname"); code != 0 || strings.TrimSpace(out) != "ledger.payments.global" {
		t.Fatalf("the module's hostname output is %q (exit %d), want ledger.payments.global", out, code)
	}
	payments.planIsEmpty()
	accounts.planIsEmpty()

	before := liveOwned(t, "virtual-destination", "accounts-account")
	payments.destroy()
	if left := liveOwned(t, "virtual-destination", "payments-ledger"); len(left) > 0 {
		t.Fatalf("destroying the payments root left %v", left)
	}
	if after := liveOwned(t, "virtual-destination", "accounts-account"); strings.Join(after, " ") != strings.Join(before, " ") {
		t.Fatalf("destroying the payments root changed the accounts team's objects:\nbefore %v\nafter  %v", before, after)
	}
	accounts.planIsEmpty()
}
