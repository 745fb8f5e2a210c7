package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// The composition tests: teams in separate Terraform states (or one root)
// declare traffic policies on one global hostname, through the team module
// of examples/modules/team. Istio's validation webhook of the local mesh
// admits every object written.

const (
	ledgerHost    = "ledger.payments.global"
	callsPolicy   = "accounts-account-to-ledger-payments-global"
	callsAddr     = `module.account.mesh_traffic_policy.calls["` + ledgerHost + `"]`
	ledgerPolicy  = "payments-ledger"
	contribPrefix = "traffic-policy.mesh-intent.io/"
)

// teamModule copies examples/modules/team for a test, and makes the
// teams' namespaces in every cluster.
func teamModule(t *testing.T) string {
	t.Helper()
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
		ensureNamespace(t, c, "accounts")
	}
	module := filepath.Join(t.TempDir(), "team")
	if err := os.CopyFS(module, os.DirFS(filepath.Join("..", "..", "examples", "modules", "team"))); err != nil {
		t.Fatal(err)
	}
	return module
}

// paymentsModule is the payments team: the ledger service and its policy
// for every caller.
func paymentsModule(module string) string {
	return `
module "ledger" {
  source    = "` + module + `"
  team      = "payments"
  service   = "ledger"
  namespace = "users"
  clusters  = ["east", "west"]
  callers   = [{ namespace = "accounts", service_account = "caller" }]
}
`
}

// accountsModule is the accounts team, whose workloads call the ledger
// with a header of their own (and, when timeout is set, a timeout).
func accountsModule(module, timeout string) string {
	calls := `{ request_headers = { "x-caller-team" = "accounts" } }`
	if timeout != "" {
		calls = `{ timeout = "` + timeout + `", request_headers = { "x-caller-team" = "accounts" } }`
	}
	return `
module "account" {
  source    = "` + module + `"
  team      = "accounts"
  service   = "account"
  namespace = "accounts"
  clusters  = ["onprem"]
  callers   = [{ namespace = "web", service_account = "caller" }]
  calls     = { "` + ledgerHost + `" = ` + calls + ` }
}
`
}

// composedSnapshot is, per composed object carrying a traffic policy's
// contribution in any cluster, its content: spec, labels and annotations
// as JSON (identity, versions and managed fields left out).
func composedSnapshot(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range testClusters {
		for _, gvr := range []struct{ g, kind string }{{"virtualservices", "VirtualService"}, {"destinationrules", "DestinationRule"}} {
			res := gvrVS
			if gvr.kind == "DestinationRule" {
				res = gvrDR
			}
			list, err := dyn(t, c).Resource(res).List(context.Background(), metav1.ListOptions{LabelSelector: engine.LabelManagedBy + "=" + engine.ManagedByValue})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range list.Items {
				has := false
				for k := range o.GetLabels() {
					has = has || strings.HasPrefix(k, contribPrefix)
				}
				if !has {
					continue
				}
				raw, err := json.Marshal(map[string]any{"spec": o.Object["spec"], "labels": o.GetLabels(), "annotations": o.GetAnnotations()})
				if err != nil {
					t.Fatal(err)
				}
				out[fmt.Sprintf("%s/%s/%s/%s", c, gvr.kind, o.GetNamespace(), o.GetName())] = string(raw)
			}
		}
	}
	return out
}

