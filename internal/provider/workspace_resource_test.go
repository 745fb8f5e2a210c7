package provider

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
)

// A workspace's roster (mesh_workspace) finds its orphans: a traffic
// policy forgotten with `terraform state rm` and deleted from the
// configuration is reported by the plan, which writes nothing, and
// released by the apply; a policy of another workspace on the same objects
// is never an orphan; a policy the state holds but the roster does not
// list is a plan error. Istio's validation webhook of the local mesh
// admits every object written.
func TestAccWorkspace_releasesOrphans(t *testing.T) {
	module := teamModule(t)
	w := newRelTF(t)
	relCleanup(t, w, nil)
	// A policy of workspace "others" on the ledger, written through a
	// second provider configuration.
	others := strings.Replace(providerConfig(t, `workspace = "others"`), "provider \"mesh\" {\n", "provider \"mesh\" {\n  alias = \"others\"\n", 1) + `
resource "mesh_traffic_policy" "others" {
  provider    = mesh.others
  depends_on  = [module.ledger]
  name        = "web-to-ledger"
  destination = { virtual_destination = "` + ledgerHost + `" }
  sources     = { namespaces = ["web"] }
  headers     = { request = { set = { "x-caller-team" = "web" } } }
}
`
	roster := `
resource "mesh_workspace" "teams" {
  traffic_policies = concat(module.ledger.traffic_policies, module.account.traffic_policies)
}
`
	accounts := func(calls bool) string {
		m := strings.Replace(accountsModule(module, ""), "  calls     =", "  depends_on = [module.ledger]\n  calls     =", 1)
		if !calls {
			m = strings.Replace(m, "  calls     =", "  # calls   =", 1)
		}
		return m
	}
	config := func(calls bool, extra string) string {
		return providerConfig(t, `workspace = "teams"`) + others + paymentsModule(module) + accounts(calls) + roster + extra
	}
	w.write(config(true, ""))
	if out, code := w.run("get", "-no-color"); code != 0 {
		t.Fatalf("terraform get failed (exit %d):\n%s", code, out)
	}
	// The other provider configuration finds the ledger by its records in
	// the clusters, as another state would.
	w.apply("-target=module.ledger.mesh_virtual_destination.service")
	w.apply()
	want := []string{callsPolicy, ledgerPolicy, "web-to-ledger"}
	requireContributors(t, want)
	w.planIsEmpty()
	if got := w.attribute("mesh_workspace.teams", "id"); got != "teams" {
		t.Fatalf("the roster's id is %q, want the provider's workspace %q", got, "teams")
	}

	// A policy the state holds but the roster leaves out: a plan error
	// naming it, and nothing written.
	before := composedSnapshot(t)
	w.write(config(true, `
resource "mesh_traffic_policy" "unlisted" {
  depends_on  = [module.ledger]
  name        = "unlisted"
  destination = { virtual_destination = "`+ledgerHost+`" }
  sources     = { namespaces = ["users"] }
  headers     = { request = { set = { "x-unlisted" = "1" } } }
}
`))
	out, code := w.run("plan", "-no-color")
	flat := strings.Join(strings.Fields(out), " ")
	if code == 0 || !strings.Contains(flat, "Traffic policy not listed") || !strings.Contains(flat, `"unlisted"`) {
		t.Fatalf("a traffic policy missing from the roster planned (exit %d):\n%s", code, out)
	}
	requireSameSnapshot(t, "after the refused plan", before, composedSnapshot(t))
	w.write(config(true, ""))

	// Forgotten by the state and deleted from the configuration: the
	// orphan is reported, the plan writes nothing, the apply releases it.
	if out, code := w.run("state", "rm", callsAddr); code != 0 {
		t.Fatalf("terraform state rm failed:\n%s", out)
	}
	w.write(config(false, ""))
	out, code = w.run("plan", "-no-color", "-detailed-exitcode")
	flat = strings.Join(strings.Fields(out), " ")
	if code != 2 {
		t.Fatalf("the plan with an orphan shows no change (exit %d):\n%s", code, out)
	}
	for _, s := range []string{"Orphaned contribution will be released", "Traffic policy " + callsPolicy + " (instance ", contribPrefix + callsPolicy,
		"VirtualService istio-system/tp-" + ledgerHost + " in cluster east", "~ orphans = {} -> (known after apply)"} {
		if !strings.Contains(flat, s) {
			t.Fatalf("the plan does not show %q:\n%s", s, out)
		}
	}
	for _, s := range []string{"Traffic policy web-to-ledger", "Traffic policy " + ledgerPolicy} {
		if strings.Contains(flat, s) {
			t.Fatalf("the plan calls a live policy an orphan (%s):\n%s", s, out)
		}
	}
	requireSameSnapshot(t, "after the plan", before, composedSnapshot(t))
	w.apply()
	requireContributors(t, []string{ledgerPolicy, "web-to-ledger"})
	out, _ = w.run("state", "show", "-no-color", "mesh_workspace.teams")
	if !strings.Contains(out, `"`+callsPolicy+`/east/VirtualService.networking.istio.io/istio-system/tp-`+ledgerHost+`"`) {
		t.Fatalf("the roster does not record the released orphan:\n%s", out)
	}
	for _, c := range testClusters {
		raw, err := json.Marshal(ledgerVS(t, c)["spec"])
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(raw), `"x-caller-team":"accounts"`) {
			t.Fatalf("the released policy's routes are still composed in %s: %s", c, raw)
		}
	}
	w.planIsEmpty()

	// Imported by the workspace identity: the roster lists the policies
	// its claim lists (not the other workspace's); the next apply takes
	// the claim over with a new token, and the plan after is empty.
	if out, code := w.run("state", "rm", "mesh_workspace.teams"); code != 0 {
		t.Fatalf("terraform state rm failed:\n%s", out)
	}
	if out, code := w.run("import", "mesh_workspace.teams", "others"); code == 0 || !strings.Contains(strings.Join(strings.Fields(out), " "), `must be the provider's workspace, "teams"`) {
		t.Fatalf("importing the roster of another workspace did not fail naming this one (exit %d):\n%s", code, out)
	}
	if out, code := w.run("import", "mesh_workspace.teams", "teams"); code != 0 {
		t.Fatalf("terraform import failed:\n%s", out)
	}
	out, _ = w.run("state", "show", "-no-color", "mesh_workspace.teams")
	if !strings.Contains(out, `"`+ledgerPolicy+`"`) || !strings.Contains(out, `"accounts-account"`) || strings.Contains(out, "web-to-ledger") {
		t.Fatalf("the imported roster does not list exactly this workspace's policies:\n%s", out)
	}
	oldToken := w.attribute("mesh_workspace.teams", "token")
	if out := flatRun(w, "plan", "-no-color"); !strings.Contains(out, "Workspace claim taken over") || strings.Contains(out, "Orphaned contribution") {
		t.Fatalf("the plan after importing the roster does not take its claim over (or finds orphans):\n%s", out)
	}
	w.apply()
	if token := w.attribute("mesh_workspace.teams", "token"); token == "" || token == oldToken {
		t.Fatalf("the imported roster's token is %q after apply, want a new one", token)
	}
	requireContributors(t, []string{ledgerPolicy, "web-to-ledger"})
	w.planIsEmpty()

	// Another workspace identity makes it another workspace's roster:
	// replaced, not refused.
	w.write(strings.Replace(config(false, ""), `workspace = "teams"`, `workspace = "teams-renamed"`, 1))
	out, _ = w.run("plan", "-no-color")
	if !strings.Contains(out, "mesh_workspace.teams must be replaced") {
		t.Fatalf("a new workspace identity does not replace the roster:\n%s", out)
	}
	w.write(config(false, ""))

	w.destroy()
	if left := relAllOwned(t); len(left) > 0 {
		t.Fatalf("destroy left %v", left)
	}
}

