package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework-validators/setvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
)

// mesh_workspace is the roster of a Terraform state: the traffic policies
// it holds, and the workspace identity it claims.
//
// Ownership is by instance. Every contribution carries the instance ID of
// the resource that wrote it; the roster remembers the instances its state
// held (members, in its private state), and a contribution is this state's
// only when its instance is one of them. So two states that both leave the
// provider's workspace at its default ("default") never take each other's
// contributions for their own: the workspace name in a contribution is a
// label for messages, never a key.
//
// An orphan is a trusted contribution of a member instance whose policy the
// state no longer lists or holds (`terraform state rm` with the block
// deleted): the plan reports it and the apply releases it, as prune does
// for an intent's own objects.
//
// The identity is the provider's workspace when the configuration sets it,
// else one minted at create ("<terraform workspace>-<random>"). The roster
// claims it in every registered cluster (shareddata/claim.go) with a token it
// minted (an identifier, not a secret: docs/security.md); a state that names an identity another state claims
// fails at plan, naming the other state's claim.

var (
	_ resource.ResourceWithConfigure   = &workspaceResource{}
	_ resource.ResourceWithModifyPlan  = &workspaceResource{}
	_ resource.ResourceWithImportState = &workspaceResource{}
)

// NewWorkspaceResource is mesh_workspace.
func NewWorkspaceResource() resource.Resource {
	return &workspaceResource{resourceBase[workspaceModel]{kind: intentkind.Workspace}}
}

// workspaceResource writes claims, not translated objects, so it has the
// skeleton every resource shares (resourceBase) and steps of its own.
type workspaceResource struct {
	resourceBase[workspaceModel]
}

type workspaceModel struct {
	ID              types.String `tfsdk:"id"`
	Token           types.String `tfsdk:"token"`
	TrafficPolicies types.Set    `tfsdk:"traffic_policies"`
	ClaimedIn       types.Set    `tfsdk:"claimed_in"`
	Orphans         types.Map    `tfsdk:"orphans"`
}

// orphanKind is the kind of intent whose contributions the roster checks:
// traffic policies are the only intents that compose.
var orphanKind = intentkind.TrafficPolicy.Owner

// Private-state keys of the roster: its members (the instance IDs of the
// traffic policies its state held, to their names), the token of a claim
// it takes over at its next apply (after an import), and the namespace
// its claims were written in.
const (
	membersKey        = "members"
	replacesKey       = "replaces"
	claimNamespaceKey = "claim_namespace"
)

func (r *workspaceResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Version: schemaVersion,
		MarkdownDescription: "The roster of this Terraform state: the traffic policies it holds, and the workspace identity it claims. " +
			"Every traffic policy's contribution to a shared VirtualService or DestinationRule records the instance ID of the resource that wrote it; the roster remembers which instances this state held, " +
			"so a contribution is this state's only when its instance is one of them, whatever workspace name the contribution carries. " +
			"A contribution of such an instance whose policy is no longer listed is an *orphan* (its resource left the state without a destroy: `terraform state rm` with the block deleted) " +
			"and would otherwise keep shaping traffic: the plan lists orphans in every registered cluster, with a warning per policy, and the apply releases them. " +
			"Contributions of other states are never orphans, even when both states leave the provider's `workspace` unset. " +
			"The roster also claims its identity (`id`) in every registered cluster's records namespace (a pull cluster's claim is published in its artifact, which Flux applies there); a state that names an identity another state claims fails at plan, so two states that set the same `workspace` never publish one artifact. " +
			"Declare one per state, listing every traffic policy of the state, typically from module outputs; a traffic policy planned in this state but not listed is a plan error. " +
			"Destroying the roster releases its claim and no contribution.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The workspace identity this state claims: the provider's `workspace` when the configuration sets it (a new value replaces the roster), " +
					"else one minted at create, `<terraform workspace>-<8 hex digits>`, so that two states left at their defaults never share one. Also the import ID.",
				Computed:      true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"token": schema.StringAttribute{
				MarkdownDescription: "Random token minted at create that marks this state's claim on the identity in the clusters; another state's claim carries another token. " +
					"An identifier that tells claims apart, not a secret: it is stored in the claim ConfigMap, readable by whoever can read the records namespace. Marked sensitive so that plans and other states' messages do not print it.",
				Computed:      true,
				Sensitive:     true,
				PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"traffic_policies": schema.SetAttribute{
				MarkdownDescription: "Names of every `mesh_traffic_policy` this state holds, e.g. `[for p in mesh_traffic_policy.all : p.name]` or a module output. " +
					"A policy of this state (an instance the roster has seen) that is not listed is released as an orphan.",
				ElementType: types.StringType,
				Required:    true,
				Validators:  []validator.Set{setvalidator.ValueStringsAre(dnsLabelValidator{})},
			},
			"claimed_in": schema.SetAttribute{
				MarkdownDescription: "The clusters whose records namespace holds this state's claim on the identity (a ConfigMap `mesh-workspace-<hash of the identity>`): every registered cluster after an apply. " +
					"Refresh drops a cluster whose claim is gone, and the next apply writes it again.",
				ElementType: types.StringType,
				Computed:    true,
			},
			"orphans": schema.MapAttribute{
				MarkdownDescription: "The orphans the last apply released: contributions of this state's policy instances that no listed policy owned, as `<policy>/<cluster>/<Kind>.<group>/<namespace>/<name>` to the instance ID of the resource that wrote it. " +
					"A plan that finds orphans names each in a warning and plans this attribute as known after apply (the apply releases what it finds then, by the same rule); refresh empties it.",
				ElementType: types.StringType,
				Computed:    true,
			},
		},
	}
}

