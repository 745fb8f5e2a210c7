package provider

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// wsPlan runs mesh_workspace's ModifyPlan on config; prior nil plans a
// create (as Terraform's second plan of a replacement does).
func wsPlan(t *testing.T, data *providerData, config string, prior map[string]string) diag.Diagnostics {
	t.Helper()
	ctx := context.Background()
	r := NewWorkspaceResource().(*workspaceResource)
	r.data = data
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx)
	v, err := discovery.ConfigValue(typ, config)
	if err != nil {
		t.Fatal(err)
	}
	state := tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(typ, nil)}
	if prior != nil {
		state.Raw = v
		for k, val := range prior {
			if d := state.SetAttribute(ctx, path.Root(k), val); d.HasError() {
				t.Fatal(d)
			}
		}
	}
	req := resource.ModifyPlanRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: v}, Plan: tfsdk.Plan{Schema: sr.Schema, Raw: v}, State: state}
	resp := resource.ModifyPlanResponse{Plan: req.Plan}
	r.ModifyPlan(ctx, req, &resp)
	return resp.Diagnostics
}

const rosterConfig = `{"id":null,"token":null,"traffic_policies":[],"claimed_in":null,"orphans":null}`

// claimEverywhere writes identity's claim with token in every cluster of
// the provider's registry.
func claimEverywhere(t *testing.T, data *providerData, identity, token string) {
	t.Helper()
	for _, c := range data.Registry.Names() {
		if err := data.claims().WriteClaim(context.Background(), shareddata.Claim{Cluster: c, Identity: identity, Token: token, Members: map[string]string{"id-a": "a-timeout"}}); err != nil {
			t.Fatal(err)
		}
	}
}

// A state that names an identity another state claims fails at plan,
// naming the claim, its clusters and its policies, never its token
// (issue 36, item 7); its own claim (same token) plans clean.
func TestRosterPlanRefusesAnotherStatesIdentity(t *testing.T) {
	data := recordsData(newFakeClusterSet(t, probeRegistry().Names()...))
	data.Workspace, data.WorkspaceExplicit = "payments", true
	claimEverywhere(t, data, "payments", "tok-a")
	d := wsPlan(t, data, rosterConfig, nil)
	for _, want := range []string{"Workspace identity claimed by another state", `"payments"`, shareddata.ClaimName("payments"), "a-timeout", "a new roster"} {
		if !d.HasError() || !strings.Contains(diagText(d), want) {
			t.Fatalf("a new roster naming a claimed identity: want an error naming %q, got:\n%s", want, diagText(d))
		}
	}
	if strings.Contains(diagText(d), "tok-a") {
		t.Fatalf("the error prints the other state's claim token:\n%s", diagText(d))
	}
	if d := wsPlan(t, data, rosterConfig, map[string]string{"id": "payments", "token": "tok-a"}); d.HasError() {
		t.Fatalf("the claiming state's own plan fails:\n%s", diagText(d))
	}
}

// Terraform plans a roster's replacement (-replace, taint) twice, the
// second time without the prior state: the state's own claim is not taken
// for another state's there.
func TestRosterReplacementKeepsItsClaim(t *testing.T) {
	data := recordsData(newFakeClusterSet(t, probeRegistry().Names()...))
	data.Workspace, data.WorkspaceExplicit = "payments", true
	claimEverywhere(t, data, "payments", "tok-own")
	if d := wsPlan(t, data, rosterConfig, map[string]string{"id": "payments", "token": "tok-own"}); d.HasError() {
		t.Fatalf("plan with prior state: %s", diagText(d))
	}
	d := wsPlan(t, data, rosterConfig, nil)
	if d.HasError() {
		t.Fatalf("the create half of the roster's own replacement fails at plan:\n%s", diagText(d))
	}
	if !strings.Contains(diagText(d), "Workspace claim taken over") {
		t.Fatalf("the replacement's plan does not say it takes its claim over:\n%s", diagText(d))
	}
	// Another process (another state) remembers no such token.
	other := recordsData(data.Engine.Clients.(fakeClusterSet))
	other.Workspace, other.WorkspaceExplicit = "payments", true
	if d := wsPlan(t, other, rosterConfig, nil); !d.HasError() {
		t.Fatal("another state's new roster took over the claim without a collision error")
	}
}