// requireContributors checks which traffic policies contribute to the
// ledger's composed objects, across clusters (annotation and label each).
func requireContributors(t *testing.T, want []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range testClusters {
		for _, got := range contributionsIn(ledgerVS(t, c)) {
			name, _, _ := strings.Cut(got, " (")
			seen[name] = true
		}
	}
	if got := sortedKeys(seen); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("traffic policies contributing to the ledger's VirtualService: %v, want %v", got, want)
	}
}

// Orphans are contributions of this state's instances (members) that no
// policy of the state holds: never another state's, whatever workspace
// name it carries, never an invalid one, never a listed one's current
// instance; an old instance of a listed name whose new instance this run
// holds is one (instances decide, not names).
func TestOrphansAmong(t *testing.T) {
	en := engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "istio-system", Name: "tp-a"}
	found := []engine.LiveContribution{
		{Entry: en, Name: "listed", ID: "1", Workspace: "default"},
		{Entry: en, Name: "gone", ID: "2", Workspace: "default"},
		{Entry: en, Name: "theirs", ID: "3", Workspace: "default"},
		{Entry: en, Name: "old-build", ID: "4", Workspace: ""},
		{Entry: en, Name: "forged", ID: "5", Workspace: "default", Untrusted: "not a contribution"},
		{Entry: en, Name: "no-id", ID: "", Workspace: "default"},
	}
	members := map[string]string{"1": "listed", "2": "gone", "5": "forged"}
	got := orphansAmong(found, members, map[string]bool{"listed": true}, nil, nil, "default")
	if len(got) != 1 || got[0].Policy != "gone" || got[0].ID != "2" || got[0].key() != "gone/east/VirtualService.networking.istio.io/istio-system/tp-a" {
		t.Fatalf("orphans: %+v, want only gone (instance 2)", got)
	}
	if got := orphansAmong(found, nil, nil, nil, nil, "default"); len(got) != 0 {
		t.Fatalf("a roster with no members has no orphans (another state's policies carry the same workspace), got %+v", got)
	}
	if got := orphansAmong(found, members, map[string]bool{"listed": true}, nil, map[string]bool{"2": true}, "default"); len(got) != 0 {
		t.Fatalf("an instance another state's claim lists (handed over) is not an orphan, got %+v", got)
	}
	// The listed policy was replaced: this run holds instance 9 of it, so
	// instance 1, still on the object, is an old one to release; the held
	// instance itself never is.
	held := map[string]map[string]bool{"listed": {"9": true}}
	got = orphansAmong(found, members, map[string]bool{"listed": true}, held, nil, "default")
	if len(got) != 2 || got[0].Policy != "gone" || got[1].Policy != "listed" || got[1].ID != "1" {
		t.Fatalf("orphans with a new instance of a listed name held: %+v, want gone (2) and the old instance of listed (1)", got)
	}
	held["listed"]["1"] = true
	if got = orphansAmong(found, members, map[string]bool{"listed": true}, held, nil, "default"); len(got) != 1 || got[0].Policy != "gone" {
		t.Fatalf("an instance this run holds is released: %+v", got)
	}
}