// orphan is one contribution to release.
type orphan struct {
	Policy, ID string
	Entry      engine.Entry
}

func (o orphan) key() string { return o.Policy + "/" + o.Entry.StateKey() }

// orphansAmong picks the orphans from contributions found on composed
// objects, by the one verdict on each (shareddata.Judge: an invalid or
// unreadable one is never an orphan): valid ones of an instance among
// members (this state's) that no other state's claim lists (a policy
// handed over to another state: `terraform state rm` here, `terraform
// import` there), and that no policy of the state holds now. Instances,
// not names, decide: a policy whose name is known (listed in the roster,
// or held) keeps its contribution unless this run holds another instance
// of that name, whose old instance it then is (issue 36, item 8); held
// are the instances held in this run, by name.
//
// The instance label alone decides nothing: the contribution's content
// must agree with what the roster knows of that instance (issue 36, item
// 8: a relabelled contribution). Its name (the annotation's, which its
// content must match to compose) is the member's name, since a policy's
// name never changes over an instance's life; and the workspace its
// content names, when it names one, is this state's (workspace, the
// workspace this state's contributions record).
func orphansAmong(found []engine.LiveContribution, members map[string]string, known map[string]bool, held map[string]map[string]bool, claimedElsewhere map[string]bool, workspace string) []orphan {
	roster := engine.Owner{Kind: orphanKind, Composition: &engine.Composition{Orphan: func(c engine.LiveContribution) bool {
		name, id := c.Name, c.ID
		switch {
		case members[id] != name || claimedElsewhere[id] || held[name][id]:
			return false
		case c.Workspace != "" && c.Workspace != workspace:
			return false // its content says another state wrote it
		case known[name]:
			return len(held[name]) > 0 // an old instance of a held name
		}
		return true
	}}}
	var out []orphan
	for _, v := range shareddata.Judge(roster, found) {
		if v.Standing == shareddata.Orphan {
			out = append(out, orphan{Policy: v.Name, ID: v.ID, Entry: v.Entry})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// liveClusters are the registered clusters that are not retired.
func (r *workspaceResource) liveClusters() []string {
	var clusters []string
	for _, c := range r.data.Registry.Names() {
		if !r.data.Retired[c] {
			clusters = append(clusters, c)
		}
	}
	return clusters
}

// contributions lists every traffic policy contribution in the registered
// clusters. Clusters that cannot be read are errors of their own.
func (r *workspaceResource) contributions(ctx context.Context) ([]engine.LiveContribution, engine.Errors) {
	owner := engine.Owner{Kind: orphanKind, Composition: trafficPolicyComposer(r.data)}
	return shareddata.ContributionsIn(ctx, r.data.Engine, owner, r.liveClusters(), intentkind.TrafficPolicy.Writes)
}

// orphans picks the orphans among found (orphansAmong). Only when there
// are candidates does it list the claims of other tokens than token in
// the registered clusters: an instance one of them lists was handed over
// to that state, and is not an orphan; each such shielded candidate is a
// warning naming the claim (shielded).
func (r *workspaceResource) orphans(ctx context.Context, found []engine.LiveContribution, members map[string]string, known map[string]bool, token string, diags *diag.Diagnostics) ([]orphan, engine.Errors) {
	held := r.data.Roster.HeldByName()
	candidates := orphansAmong(found, members, known, held, nil, r.data.recordedWorkspace())
	if len(candidates) == 0 {
		return nil, nil
	}
	claims, errs := r.data.claims().ListClaims(ctx, r.liveClusters())
	elsewhere, d := shielded(candidates, claims, token)
	diags.Append(d...)
	return orphansAmong(found, members, known, held, elsewhere, r.data.recordedWorkspace()), errs
}

// shielded are the instances among candidates that a claim of another
// token than token lists (handed over to that state), with a warning per
// instance naming the claim: it is not released, and if the claim is a
// leftover (a killed first apply, a roster removed with state rm) the
// warning says how to let it go. A claim of another token in a format
// this build does not read (shareddata.Claim.Unreadable: a newer build's)
// may list any of them: it shields them all, with a warning naming it
// and the upgrade.
func shielded(candidates []orphan, claims []shareddata.Claim, token string) (map[string]bool, diag.Diagnostics) {
	var diags diag.Diagnostics
	listedBy := map[string][]shareddata.Claim{}
	var unreadable []shareddata.Claim
	for _, c := range claims {
		switch {
		case c.Token == token:
		case c.Unreadable != nil:
			unreadable = append(unreadable, c)
		default:
			for id := range c.Members {
				listedBy[id] = append(listedBy[id], c)
			}
		}
	}
	elsewhere := map[string]bool{}
	order, _ := byInstance(candidates)
	if len(unreadable) > 0 {
		for _, o := range order {
			elsewhere[o.ID] = true
		}
		for _, c := range unreadable {
			diags.AddWarning("Orphans shielded by a claim this provider cannot read",
				fmt.Sprintf("%s: %v. It may list any of the %d orphan candidate(s) of this state, so none is released. "+
					"Upgrade terraform-provider-mesh to the version that wrote it (or newer) and apply again.",
					c.Cluster, c.Unreadable, len(order)))
		}
		return elsewhere, diags
	}
	for _, o := range order {
		cs := listedBy[o.ID]
		if len(cs) == 0 {
			continue
		}
		elsewhere[o.ID] = true
		diags.AddWarning("Orphan shielded by another state's claim",
			fmt.Sprintf("Traffic policy %q (instance %s) is no longer listed or held by this state, but the claim of workspace identity %q (%s, in clusters %s) lists it, so it is taken as handed over to that state and not released. "+
				"If no state uses that identity any more (a first apply that was killed, a roster removed with terraform state rm), delete that claim ConfigMap in each cluster and apply again: this state then releases the policy.",
				o.Policy, o.ID, cs[0].Identity, shareddata.ClaimName(cs[0].Identity), strings.Join(shareddata.ClaimClusters(cs), ", ")))
	}
	return elsewhere, diags
}

// staleClaims are the claims, among claims, of this state's own former
// identities: an identity minted from this state's workspace name
// (mintIdentity) other than identity (this roster's, "" while unknown),
// with another token than token, listing at least one policy instance
// and only instances this state holds in this run (held, by name). Such a
// claim was written by this state under an identity it no longer has: by
// a first apply killed after writing it, or by a roster removed with
// `terraform state rm` and declared again. Left in place it would shield
// those instances from release as orphans forever once this state drops
// them. The plan names each, and the apply removes it (removeStaleClaims).
//
// Holding every instance a claim lists is not enough: a policy handed
// over (imported here, then removed from the other state) is held by
// both states until the other one applies, and a live roster whose only
// policy that was lists only it (issue 36). Another workspace's identity
// is never taken for this state's: its claim stays, and a policy it
// shields is a plan warning naming it (shielded).
func staleClaims(claims []shareddata.Claim, workspace, identity, token string, held map[string]map[string]bool) []shareddata.Claim {
	var out []shareddata.Claim
	for _, c := range claims {
		if c.Token == token || c.Identity == identity || len(c.Members) == 0 || !mintedFrom(c.Identity, workspace) {
			continue
		}
		ours := true
		for id, name := range c.Members {
			ours = ours && held[name][id]
		}
		if ours {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Identity != out[j].Identity {
			return out[i].Identity < out[j].Identity
		}
		return out[i].Cluster < out[j].Cluster
	})
	return out
}

// byIdentity groups claims by identity, in order, with their clusters.
func byIdentity(claims []shareddata.Claim) (order []string, clusters map[string][]shareddata.Claim) {
	clusters = map[string][]shareddata.Claim{}
	for _, c := range claims {
		if clusters[c.Identity] == nil {
			order = append(order, c.Identity)
		}
		clusters[c.Identity] = append(clusters[c.Identity], c)
	}
	return order, clusters
}

// warnStaleClaims reports the stale claims a plan found, one warning per
// identity.
func warnStaleClaims(diags *diag.Diagnostics, stale []shareddata.Claim) {
	order, clusters := byIdentity(stale)
	for _, identity := range order {
		cs := clusters[identity]
		names := map[string]bool{}
		for _, c := range cs {
			for _, n := range c.Members {
				names[n] = true
			}
		}
		diags.AddAttributeWarning(path.Root("id"), "Stale claim of this state's former identity will be removed",
			fmt.Sprintf("The claim of workspace identity %q (%s, in clusters %s) lists only traffic policy instances this state holds (%s), so this state wrote it under an identity it no longer has: a first apply killed after writing it, or a roster removed with terraform state rm. "+
				"No live roster stands behind it, and it would keep those policies from ever being released as orphans of this state. The apply removes it.",
				identity, shareddata.ClaimName(identity), strings.Join(shareddata.ClaimClusters(cs), ", "), strings.Join(slices.Sorted(maps.Keys(names)), ", ")))
	}
}

// removeStaleClaims deletes each stale claim, pinned to its token (a
// claim rewritten since with another token is left alone).
func (r *workspaceResource) removeStaleClaims(ctx context.Context, stale []shareddata.Claim, diags *diag.Diagnostics) {
	for _, c := range stale {
		if err := r.data.claims().ReleaseClaim(ctx, c.Cluster, "", c.Identity, c.Token); err != nil {
			diags.Append(engineDiagnostics(err, diag.SeverityError)...)
		}
	}
}

// ownStaleClaims lists the claims in the registered clusters and picks
// this state's stale ones (staleClaims); clusters that cannot be read are
// errors of their own.
func (r *workspaceResource) ownStaleClaims(ctx context.Context, identity, token string) ([]shareddata.Claim, engine.Errors) {
	claims, errs := r.data.claims().ListClaims(ctx, r.liveClusters())
	return staleClaims(claims, r.data.Workspace, identity, token, r.data.Roster.HeldByName()), errs
}

// mintedFrom reports whether identity is of the form mintIdentity makes
// from workspace: "<workspace>-<random>".
func mintedFrom(identity, workspace string) bool {
	random, ok := strings.CutPrefix(identity, workspace+"-")
	return workspace != "" && ok && random != ""
}

func orphansMap(orphans []orphan) types.Map {
	m := make(map[string]attr.Value, len(orphans))
	for _, o := range orphans {
		m[o.key()] = types.StringValue(o.ID)
	}
	return types.MapValueMust(types.StringType, m)
}

// byInstance groups orphans by policy instance (an orphan without its
// entry), in order.
func byInstance(orphans []orphan) (order []orphan, entries map[orphan][]engine.Entry) {
	entries = map[orphan][]engine.Entry{}
	for _, o := range orphans {
		k := orphan{Policy: o.Policy, ID: o.ID}
		if entries[k] == nil {
			order = append(order, k)
		}
		entries[k] = append(entries[k], o.Entry)
	}
	return order, entries
}

// listedNames reads traffic_policies; ok is false while it is unknown.
func listedNames(ctx context.Context, set types.Set) (map[string]bool, bool, diag.Diagnostics) {
	if set.IsUnknown() || set.IsNull() {
		return nil, false, nil
	}
	var names []types.String
	diags := set.ElementsAs(ctx, &names, false)
	listed := map[string]bool{}
	for _, n := range names {
		if n.IsUnknown() {
			return nil, false, diags
		}
		listed[n.ValueString()] = true
	}
	return listed, true, diags
}

// privateGetter and privateSetter are the framework's private state of a
// request and a response.
type privateGetter interface {
	GetKey(ctx context.Context, key string) ([]byte, diag.Diagnostics)
}

type privateSetter interface {
	SetKey(ctx context.Context, key string, value []byte) diag.Diagnostics
}

// getPrivate reads the JSON value kept in private state under key into
// into; it leaves into as it is when the key is absent.
func getPrivate(ctx context.Context, p privateGetter, key string, into any) diag.Diagnostics {
	if p == nil || reflect.ValueOf(p).IsNil() {
		return nil
	}
	raw, diags := p.GetKey(ctx, key)
	if len(raw) == 0 || diags.HasError() {
		return diags
	}
	if err := json.Unmarshal(raw, into); err != nil {
		diags.AddError("Roster private state unreadable", fmt.Sprintf("The roster's private state holds %s that this provider did not write (%v). Import the roster again.", key, err))
	}
	return diags
}

// setPrivate keeps v as JSON in private state under key.
func setPrivate(ctx context.Context, p privateSetter, key string, v any) diag.Diagnostics {
	raw, err := json.Marshal(v)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Roster private state not kept", err.Error())
		return diags
	}
	return p.SetKey(ctx, key, raw)
}

// membersOf reads the roster's members from its private state.
func membersOf(ctx context.Context, p privateGetter) (map[string]string, diag.Diagnostics) {
	members := map[string]string{}
	diags := getPrivate(ctx, p, membersKey, &members)
	return members, diags
}

// privateString reads a string kept in private state; "" when absent.
func privateString(ctx context.Context, p privateGetter, key string) (string, diag.Diagnostics) {
	var v string
	diags := getPrivate(ctx, p, key, &v)
	return v, diags
}

// mintIdentity is the identity of a roster whose provider leaves workspace
// unset: the Terraform workspace's name (readable in messages) and a random
// part (unique to this state).
func mintIdentity(workspace string) string {
	return workspace + "-" + newOwnerID()[:8]
}

func (r *workspaceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return // destroy: the roster releases its claim only
	}
	m, _ := r.fromPlan(ctx, req.Plan, &resp.Diagnostics)
	var prior workspaceModel
	if !req.State.Raw.IsNull() {
		prior, _ = r.fromState(ctx, req.State, &resp.Diagnostics)
	}
	if resp.Diagnostics.HasError() {
		return
	}
	replaces, d := privateString(ctx, req.Private, replacesKey)
	resp.Diagnostics.Append(d...)
	m.ID, m.Token = r.plannedIdentity(prior, replaces != "", resp)
	m.Orphans = types.MapValueMust(types.StringType, nil)
	if r.data.RegistryUnknown {
		m.ClaimedIn = types.SetUnknown(types.StringType)
	} else {
		m.ClaimedIn = stringSet(r.liveClusters())
	}
	listed, known, diags := listedNames(ctx, m.TrafficPolicies)
	resp.Diagnostics.Append(diags...)
	if !known {
		m.Orphans = types.MapUnknown(types.StringType)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
		return
	}
	unlisted, second := r.data.Roster.List(listed)
	if second {
		resp.Diagnostics.AddError("Two rosters in one state",
			"Another mesh_workspace with another list is planned with the same provider configuration. A state has one roster listing all of its traffic policies: merge their lists.")
	}
	for _, name := range unlisted {
		resp.Diagnostics.AddAttributeError(path.Root("traffic_policies"), "Traffic policy not listed",
			fmt.Sprintf("mesh_traffic_policy %q is planned in this state but is not in traffic_policies, so the apply would release its contributions as orphans. Add it to the list.", name))
	}
	if resp.Diagnostics.HasError() || r.data.RegistryUnknown {
		if r.data.RegistryUnknown {
			m.Orphans = types.MapUnknown(types.StringType)
		}
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
		return
	}
	if !m.ID.IsUnknown() {
		replaces, d := r.replacing(ctx, req.Private, m.ID.ValueString())
		resp.Diagnostics.Append(d...)
		r.checkClaims(ctx, m.ID.ValueString(), m.Token.ValueString(), replaces, &resp.Diagnostics)
	}
	stale, staleErrs := r.ownStaleClaims(ctx, m.ID.ValueString(), m.Token.ValueString())
	for _, e := range staleErrs {
		resp.Diagnostics.AddWarning("Workspace claims not checked in "+e.Cluster, e.Summary+": "+e.Detail+" Stale claims of this state's former identities there are removed by a later apply that can read it.")
	}
	warnStaleClaims(&resp.Diagnostics, stale)
	members, d := membersOf(ctx, req.Private)
	resp.Diagnostics.Append(d...)
	found, errs := r.contributions(ctx)
	orphans, claimErrs := r.orphans(ctx, found, r.data.Roster.MembersWithHeld(members), r.data.Roster.WithHeld(listed), m.Token.ValueString(), &resp.Diagnostics)
	for _, e := range append(errs, claimErrs...) {
		resp.Diagnostics.AddWarning("Orphans not checked in "+e.Cluster, e.Summary+": "+e.Detail+" Orphans in that cluster are released by a later apply that can read it.")
	}
	warnOrphans(&resp.Diagnostics, orphans)
	if len(orphans) > 0 {
		// Unknown rather than the keys: policies this apply destroys may
		// release their contributions first, and a known value the apply
		// could not reproduce would fail it.
		m.Orphans = types.MapUnknown(types.StringType)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
}

// plannedIdentity is the identity and token the roster will have: the
// configured workspace (another one replaces the roster), or the one it
// has (imported: without a token yet); minted at apply for a new roster,
// or for one an earlier build made (no token) from the default workspace,
// which is replaced.
func (r *workspaceResource) plannedIdentity(prior workspaceModel, imported bool, resp *resource.ModifyPlanResponse) (types.String, types.String) {
	priorID, priorToken := prior.ID.ValueString(), prior.Token.ValueString()
	// Terraform plans a replacement twice, the second time without the
	// prior state: the token it had is remembered for that second pass
	// and for the apply, which take over its claim.
	r.data.Roster.RememberToken(priorID, priorToken)
	if r.data.WorkspaceExplicit {
		if priorID != "" && priorID != r.data.Workspace {
			// Another identity: another state's roster, as far as the
			// clusters are concerned. Replaced (forgetting the old one
			// releases its claim only).
			resp.RequiresReplace = append(resp.RequiresReplace, path.Root("id"))
			return types.StringValue(r.data.Workspace), types.StringUnknown()
		}
		if priorToken == "" {
			return types.StringValue(r.data.Workspace), types.StringUnknown()
		}
		return types.StringValue(r.data.Workspace), types.StringValue(priorToken)
	}
	switch {
	case priorID != "" && priorToken != "":
		return types.StringValue(priorID), types.StringValue(priorToken)
	case priorID != "" && imported:
		return types.StringValue(priorID), types.StringUnknown() // the imported identity, claimed anew
	case priorID != "":
		// A roster of a build before tokens (id = the Terraform
		// workspace's name, never claimed): it gets a minted identity,
		// as any new roster, by a replacement the plan shows. Its
		// resource identity is the old id, which an update may not
		// change (Terraform fails the apply after it wrote), and keeping
		// the old id would make every such state of one Terraform
		// workspace claim the same identity. The destroy releases
		// nothing (it has no claim); the create claims the new id.
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("id"))
	}
	return types.StringUnknown(), types.StringUnknown()
}

// replacing is the token of a claim on identity this roster takes over:
// the claim an import found (private state), or the claim of the roster
// this one replaces (planned earlier in this run).
func (r *workspaceResource) replacing(ctx context.Context, p privateGetter, identity string) (string, diag.Diagnostics) {
	replaces, diags := privateString(ctx, p, replacesKey)
	if replaces == "" {
		replaces = r.data.Roster.PriorToken(identity)
	}
	return replaces, diags
}

// checkClaims fails the plan when another state claims identity in a
// cluster this state registers (token is this state's, "" when it has
// none yet: then every claim is another state's, but the one this roster
// takes over, with the token replaces).
func (r *workspaceResource) checkClaims(ctx context.Context, identity, token, replaces string, diags *diag.Diagnostics) {
	claims, errs := r.data.claims().ReadClaims(ctx, r.liveClusters(), identity)
	for _, e := range errs {
		diags.AddWarning("Workspace claim not checked in "+e.Cluster, e.Summary+": "+e.Detail+" The apply checks it again before it writes this state's claim there.")
	}
	var theirs, takenOver []shareddata.Claim
	for _, c := range claims {
		switch {
		case c.Token == token:
		case replaces != "" && c.Token == replaces:
			takenOver = append(takenOver, c)
		default:
			theirs = append(theirs, c)
		}
	}
	if len(takenOver) > 0 && token == "" {
		diags.AddAttributeWarning(path.Root("id"), "Workspace claim taken over",
			fmt.Sprintf("The apply takes over the claim on workspace identity %q (in clusters %s) with a new token. If another Terraform state still uses that claim, its next plan fails naming this one. "+
				"No policy the old claim lists becomes this state's: none is released as an orphan.", identity, strings.Join(shareddata.ClaimClusters(takenOver), ", ")))
	}
	if len(theirs) == 0 {
		return
	}
	names := map[string]bool{}
	for _, c := range theirs {
		for _, n := range c.Members {
			names[n] = true
		}
	}
	// Tokens are never printed: they tell claims apart, and another
	// state's is its own (docs/security.md).
	ours := "a new roster, without a token yet"
	if token != "" {
		ours = "its own claim token"
	}
	policies := "no traffic policy yet"
	if len(names) > 0 {
		policies = "traffic policies " + strings.Join(slices.Sorted(maps.Keys(names)), ", ")
	}
	diags.AddAttributeError(path.Root("id"), "Workspace identity claimed by another state",
		fmt.Sprintf("Another Terraform state claims workspace identity %q (claim %s, with another token, in clusters %s, holding %s); this state's roster (%s) would claim it too. "+
			"Two states with one identity could not tell their traffic policies apart, so nothing is written. "+
			"Give this state an identity of its own: set the provider's workspace to a name no other state uses, or leave it unset so that the roster mints one. "+
			"Only if that claim is this state's own, from a state that was lost, import the roster (terraform import <address of the mesh_workspace> %s): the import takes the claim over with a new token, so the state that wrote it is told at its next plan if it still exists, and recovers no policy as this state's.",
			identity, shareddata.ClaimName(identity), strings.Join(shareddata.ClaimClusters(theirs), ", "), policies, ours, identity))
}

// warnOrphans reports the orphans a plan found, one warning per policy.
func warnOrphans(diags *diag.Diagnostics, orphans []orphan) {
	order, entries := byInstance(orphans)
	for _, k := range order {
		where := make([]string, 0, len(entries[k]))
		for _, en := range entries[k] {
			where = append(where, en.String())
		}
		diags.AddAttributeWarning(path.Root("orphans"), "Orphaned contribution will be released",
			fmt.Sprintf("Traffic policy %s (instance %s, a resource this state held) contributes to %s, but is not in traffic_policies: its resource left the state without a destroy. "+
				"The apply removes its contribution (annotation and label %s) and rewrites each object from the others, deleting it when nothing else contributes. "+
				"If the policy belongs to this state, add it to traffic_policies (and declare or import it) instead.",
				k.Policy, k.ID, strings.Join(where, ", "), orphanKind+".mesh-intent.io/"+k.Policy))
	}
}

func (r *workspaceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.create(ctx, req, resp, func(m *workspaceModel) {
		r.apply(ctx, m, nil, &resp.State, resp.Private, true, &resp.Diagnostics)
	})
}

func (r *workspaceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.update(ctx, req, resp, func(m *workspaceModel) {
		r.apply(ctx, m, req.Private, &resp.State, resp.Private, false, &resp.Diagnostics)
	})
}

// apply mints what is unknown, releases the orphans it finds (by the rule
// the plan used), records them as released, and writes the claim in every
// registered cluster. Only a create mints the identity: an update keeps
// the resource identity, which Terraform checks after the apply, when the
// claim would already be written.
func (r *workspaceResource) apply(ctx context.Context, m *workspaceModel, priorPrivate privateGetter, state *tfsdk.State, private privateSetter, create bool, diags *diag.Diagnostics) {
	if !r.ready(diags) {
		return
	}
	if m.ID.IsUnknown() || m.ID.ValueString() == "" {
		if !create {
			diags.AddAttributeError(path.Root("id"), "Workspace identity not planned",
				"The update of the roster has no identity planned, and minting one would change its resource identity, which an update may not. Nothing is written. This is a bug in the provider: plan again.")
			return
		}
		m.ID = types.StringValue(mintIdentity(r.data.Workspace))
	}
	if m.Token.IsUnknown() || m.Token.ValueString() == "" {
		m.Token = types.StringValue(newOwnerID())
	}
	identity, token := m.ID.ValueString(), m.Token.ValueString()
	replaces, d := r.replacing(ctx, priorPrivate, identity)
	diags.Append(d...)
	r.checkClaims(ctx, identity, token, replaces, diags)
	if diags.HasError() {
		return
	}
	stale, staleErrs := r.ownStaleClaims(ctx, identity, token)
	diags.Append(engineDiagnostics(staleErrs.Err(), diag.SeverityError)...)
	r.removeStaleClaims(ctx, stale, diags)
	members, d := membersOf(ctx, priorPrivate)
	diags.Append(d...)
	members = r.data.Roster.MembersWithHeld(members)
	listed, _, d := listedNames(ctx, m.TrafficPolicies)
	diags.Append(d...)
	found, errs := r.contributions(ctx)
	orphans, claimErrs := r.orphans(ctx, found, members, r.data.Roster.WithHeld(listed), token, diags)
	diags.Append(engineDiagnostics(append(errs, claimErrs...).Err(), diag.SeverityError)...)
	released := r.release(ctx, orphans, diags)
	m.Orphans = orphansMap(orphans)
	members = prunedMembers(members, found, released, r.data.Roster.HeldIDs(), len(errs) == 0)
	diags.Append(setPrivate(ctx, private, membersKey, members)...)

	// Claims written in another namespace (records_namespace changed)
	// move: released there once written here.
	oldNS, d := privateString(ctx, priorPrivate, claimNamespaceKey)
	diags.Append(d...)
	var claimed []string
	for _, cluster := range r.liveClusters() {
		if err := r.data.claims().WriteClaim(ctx, shareddata.Claim{Cluster: cluster, Identity: identity, Token: token, Members: members, Replaces: replaces}); err != nil {
			diags.Append(engineDiagnostics(err, diag.SeverityError)...)
			continue
		}
		claimed = append(claimed, cluster)
		if oldNS != "" && oldNS != r.data.claims().ClaimsNamespace() {
			if err := r.data.claims().ReleaseClaim(ctx, cluster, oldNS, identity, token); err != nil {
				diags.Append(engineDiagnostics(err, diag.SeverityError)...)
			}
		}
	}
	ns := r.data.claims().ClaimsNamespace()
	if len(claimed) == 0 && oldNS != "" {
		ns = oldNS
	}
	diags.Append(setPrivate(ctx, private, claimNamespaceKey, ns)...)
	if len(claimed) < len(r.liveClusters()) {
		diags.Append(setPrivate(ctx, private, replacesKey, replaces)...) // taken over where written only
	} else {
		diags.Append(setPrivate(ctx, private, replacesKey, "")...)
	}
	m.ClaimedIn = stringSet(claimed)
	diags.Append(state.Set(ctx, m)...)
}

// prunedMembers keeps the members still of use: instances this run held,
// and instances whose contributions are still on some object (when every
// cluster could be read; otherwise all are kept), less those released.
func prunedMembers(members map[string]string, found []engine.LiveContribution, released, held map[string]bool, complete bool) map[string]string {
	live := map[string]bool{}
	for _, c := range found {
		live[c.ID] = true
	}
	out := map[string]string{}
	for id, name := range members {
		if released[id] || (complete && !live[id] && !held[id]) {
			continue
		}
		out[id] = name
	}
	return out
}

// release removes each orphan from its object, policy by policy; what it
// could not remove is an error naming the cluster, and the next plan finds
// it again. It returns the instances released everywhere.
func (r *workspaceResource) release(ctx context.Context, orphans []orphan, diags *diag.Diagnostics) map[string]bool {
	released := map[string]bool{}
	order, entries := byInstance(orphans)
	for _, k := range order {
		owner := engine.Owner{Kind: orphanKind, Name: k.Policy, ID: k.ID, Composition: trafficPolicyComposer(r.data)}
		_, err := r.data.Engine.Delete(ctx, owner, entries[k])
		diags.Append(engineDiagnostics(err, diag.SeverityError)...)
		if err == nil {
			released[k.ID] = true
		}
	}
	return released
}

// Read empties orphans, adds the policy instances this run held to the
// members, and finds the clusters that hold this state's claim.
func (r *workspaceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	r.read(ctx, req, resp, func(m *workspaceModel) { r.refresh(ctx, m, req.Private, resp) })
}

// refresh is Read, on the model of the state and its private state.
func (r *workspaceResource) refresh(ctx context.Context, m *workspaceModel, private privateGetter, resp *resource.ReadResponse) {
	if !r.ready(&resp.Diagnostics) {
		return
	}
	members, d := membersOf(ctx, private)
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(setPrivate(ctx, resp.Private, membersKey, r.data.Roster.MembersWithHeld(members))...)
	if id, token := m.ID.ValueString(), m.Token.ValueString(); id != "" && token != "" {
		var prior []string
		if !m.ClaimedIn.IsNull() && !m.ClaimedIn.IsUnknown() {
			resp.Diagnostics.Append(m.ClaimedIn.ElementsAs(ctx, &prior, false)...)
		}
		clusters := slices.Compact(slices.Sorted(slices.Values(append(r.liveClusters(), prior...))))
		claims, errs := r.data.claims().ReadClaims(ctx, clusters, id)
		held := map[string]bool{}
		for _, c := range claims {
			if c.Token == token {
				held[c.Cluster] = true
			}
		}
		for _, e := range errs {
			// Unreadable: what the state says stands.
			held[e.Cluster] = slices.Contains(prior, e.Cluster)
			resp.Diagnostics.AddWarning("Workspace claim not read in "+e.Cluster, e.Summary+": "+e.Detail)
		}
		var claimed []string
		for c, ok := range held {
			if ok {
				claimed = append(claimed, c)
			}
		}
		m.ClaimedIn = stringSet(claimed)
	}
	m.Orphans = types.MapValueMust(types.StringType, nil)
	resp.Diagnostics.Append(resp.State.Set(ctx, m)...)
}

// Delete releases this state's claim on the identity; contributions are
// their policies' to release.
func (r *workspaceResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	m, ok := r.fromState(ctx, req.State, &resp.Diagnostics)
	if !ok || !r.ready(&resp.Diagnostics) || m.Token.ValueString() == "" {
		return
	}
	var clusters []string
	if !m.ClaimedIn.IsNull() && !m.ClaimedIn.IsUnknown() {
		resp.Diagnostics.Append(m.ClaimedIn.ElementsAs(ctx, &clusters, false)...)
	}
	ns, d := privateString(ctx, req.Private, claimNamespaceKey)
	resp.Diagnostics.Append(d...)
	for _, c := range clusters {
		if r.data.Retired[c] {
			continue
		}
		if err := r.data.claims().ReleaseClaim(ctx, c, ns, m.ID.ValueString(), m.Token.ValueString()); err != nil {
			resp.Diagnostics.Append(engineDiagnostics(err, diag.SeverityError)...)
		}
	}
}

// ImportState takes the workspace identity as the import ID and finds
// this identity's claim in the clusters: the policies it lists are the
// roster's traffic_policies, and the next apply takes the claim over.
func (r *workspaceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	r.importState(ctx, req, resp, identityID, func(id, _ string, _ bool) { r.importClaim(ctx, id, resp) })
}

// importClaim imports the roster of the workspace identity id.
func (r *workspaceResource) importClaim(ctx context.Context, id string, resp *resource.ImportStateResponse) {
	if !r.ready(&resp.Diagnostics) {
		return
	}
	if r.data.WorkspaceExplicit && id != r.data.Workspace {
		resp.Diagnostics.AddError("Import of another workspace",
			fmt.Sprintf("The import ID is the identity the roster stands for, and must be the provider's workspace, %q (got %q).", r.data.Workspace, id))
		return
	}
	claims, errs := r.data.claims().ReadClaims(ctx, r.liveClusters(), id)
	resp.Diagnostics.Append(engineDiagnostics(errs.Err(), diag.SeverityError)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if len(claims) == 0 {
		resp.Diagnostics.AddError("No claim of this workspace identity",
			fmt.Sprintf("No registered cluster holds a claim on workspace identity %q (ConfigMap %s in the records namespace). "+
				"Import the identity of a roster that was applied, or declare the roster and apply it to claim a new one.", id, shareddata.ClaimName(id)))
		return
	}
	token, names := claims[0].Token, map[string]bool{}
	for _, c := range claims {
		if c.Token != token {
			resp.Diagnostics.AddError("Two claims of one workspace identity",
				fmt.Sprintf("Clusters %s and %s hold claims on identity %q with different tokens (%s and %s): two states claimed it. Remove the claim that is not this state's (ConfigMap %s in the records namespace), then import again.",
					claims[0].Cluster, c.Cluster, id, token, c.Token, shareddata.ClaimName(id)))
			return
		}
		for _, n := range c.Members {
			names[n] = true
		}
	}
	// The claim is taken over with a new token at the next apply (so the
	// state that wrote it, if it still exists, is told at its next plan),
	// and none of its members becomes this state's: nothing is released
	// as an orphan on the strength of an import.
	policies, d := types.SetValueFrom(ctx, types.StringType, slices.Sorted(maps.Keys(names)))
	resp.Diagnostics.Append(d...)
	resp.Diagnostics.Append(resp.State.Set(ctx, &workspaceModel{
		ID: types.StringValue(id), Token: types.StringNull(), TrafficPolicies: policies,
		ClaimedIn: stringSet(nil), Orphans: types.MapNull(types.StringType),
	})...)
	resp.Diagnostics.Append(setPrivate(ctx, resp.Private, replacesKey, token)...)
	resp.Diagnostics.Append(setPrivate(ctx, resp.Private, membersKey, map[string]string{})...)
}

// stringSet is a set of strings.
func stringSet(values []string) types.Set {
	elems := make([]attr.Value, 0, len(values))
	for _, v := range slices.Compact(slices.Sorted(slices.Values(values))) {
		elems = append(elems, types.StringValue(v))
	}
	return types.SetValueMust(types.StringType, elems)
}