func requireSameSnapshot(t *testing.T, when string, want, got map[string]string) {
	t.Helper()
	var keys []string
	for k := range want {
		keys = append(keys, k)
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	for _, k := range keys {
		if want[k] != got[k] {
			t.Fatalf("%s: composed object %s is not byte-identical:\nwant %s\ngot  %s", when, k, want[k], got[k])
		}
	}
}

// ledgerVS is the ledger's composed VirtualService in a cluster.
func ledgerVS(t *testing.T, cluster string) map[string]any {
	t.Helper()
	o := getObject(t, cluster, gvrVS, "istio-system", "tp-"+ledgerHost)
	if o == nil {
		return nil
	}
	return o.Object
}

// contributionsIn lists the traffic policies contributing to an object
// (labels and annotations alike).
func contributionsIn(obj map[string]any) []string {
	if obj == nil {
		return nil
	}
	meta, _ := obj["metadata"].(map[string]any)
	seen := map[string]bool{}
	for _, field := range []string{"labels", "annotations"} {
		m, _ := meta[field].(map[string]any)
		for k := range m {
			if name, ok := strings.CutPrefix(k, contribPrefix); ok {
				seen[name+" ("+field+")"] = true
			}
		}
	}
	return sortedKeys(seen)
}

// Two teams in two states compose on one hostname. The accounts state
// registers fewer clusters than the payments state, and each records its
// own workspace. Whoever writes last, the composed objects are the same;
// a policy destroyed and declared again with its name, a policy forgotten
// with `terraform state rm`, a hand-edited contribution and a conflicting
// setting each behave as documented.
func TestAccComposition_twoStates(t *testing.T) {
	module := teamModule(t)
	payments, accounts := newRelTF(t), newRelTF(t)
	relCleanup(t, payments, nil, engine.Owner{Kind: "virtual-destination", Name: "payments-ledger"}, engine.Owner{Kind: "virtual-destination", Name: "accounts-account"})
	t.Cleanup(func() {
		if out, code := accounts.run("destroy", "-auto-approve"); code != 0 {
			t.Errorf("cleanup: destroying the accounts root failed:\n%s", out)
		}
	})
	paymentsConfig := providerConfig(t, `workspace = "payments"`) + paymentsModule(module)
	accountsConfig := func(timeout string) string {
		return providerConfigOf(t, []string{"east", "onprem"}, `workspace = "accounts"`, kubeconfigConnection) + accountsModule(module, timeout)
	}
	payments.write(paymentsConfig)
	accounts.write(accountsConfig(""))
	for _, w := range []*relTF{payments, accounts} {
		if out, code := w.run("get", "-no-color"); code != 0 {
			t.Fatalf("terraform get failed (exit %d):\n%s", code, out)
		}
	}
	// The accounts policy creates the shared objects (the ledger's own
	// policy comes after), so that destroying it below releases objects
	// it created.
	payments.apply("-target=module.ledger.mesh_virtual_destination.service")
	accounts.apply()
	payments.apply()
	// The accounts policy reaches the clusters its state registers.
	for c, want := range map[string][]string{
		"east": {callsPolicy + " (annotations)", callsPolicy + " (labels)", ledgerPolicy + " (annotations)", ledgerPolicy + " (labels)"},
		"west": {ledgerPolicy + " (annotations)", ledgerPolicy + " (labels)"},
	} {
		if got := contributionsIn(ledgerVS(t, c)); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("contributions to the ledger's VirtualService in %s: %v, want %v", c, got, want)
		}
	}
	requireNoOrphans(t, payments, accounts)
	payments.planIsEmpty()
	accounts.planIsEmpty()
	// Each plan lists the other workspace's policy on the hostname.
	out := flatRun(accounts, "plan")
	if !strings.Contains(out, "Traffic also shaped by another workspace") || !strings.Contains(out, `"`+ledgerPolicy+`" from workspace "payments"`) {
		t.Fatalf("the accounts plan does not list the payments policy as a warning:\n%s", out)
	}
	out = flatRun(payments, "plan")
	if !strings.Contains(out, `"`+callsPolicy+`" from workspace "accounts"`) {
		t.Fatalf("the payments plan does not list the accounts policy as a warning:\n%s", out)
	}
	first := composedSnapshot(t)

	// Whoever writes, the same object: an edit of the composed route makes
	// each state rewrite it in turn, accounts with its smaller registry.
	for i, w := range []*relTF{accounts, payments, accounts} {
		editLedgerTimeout(t)
		w.apply()
		requireSameSnapshot(t, fmt.Sprintf("after write %d (%s)", i+1, []string{"accounts", "payments", "accounts"}[i]), first, composedSnapshot(t))
	}
	payments.planIsEmpty()
	accounts.planIsEmpty()

	// Destroyed, then declared again under the same name: nothing of it
	// left in between, no error, no taint after.
	accounts.write(providerConfigOf(t, []string{"east", "onprem"}, `workspace = "accounts"`, kubeconfigConnection) + strings.Replace(accountsModule(module, ""), "calls     =", "# calls =", 1))
	accounts.apply()
	for _, c := range testClusters {
		if got := contributionsIn(ledgerVS(t, c)); strings.Contains(strings.Join(got, ","), callsPolicy) {
			t.Fatalf("the destroyed policy is still on the ledger's VirtualService in %s: %v", c, got)
		}
	}
	accounts.write(accountsConfig(""))
	accounts.apply()
	accounts.planIsEmpty()
	payments.planIsEmpty()

	// Forgotten by its state: the same name from an instance the state
	// does not hold is a plan error (workspace names are not identities),
	// and importing the instance takes it back.
	before := ledgerVS(t, "east")
	if out, code := accounts.run("state", "rm", callsAddr); code != 0 {
		t.Fatalf("terraform state rm failed:\n%s", out)
	}
	out, code := accounts.run("plan")
	out = strings.Join(strings.Fields(out), " ")
	if code == 0 || !strings.Contains(out, "Name taken by another instance") || !strings.Contains(out, contribPrefix+callsPolicy) || !strings.Contains(out, "terraform import") {
		t.Fatalf("the plan after state rm does not refuse the forgotten instance's name (exit %d):\n%s", code, out)
	}
	if out, code := accounts.run("import", callsAddr, callsPolicy); code != 0 {
		t.Fatalf("terraform import of the forgotten policy failed:\n%s", out)
	}
	after := ledgerVS(t, "east")
	oldID := before["metadata"].(map[string]any)["labels"].(map[string]any)[contribPrefix+callsPolicy]
	newID := after["metadata"].(map[string]any)["labels"].(map[string]any)[contribPrefix+callsPolicy]
	if oldID != newID || newID != accounts.attribute(callsAddr, "id") {
		t.Fatalf("the import did not take back the instance %v (state id %v, label now %v)", oldID, accounts.attribute(callsAddr, "id"), newID)
	}
	accounts.planIsEmpty()
	payments.planIsEmpty()
	first = composedSnapshot(t) // the accounts policy was declared again above: another instance

	// A hand-edited contribution that is still well-formed is trusted by
	// content (who may write it is RBAC's to say: docs/security.md):
	// another state's apply keeps and composes it, byte for byte, and its
	// owner's plan shows it changed; its owner's apply writes it back.
	forged := tamperContribution(t, "east", ledgerPolicy)
	editLedgerTimeout(t) // makes accounts rewrite the object
	accounts.apply()
	vs := ledgerVS(t, "east")
	if raw, _ := json.Marshal(vs["spec"]); !strings.Contains(string(raw), forged) {
		t.Fatalf("the well-formed edited contribution was not composed: %s", raw)
	}
	if got := contributionsIn(vs); !strings.Contains(strings.Join(got, ","), ledgerPolicy) {
		t.Fatalf("another state's apply removed a well-formed contribution: %v", got)
	}
	if out, code := payments.run("plan", "-detailed-exitcode"); code != 2 {
		t.Fatalf("the owner's plan does not show its edited contribution (exit %d):\n%s", code, out)
	}
	payments.apply() // its contribution was edited: restored
	requireSameSnapshot(t, "after the payments state restored its contribution", first, composedSnapshot(t))
	payments.planIsEmpty()
	accounts.planIsEmpty()

	// A conflicting setting fails at plan, naming both policies and
	// workspaces and the attribute, and nothing is written.
	accounts.write(accountsConfig("1s"))
	out, code = accounts.run("plan")
	out = strings.Join(strings.Fields(out), " ")
	if code == 0 {
		t.Fatalf("a timeout conflicting with the payments policy planned:\n%s", out)
	}
	for _, want := range []string{"Conflicting traffic policies", `"` + ledgerPolicy + `" from workspace "payments"`, `"` + callsPolicy + `" from workspace "accounts"`, "timeout"} {
		if !strings.Contains(out, want) {
			t.Fatalf("the conflict error does not name %s:\n%s", want, out)
		}
	}
	requireSameSnapshot(t, "after the failed plan", first, composedSnapshot(t))
	accounts.write(accountsConfig(""))
	accounts.planIsEmpty()
}