// Orphan release judges a contribution by what it says, not by its
// instance label alone (issue 36, item 8): another state's contribution
// relabelled with an instance of this state's roster is not released,
// whether its name is not the one the roster knows for that instance or
// its content names another workspace. The same contributions with
// labels and content that agree are orphans.
func TestOrphanReleaseDoesNotTrustARelabelledContribution(t *testing.T) {
	en := engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "istio-system", Name: "tp-a"}
	members := map[string]string{"1": "gone", "2": "left"}
	relabelled := []engine.LiveContribution{
		// Another state's "payments-retries", its label set to instance 1
		// of this state (policy "gone").
		{Entry: en, Name: "payments-retries", ID: "1"},
		// Another state's "left" (its content names workspace payments),
		// labelled with this state's instance 2 of that name.
		{Entry: en, Name: "left", ID: "2", Workspace: "payments"},
	}
	if got := orphansAmong(relabelled, members, nil, nil, nil, "checkout"); len(got) != 0 {
		t.Fatalf("relabelled contributions released as orphans: %+v", got)
	}
	agreeing := []engine.LiveContribution{
		{Entry: en, Name: "gone", ID: "1"},
		{Entry: en, Name: "left", ID: "2", Workspace: "checkout"},
	}
	if got := orphansAmong(agreeing, members, nil, nil, nil, "checkout"); len(got) != 2 || got[0].Policy != "gone" || got[1].Policy != "left" {
		t.Fatalf("orphans whose label and content agree: %+v, want gone (1) and left (2)", got)
	}
}