// A contribution records the provider's workspace only when the
// configuration sets it: a defaulted name tells nothing, and builds before
// 0.1 release every unlisted contribution that records their own
// workspace name ("default" in every root) as their orphan.
func TestContributionsRecordOnlyAChosenWorkspace(t *testing.T) {
	reg := probeRegistry()
	self := trafficpolicy.Named{Policy: trafficpolicy.Intent{Name: "mine", Timeout: "2s"},
		Destination: trafficpolicy.Destination{VirtualDestination: "user.global", VirtualDestinationName: "user", BackendClusters: reg.Names()}}
	for _, tc := range []struct {
		explicit bool
		want     string
	}{{false, ""}, {true, "payments"}} {
		data := &providerData{Registry: reg, Workspace: map[bool]string{false: "default", true: "payments"}[tc.explicit], WorkspaceExplicit: tc.explicit}
		raw := trafficPolicyComposition(self, data).Contribution.Whole.Raw
		var c struct {
			Workspace *string `json:"workspace"`
		}
		if err := json.Unmarshal([]byte(raw), &c); err != nil {
			t.Fatal(err)
		}
		got := ""
		if c.Workspace != nil {
			got = *c.Workspace
		}
		if got != tc.want {
			t.Fatalf("workspace set explicitly %v: the contribution records %q, want %q (%s)", tc.explicit, got, tc.want, raw)
		}
	}
}

// A roster of a build before tokens (id = the Terraform workspace's
// name, no token) is replaced, so that its minted identity comes with a
// create: an update may not change the resource identity, and Terraform
// would find the change only after the claim was written. A roster with
// a token, or an imported one, keeps its id in place; an update asked to
// mint an identity refuses before it writes.
func TestRosterOfAnOldBuildIsReplaced(t *testing.T) {
	data := recordsData(newFakeClusterSet(t, probeRegistry().Names()...))
	data.Workspace = "default"
	r := NewWorkspaceResource().(*workspaceResource)
	r.data = data
	for _, c := range []struct {
		name     string
		prior    workspaceModel
		imported bool
		replace  bool
	}{
		{"old build", workspaceModel{ID: types.StringValue("default"), Token: types.StringNull()}, false, true},
		{"with a token", workspaceModel{ID: types.StringValue("default-0a1b2c3d"), Token: types.StringValue("tok")}, false, false},
		{"imported", workspaceModel{ID: types.StringValue("default-0a1b2c3d"), Token: types.StringNull()}, true, false},
		{"new", workspaceModel{ID: types.StringNull(), Token: types.StringNull()}, false, false},
	} {
		var resp resource.ModifyPlanResponse
		id, _ := r.plannedIdentity(c.prior, c.imported, &resp)
		replaced := len(resp.RequiresReplace) == 1 && resp.RequiresReplace[0].Equal(path.Root("id"))
		if replaced != c.replace || (len(resp.RequiresReplace) > 0 && !replaced) {
			t.Errorf("%s: requires replace %v, want the id's: %v", c.name, resp.RequiresReplace, c.replace)
		}
		if c.replace && !id.IsUnknown() {
			t.Errorf("%s: planned id %s, want one minted at the create", c.name, id)
		}
	}

	ctx := context.Background()
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	v, err := discovery.ConfigValue(sr.Schema.Type().TerraformType(ctx), rosterConfig)
	if err != nil {
		t.Fatal(err)
	}
	state := tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(sr.Schema.Type().TerraformType(ctx), nil)}
	var d diag.Diagnostics
	m, _ := r.fromPlan(ctx, tfsdk.Plan{Schema: sr.Schema, Raw: v}, &d)
	r.apply(ctx, &m, nil, &state, nil, false, &d)
	if !strings.Contains(diagText(d), "Workspace identity not planned") || !state.Raw.IsNull() {
		t.Fatalf("an update with no identity planned: state %v, diagnostics %s", state.Raw, diagText(d))
	}
}