// editLedgerTimeout changes the timeout of the ledger's composed routes in
// east by hand, so that the next plan of either state rewrites it.
func editLedgerTimeout(t *testing.T) {
	t.Helper()
	o := getObject(t, "east", gvrVS, "istio-system", "tp-"+ledgerHost)
	if o == nil {
		t.Fatal("the ledger's VirtualService is missing in east")
	}
	routes, _, _ := unstructured.NestedSlice(o.Object, "spec", "http")
	for _, r := range routes {
		if m, ok := r.(map[string]any); ok {
			m["timeout"] = "42s"
		}
	}
	o.Object["spec"].(map[string]any)["http"] = routes
	if _, err := dyn(t, "east").Resource(gvrVS).Namespace("istio-system").Update(context.Background(), o, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
}

// tamperContribution rewrites a policy's contribution annotation as
// `kubectl annotate --overwrite` would, with a timeout no policy sets, and
// returns that timeout.
func tamperContribution(t *testing.T, cluster, policy string) string {
	t.Helper()
	o := getObject(t, cluster, gvrVS, "istio-system", "tp-"+ledgerHost)
	key := contribPrefix + policy
	raw := o.GetAnnotations()[key]
	if !strings.Contains(raw, `"timeout":"5s"`) {
		t.Fatalf("contribution %s has no timeout to forge: %s", key, raw)
	}
	// Every occurrence: the policy and the configuration it keeps for
	// import, so that the forged contribution stays consistent (valid).
	forged := strings.ReplaceAll(raw, `"timeout":"5s"`, `"timeout":"77s"`)
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{key: forged}}})
	if _, err := dyn(t, cluster).Resource(gvrVS).Namespace("istio-system").Patch(context.Background(), o.GetName(), types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kubectl-annotate"}); err != nil {
		t.Fatal(err)
	}
	return "77s"
}