// An orphan candidate that another token's claim lists is shielded (not
// released) with a warning naming the claim and how to let it go; this
// state's own claim shields nothing (issue 36, item 7).
func TestShieldedOrphanIsAWarningNamingTheClaim(t *testing.T) {
	en := engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "istio-system", Name: "tp-a"}
	candidates := []orphan{{Policy: "gone", ID: "2", Entry: en}, {Policy: "other", ID: "3", Entry: en}}
	claims := []shareddata.Claim{
		{Cluster: "east", Identity: "payments", Token: "tok-b", Members: map[string]string{"2": "gone"}},
		{Cluster: "east", Identity: "mine", Token: "tok-mine", Members: map[string]string{"3": "other"}},
	}
	elsewhere, diags := shielded(candidates, claims, "tok-mine")
	if !elsewhere["2"] || elsewhere["3"] || len(elsewhere) != 1 {
		t.Fatalf("shielded %v: want instance 2 only (this state's own claim shields nothing)", elsewhere)
	}
	text := diagText(diags)
	if diags.HasError() || len(diags) != 1 {
		t.Fatalf("want one warning, got:\n%s", text)
	}
	for _, want := range []string{"Orphan shielded by another state's claim", `"gone"`, `"payments"`, shareddata.ClaimName("payments"), "east", "delete that claim"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the warning does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "tok-b") {
		t.Fatalf("the warning prints the other state's token:\n%s", text)
	}
}

// A claim of another state in a format this build does not read (a
// newer build's) may list any orphan candidate: it shields them all, with
// a warning naming the claim and the upgrade; this state's own such claim
// shields nothing.
func TestUnreadableClaimShieldsEveryCandidate(t *testing.T) {
	en := engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "istio-system", Name: "tp-a"}
	candidates := []orphan{{Policy: "gone", ID: "2", Entry: en}, {Policy: "other", ID: "3", Entry: en}}
	why := errors.New("ConfigMap mesh-intent-records/" + shareddata.ClaimName("payments") + ": it is in claim format version 2, and this provider reads versions up to 1: it was written by a newer terraform-provider-mesh; upgrade this provider to read it")
	mine := []shareddata.Claim{{Cluster: "east", Identity: "mine", Token: "tok-mine", Unreadable: why}}
	if elsewhere, diags := shielded(candidates, mine, "tok-mine"); len(elsewhere) != 0 || len(diags) != 0 {
		t.Fatalf("this state's own claim shielded %v (%s)", elsewhere, diagText(diags))
	}
	theirs := []shareddata.Claim{{Cluster: "east", Identity: "payments", Token: "tok-b", Unreadable: why}}
	elsewhere, diags := shielded(candidates, theirs, "tok-mine")
	if !elsewhere["2"] || !elsewhere["3"] || len(elsewhere) != 2 {
		t.Fatalf("shielded %v: want both candidates", elsewhere)
	}
	text := diagText(diags)
	if diags.HasError() || len(diags) != 1 {
		t.Fatalf("want one warning, got:\n%s", text)
	}
	for _, want := range []string{"cannot read", shareddata.ClaimName("payments"), "east", "none is released", "Upgrade terraform-provider-mesh"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the warning does not say %q:\n%s", want, text)
		}
	}
}

// Importing a traffic policy instance that another state's claim lists
// is told (issue 36, item 8), naming the identity and claim; a claim that
// lists another instance, or this state's own explicit workspace, is not.
func TestImportOfAPolicyAnotherClaimListsWarns(t *testing.T) {
	claims := []shareddata.Claim{
		{Cluster: "east", Identity: "payments", Token: "tok-b", Members: map[string]string{"id-a": "a"}},
		{Cluster: "west", Identity: "payments", Token: "tok-b", Members: map[string]string{"id-a": "a"}},
		{Cluster: "east", Identity: "accounts", Token: "tok-c", Members: map[string]string{"id-other": "a"}},
	}
	d := importClaimedElsewhere("a", "id-a", claims, "accounts", true)
	text := diagText(d)
	if d.HasError() || len(d) != 1 {
		t.Fatalf("want one warning, got:\n%s", text)
	}
	for _, want := range []string{"Imported policy listed by another state's claim", `"a"`, "id-a", `"payments"`, shareddata.ClaimName("payments"), "east, west"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the warning does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "tok-b") {
		t.Fatalf("the warning prints the other state's token:\n%s", text)
	}
	if d := importClaimedElsewhere("a", "id-a", claims, "payments", true); len(d) != 0 {
		t.Fatalf("this state's own claim warns:\n%s", diagText(d))
	}
}
