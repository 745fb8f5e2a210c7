package provider

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// Two states with different field_manager bases compose on one hostname:
// the payments state (base "payments-tf") owns the virtual destination and
// its policy, the accounts state (default base) adds a policy whose load
// balancer lands in the virtual destination's DestinationRule. Whoever
// writes, both contributions stay and both plans are empty; an update of
// the virtual destination keeps the accounts policy's setting in its
// DestinationRule; and moving the payments state to another base (the
// documented field_manager migration) keeps everything as it was.
func TestAccComposition_fieldManagerBases(t *testing.T) {
	module := teamModule(t)
	payments, accounts := newRelTF(t), newRelTF(t)
	relCleanup(t, payments, nil, engine.Owner{Kind: "virtual-destination", Name: "payments-ledger"})
	t.Cleanup(func() {
		if out, code := accounts.run("destroy", "-auto-approve"); code != 0 {
			t.Errorf("cleanup: destroying the accounts root failed:\n%s", out)
		}
	})
	paymentsConfig := func(base, selector string) string {
		m := paymentsModule(module)
		if selector != "" {
			m = strings.Replace(m, "  callers", "  client_cluster_selector = "+selector+"\n  callers", 1)
		}
		return providerConfig(t, `field_manager = "`+base+`"`) + m
	}
	payments.write(paymentsConfig("payments-tf", ""))
	accounts.write(providerConfig(t, "") + `
resource "mesh_traffic_policy" "calls" {
  name          = "accounts-to-ledger"
  destination   = { virtual_destination = "` + ledgerHost + `" }
  load_balancer = "LEAST_REQUEST"
}
`)
	if out, code := payments.run("get", "-no-color"); code != 0 {
		t.Fatalf("terraform get failed (exit %d):\n%s", code, out)
	}
	payments.apply()
	// The accounts policy's load balancer is a DestinationRule setting:
	// the ledger's VirtualService carries the payments policy alone.
	both := []string{ledgerPolicy}
	for _, w := range []*relTF{accounts, payments, accounts} {
		w.apply()
		requireContributors(t, both)
		requireLeastRequest(t, true)
		payments.planIsEmpty()
		accounts.planIsEmpty()
	}
	// The virtual destination's own apply keeps what the composer wrote
	// into its DestinationRule.
	payments.write(paymentsConfig("payments-tf", `{ env = "prod" }`))
	payments.apply()
	requireContributors(t, both)
	requireLeastRequest(t, true)
	payments.planIsEmpty()
	accounts.planIsEmpty()
	// Another base for the payments state: the migration.
	payments.write(paymentsConfig("payments-tf-2", `{ env = "prod" }`))
	payments.apply()
	requireContributors(t, both)
	requireLeastRequest(t, true)
	payments.planIsEmpty()
	accounts.planIsEmpty()
	accounts.destroy()
	requireContributors(t, []string{ledgerPolicy})
	requireLeastRequest(t, false)
	payments.planIsEmpty()
}

// requireLeastRequest checks whether the ledger's DestinationRule in
// every client cluster balances with LEAST_REQUEST and carries the
// accounts policy's contribution (want), or neither (not want).
func requireLeastRequest(t *testing.T, want bool) {
	t.Helper()
	for _, c := range testClusters {
		found := false
		for _, o := range listOwned(t, c, gvrDR) {
			raw, err := json.Marshal(o.Object["spec"])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(raw), `"`+ledgerHost+`"`) {
				continue
			}
			_, contributes := o.GetAnnotations()[contribPrefix+"accounts-to-ledger"]
			if strings.Contains(string(raw), "LEAST_REQUEST") != contributes {
				t.Fatalf("DestinationRule %s/%s in %s: LEAST_REQUEST composed %v, but the accounts contribution present %v", o.GetNamespace(), o.GetName(), c, !contributes, contributes)
			}
			found = found || contributes
		}
		if found != want {
			t.Fatalf("the accounts policy's LEAST_REQUEST on a DestinationRule of %s in %s: %v, want %v", ledgerHost, c, found, want)
		}
	}
}

// listOwned lists the objects of gvr in a cluster that this provider
// manages, in every namespace.
func listOwned(t *testing.T, cluster string, gvr schema.GroupVersionResource) []unstructured.Unstructured {
	t.Helper()
	list, err := dyn(t, cluster).Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: engine.LabelManagedBy + "=" + engine.ManagedByValue})
	if err != nil {
		t.Fatalf("listing %s in %s: %v", gvr.Resource, cluster, err)
	}
	return list.Items
}