// attribute reads a string attribute of a resource instance from the
// state file: addr is module.<m>.<type>.<name>, with ["key"] for an
// instance of for_each.
func (w *relTF) attribute(addr, name string) string {
	w.t.Helper()
	_, raw := w.stateFile()
	var s struct {
		Resources []struct {
			Module, Mode, Type, Name string
			Instances                []struct {
				IndexKey   any            `json:"index_key"`
				Attributes map[string]any `json:"attributes"`
			}
		}
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		w.t.Fatal(err)
	}
	for _, r := range s.Resources {
		for _, inst := range r.Instances {
			a := r.Type + "." + r.Name
			if r.Module != "" {
				a = r.Module + "." + a
			}
			if k, ok := inst.IndexKey.(string); ok {
				a += `["` + k + `"]`
			}
			if r.Mode == "managed" && a == addr {
				v, _ := inst.Attributes[name].(string)
				return v
			}
		}
	}
	w.t.Fatalf("%s is not in state", addr)
	return ""
}

// flatRun runs a Terraform command and returns its output with Terraform's
// line wrapping undone (every run of white space one space).
func flatRun(w *relTF, args ...string) string {
	w.t.Helper()
	out, _ := w.run(args...)
	return strings.Join(strings.Fields(out), " ")
}

// The team module used twice from one root: the two teams' policies on the
// ledger compose in one apply (from one workspace), the plan after is
// empty, and destroy leaves nothing, composed objects included.
func TestAccComposition_oneRoot(t *testing.T) {
	module := teamModule(t)
	w := newRelTF(t)
	relCleanup(t, w, nil)
	// The accounts module's calls name the ledger by hostname: it must
	// wait for the payments module's virtual destination.
	w.write(providerConfig(t, "") + paymentsModule(module) + strings.Replace(accountsModule(module, ""), "  calls     =", "  depends_on = [module.ledger]\n  calls     =", 1))
	if out, code := w.run("get", "-no-color"); code != 0 {
		t.Fatalf("terraform get failed (exit %d):\n%s", code, out)
	}
	w.apply()
	want := []string{callsPolicy + " (annotations)", callsPolicy + " (labels)", ledgerPolicy + " (annotations)", ledgerPolicy + " (labels)"}
	for _, c := range testClusters {
		if got := contributionsIn(ledgerVS(t, c)); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("contributions to the ledger's VirtualService in %s: %v, want %v", c, got, want)
		}
	}
	requireNoOrphans(t, w)
	if out := flatRun(w, "plan"); strings.Contains(out, "Traffic also shaped by another workspace") {
		t.Fatalf("policies of one root are reported as another workspace's:\n%s", out)
	}
	w.planIsEmpty()
	w.destroy()
	if left := relAllOwned(t); len(left) > 0 {
		t.Fatalf("destroy left %v", left)
	}
}
