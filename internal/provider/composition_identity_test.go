package provider

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
)

// Two roots that follow the team-modules guide but leave the provider's
// workspace at its default (both are workspace "default"), each with its
// roster, compose on one hostname. Neither takes the other's policies for
// its own: after every apply, in either order, both routes are composed
// and both plans are empty; destroying one root leaves the other's routes.
// A third root that names the first root's identity explicitly fails at
// plan and apply, naming the claim, and writes nothing.
func TestAccComposition_defaultWorkspaces(t *testing.T) {
	module := teamModule(t)
	payments, accounts, intruder := newRelTF(t), newRelTF(t), newRelTF(t)
	relCleanup(t, payments, nil, engine.Owner{Kind: "virtual-destination", Name: "payments-ledger"}, engine.Owner{Kind: "virtual-destination", Name: "accounts-account"})
	t.Cleanup(func() {
		if out, code := accounts.run("destroy", "-auto-approve"); code != 0 {
			t.Errorf("cleanup: destroying the accounts root failed:\n%s", out)
		}
	})
	payments.write(providerConfig(t, "") + paymentsModule(module) + `
resource "mesh_workspace" "this" {
  traffic_policies = module.ledger.traffic_policies
}
`)
	accounts.write(providerConfig(t, "") + accountsModule(module, "") + `
resource "mesh_workspace" "this" {
  traffic_policies = module.account.traffic_policies
}
`)
	for _, w := range []*relTF{payments, accounts} {
		if out, code := w.run("get", "-no-color"); code != 0 {
			t.Fatalf("terraform get failed (exit %d):\n%s", code, out)
		}
	}
	payments.apply()
	requireContributors(t, []string{ledgerPolicy})
	both := []string{callsPolicy, ledgerPolicy}
	for i, w := range []*relTF{accounts, payments, accounts, payments} {
		w.apply()
		requireContributors(t, both)
		payments.planIsEmpty()
		accounts.planIsEmpty()
		if i == 1 {
			// Each plan sees the other's contributions and no orphan.
			if out := flatRun(accounts, "plan"); strings.Contains(out, "Orphaned contribution") || strings.Contains(out, "Name taken") {
				t.Fatalf("the accounts plan takes the payments policy for its own:\n%s", out)
			}
		}
	}
	idPayments, idAccounts := payments.attribute("mesh_workspace.this", "id"), accounts.attribute("mesh_workspace.this", "id")
	if !strings.HasPrefix(idPayments, "default-") || !strings.HasPrefix(idAccounts, "default-") || idPayments == idAccounts {
		t.Fatalf("roster identities %q and %q: want two minted from the default workspace", idPayments, idAccounts)
	}
	claims := claimsOf(t, idPayments)
	if len(claims) != len(testClusters) {
		t.Fatalf("the payments root's claim is in %d clusters, want %d", len(claims), len(testClusters))
	}

	// A third root names the payments identity: refused at plan and at
	// apply, and nothing is written.
	before, beforeClaims := composedSnapshot(t), claimsOf(t, idPayments)
	intruder.write(providerConfig(t, `workspace = "`+idPayments+`"`) + `
resource "mesh_traffic_policy" "intruder" {
  name        = "intruder-to-ledger"
  destination = { virtual_destination = "` + ledgerHost + `" }
  sources     = { namespaces = ["web"] }
  headers     = { request = { set = { "x-intruder" = "1" } } }
}

resource "mesh_workspace" "this" {
  traffic_policies = [mesh_traffic_policy.intruder.name]
}
`)
	for _, args := range [][]string{{"plan"}, {"apply", "-auto-approve"}} {
		out, code := intruder.run(args...)
		flat := strings.Join(strings.Fields(out), " ")
		if code == 0 || !strings.Contains(flat, "Workspace identity claimed by another state") || !strings.Contains(flat, `"`+idPayments+`"`) ||
			!strings.Contains(flat, shareddata.ClaimName(idPayments)) || !strings.Contains(flat, ledgerPolicy) {
			t.Fatalf("terraform %s with another state's identity (exit %d) does not fail naming the claim:\n%s", args[0], code, out)
		}
	}
	requireSameSnapshot(t, "after the refused third root", before, composedSnapshot(t))
	if after := claimsOf(t, idPayments); strings.Join(after, "|") != strings.Join(beforeClaims, "|") {
		t.Fatalf("the refused root changed the claim:\nbefore %v\nafter  %v", beforeClaims, after)
	}
	requireContributors(t, both)

	// Destroying the payments policy leaves the accounts route; the
	// payments apply brings its own back.
	payments.destroyTarget("module.ledger.mesh_traffic_policy.service")
	requireContributors(t, []string{callsPolicy})
	accounts.planIsEmpty()
	payments.apply()
	requireContributors(t, both)

	// Destroying the accounts root leaves the payments routes, and its
	// claim is gone.
	accounts.destroy()
	requireContributors(t, []string{ledgerPolicy})
	if left := claimsOf(t, idAccounts); len(left) > 0 {
		t.Fatalf("destroying the accounts root left its claim: %v", left)
	}
	payments.planIsEmpty()
}

// claimsOf lists identity's claim in every test cluster, as
// "<cluster>:<token>:<members>".
func claimsOf(t *testing.T, identity string) []string {
	t.Helper()
	var out []string
	for _, c := range testClusters {
		o, err := dyn(t, c).Resource(gvrConfigMap).Namespace("mesh-intent-records").Get(context.Background(), shareddata.ClaimName(identity), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, c+":"+o.GetLabels()[engine.LabelOwnerID]+":"+o.Object["data"].(map[string]any)["members"].(string))
	}
	return out
}