// Stale claims of this state's own former identities (issue 36): a claim
// of another identity and token that lists only policy instances this
// state holds. Another state's claim (an instance this state does not
// hold, or the same instance ID under another name), this state's own
// claim, and a claim of no policy are not stale.
func TestStaleClaimsAreThisStatesFormerIdentities(t *testing.T) {
	held := map[string]map[string]bool{"a-timeout": {"id-a": true}, "b-retries": {"id-b": true}}
	claims := []shareddata.Claim{
		{Cluster: "west", Identity: "default-dead", Token: "t-dead", Members: map[string]string{"id-a": "a-timeout", "id-b": "b-retries"}},
		{Cluster: "east", Identity: "default-dead", Token: "t-dead", Members: map[string]string{"id-a": "a-timeout"}},
		{Cluster: "east", Identity: "default-live", Token: "t-mine", Members: map[string]string{"id-a": "a-timeout"}},
		{Cluster: "east", Identity: "payments", Token: "t-pay", Members: map[string]string{"id-a": "a-timeout", "id-p": "ledger"}},
		{Cluster: "east", Identity: "renamed", Token: "t-ren", Members: map[string]string{"id-a": "other-name"}},
		{Cluster: "east", Identity: "empty", Token: "t-empty", Members: map[string]string{}},
	}
	got := staleClaims(claims, "default", "default-live", "t-mine", held)
	if len(got) != 2 || got[0].Identity != "default-dead" || got[0].Cluster != "east" || got[1].Cluster != "west" {
		t.Fatalf("stale claims %+v: want default-dead's in east and west only", got)
	}
	// A new roster (identity and token unknown at plan) finds them too.
	if got := staleClaims(claims, "default", "", "", held); len(got) != 3 || got[2].Identity != "default-live" {
		t.Fatalf("stale claims of a new roster %+v: want default-dead's twice and default-live's", got)
	}
	if got := staleClaims(claims, "default", "default-live", "t-mine", nil); len(got) != 0 {
		t.Fatalf("a state that holds nothing finds stale claims: %+v", got)
	}
}

// A claim leaked by a killed first apply (or a roster removed with
// terraform state rm) does not veto release forever (issue 36): the next
// roster of the state finds it, as it lists only instances the state
// holds, names it in a plan warning, and its apply removes it in every
// cluster. An orphan candidate it listed is then no longer shielded.
func TestRosterRemovesTheStaleClaimOfItsFormerIdentity(t *testing.T) {
	data := recordsData(newFakeClusterSet(t, probeRegistry().Names()...))
	data.Workspace = "default"
	claimEverywhere(t, data, "default-dead0001", "tok-leaked") // lists id-a, a-timeout
	data.Roster.Hold("a-timeout", "id-a")
	d := wsPlan(t, data, `{"id":null,"token":null,"traffic_policies":["a-timeout"],"claimed_in":null,"orphans":null}`, nil)
	if d.HasError() {
		t.Fatalf("plan: %s", diagText(d))
	}
	for _, want := range []string{"Stale claim of this state's former identity will be removed", `"default-dead0001"`, shareddata.ClaimName("default-dead0001"), "east, west", "a-timeout"} {
		if !strings.Contains(diagText(d), want) {
			t.Fatalf("the plan does not say %q:\n%s", want, diagText(d))
		}
	}
	if strings.Contains(diagText(d), "tok-leaked") {
		t.Fatalf("the plan prints the stale claim's token:\n%s", diagText(d))
	}

	ctx := context.Background()
	r := NewWorkspaceResource().(*workspaceResource)
	r.data = data
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	v, err := discovery.ConfigValue(sr.Schema.Type().TerraformType(ctx), `{"id":null,"token":null,"traffic_policies":["a-timeout"],"claimed_in":null,"orphans":null}`)
	if err != nil {
		t.Fatal(err)
	}
	var diags diag.Diagnostics
	m, _ := r.fromPlan(ctx, tfsdk.Plan{Schema: sr.Schema, Raw: v}, &diags)
	m.ID, m.Token = types.StringUnknown(), types.StringUnknown()
	state := tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(sr.Schema.Type().TerraformType(ctx), nil)}
	r.apply(ctx, &m, nil, &state, fakePrivate{}, true, &diags)
	if diags.HasError() {
		t.Fatalf("apply: %s", diagText(diags))
	}
	claims, errs := data.claims().ListClaims(ctx, probeRegistry().Names())
	if len(errs) > 0 || len(claims) != 2 {
		t.Fatalf("claims after the apply %+v (errors %v): want the new roster's, in east and west", claims, errs)
	}
	for _, c := range claims {
		if c.Identity == "default-dead0001" || c.Token != m.Token.ValueString() {
			t.Fatalf("claim %+v left after the apply: want the new roster's only", c)
		}
	}
	// The policy leaves the state later: its contribution is a candidate,
	// and no claim of another state shields it any more.
	candidates := []orphan{{Policy: "a-timeout", ID: "id-a"}}
	if elsewhere, _ := shielded(candidates, claims, m.Token.ValueString()); elsewhere["id-a"] {
		t.Fatal("the policy is still shielded from release")
	}
}
