package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

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
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// mesh_workspace is the roster of a workspace: the traffic policies its
// state holds. Terraform tells a provider neither which resources a state
// holds nor when a plan ends, so a contribution whose resource left the
// state without a destroy (`terraform state rm` and the block deleted, a
// lost state) would otherwise shape traffic for ever. With the roster
// declared, every contribution that carries this workspace's identity and
// names no listed policy is an orphan: the plan reports it and the apply
// releases it, as prune does for an intent's own objects.

var (
	_ resource.ResourceWithConfigure   = &workspaceResource{}
	_ resource.ResourceWithModifyPlan  = &workspaceResource{}
	_ resource.ResourceWithImportState = &workspaceResource{}
)

// NewWorkspaceResource is mesh_workspace.
func NewWorkspaceResource() resource.Resource { return &workspaceResource{} }

type workspaceResource struct {
	data *providerData
}

type workspaceModel struct {
	ID              types.String `tfsdk:"id"`
	TrafficPolicies types.Set    `tfsdk:"traffic_policies"`
	Orphans         types.Map    `tfsdk:"orphans"`
}

// orphanKind is the kind of intent whose contributions the roster checks:
// traffic policies are the only intents that compose.
const orphanKind = "traffic-policy"

func (r *workspaceResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_workspace"
}

func (r *workspaceResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Version: schemaVersion,
		MarkdownDescription: "The roster of this Terraform state's workspace (the provider's `workspace` setting): the traffic policies it holds. " +
			"Every traffic policy's contribution to a shared VirtualService or DestinationRule records its workspace; a contribution that records this workspace but names no listed policy is an *orphan* " +
			"(its resource left the state without a destroy: `terraform state rm` with the block deleted, or a lost state) and would otherwise keep shaping traffic. " +
			"The plan lists orphans in every registered cluster, with a warning per policy, and the apply releases them (the composed objects are rewritten without them, or deleted when nothing else contributes). " +
			"Declare one per workspace, listing every traffic policy of the state, typically from module outputs; a traffic policy planned in this state but not listed is a plan error, so that the apply never releases a policy the state still holds. " +
			"Destroying the roster releases nothing.",
		Attributes: map[string]schema.Attribute{
			"id": schema.StringAttribute{
				MarkdownDescription: "The workspace identity the roster stands for (the provider's `workspace`).",
				Computed:            true,
				PlanModifiers:       []planmodifier.String{stringplanmodifier.UseStateForUnknown()},
			},
			"traffic_policies": schema.SetAttribute{
				MarkdownDescription: "Names of every `mesh_traffic_policy` this state holds, e.g. `[for p in mesh_traffic_policy.all : p.name]` or a module output. An empty set makes every contribution of the workspace an orphan.",
				ElementType:         types.StringType,
				Required:            true,
				Validators:          []validator.Set{setvalidator.ValueStringsAre(dnsLabelValidator{})},
			},
			"orphans": schema.MapAttribute{
				MarkdownDescription: "The orphans the last apply released: contributions of this workspace that no listed policy owned, as `<policy>/<cluster>/<Kind>.<group>/<namespace>/<name>` to the instance ID of the resource that wrote it. " +
					"A plan that finds orphans names each in a warning and plans this attribute as known after apply (the apply releases what it finds then, by the same rule); refresh empties it.",
				ElementType: types.StringType,
				Computed:    true,
			},
		},
	}
}

func (r *workspaceResource) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if data, ok := req.ProviderData.(*providerData); ok {
		r.data = data
	}
}

// orphan is one contribution to release.
type orphan struct {
	Policy, ID string
	Entry      engine.Entry
}

func (o orphan) key() string { return o.Policy + "/" + o.Entry.StateKey() }

// orphansAmong picks the orphans of workspace from contributions found on
// composed objects: those that say they come from it, are trusted (the
// others are removed by any writer of the object and never composed), and
// name no policy of listed.
func orphansAmong(found []engine.LiveContribution, workspace string, listed map[string]bool) []orphan {
	var out []orphan
	for _, c := range found {
		if workspace == "" || c.Workspace != workspace || c.Untrusted != "" || listed[c.Name] {
			continue
		}
		out = append(out, orphan{Policy: c.Name, ID: c.ID, Entry: c.Entry})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key() < out[j].key() })
	return out
}

// findOrphans lists this workspace's orphans in every registered cluster:
// contributions of policies not in known (listed in the roster, or held:
// in the state and seen in this run). Clusters that cannot be read are
// errors of their own.
func (r *workspaceResource) findOrphans(ctx context.Context, known map[string]bool) ([]orphan, engine.Errors) {
	var clusters []string
	for _, c := range r.data.Registry.Names() {
		if !r.data.Retired[c] {
			clusters = append(clusters, c)
		}
	}
	owner := engine.Owner{Kind: orphanKind, Composition: trafficPolicyComposer(r.data)}
	kinds := []k8sGVK{gvk(translate.NetworkingV1, "VirtualService"), gvk(translate.NetworkingV1, "DestinationRule")}
	found, errs := r.data.Engine.ContributionsIn(ctx, owner, clusters, kinds)
	return orphansAmong(found, r.data.Workspace, known), errs
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

func (r *workspaceResource) ready(diags *diag.Diagnostics) bool {
	if r.data == nil || r.data.Engine == nil {
		diags.AddError("Provider not configured", "The mesh provider has no clusters to read: configure it before using mesh_workspace.")
		return false
	}
	return true
}

func (r *workspaceResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if req.Plan.Raw.IsNull() || r.data == nil {
		return // destroy: the roster releases nothing
	}
	var m workspaceModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !m.ID.IsUnknown() && m.ID.ValueString() != r.data.Workspace {
		// The provider's workspace changed: this is the roster of another
		// workspace now, so it is replaced (forgetting the old one
		// releases nothing).
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("id"))
	}
	m.ID = types.StringValue(r.data.Workspace)
	m.Orphans = types.MapValueMust(types.StringType, nil)
	listed, known, diags := listedNames(ctx, m.TrafficPolicies)
	resp.Diagnostics.Append(diags...)
	if !known {
		m.Orphans = types.MapUnknown(types.StringType)
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
		return
	}
	unlisted, second := r.data.Roster.list(listed)
	if second {
		resp.Diagnostics.AddError("Two rosters of one workspace",
			fmt.Sprintf("Another mesh_workspace with another list is planned with the same provider (workspace %q). A workspace has one roster listing all of its traffic policies: merge their lists.", r.data.Workspace))
	}
	for _, name := range unlisted {
		resp.Diagnostics.AddAttributeError(path.Root("traffic_policies"), "Traffic policy not listed",
			fmt.Sprintf("mesh_traffic_policy %q is planned in this state (workspace %q) but is not in traffic_policies, so the apply would release its contributions as orphans. Add it to the list.", name, r.data.Workspace))
	}
	if resp.Diagnostics.HasError() || r.data.RegistryUnknown {
		if r.data.RegistryUnknown {
			m.Orphans = types.MapUnknown(types.StringType)
		}
		resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
		return
	}
	orphans, errs := r.findOrphans(ctx, r.data.Roster.withHeld(listed))
	for _, e := range errs {
		resp.Diagnostics.AddWarning("Orphans not checked in "+e.Cluster, e.Summary+": "+e.Detail+" Orphans in that cluster are released by a later apply that can read it.")
	}
	warnOrphans(&resp.Diagnostics, orphans, r.data.Workspace)
	if len(orphans) > 0 {
		// Unknown rather than the keys: policies this apply destroys may
		// release their contributions first, and a known value the apply
		// could not reproduce would fail it.
		m.Orphans = types.MapUnknown(types.StringType)
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
}

// warnOrphans reports the orphans a plan found, one warning per policy.
func warnOrphans(diags *diag.Diagnostics, orphans []orphan, workspace string) {
	order, entries := byInstance(orphans)
	for _, k := range order {
		where := make([]string, 0, len(entries[k]))
		for _, en := range entries[k] {
			where = append(where, en.String())
		}
		diags.AddAttributeWarning(path.Root("orphans"), "Orphaned contribution will be released",
			fmt.Sprintf("Traffic policy %s (instance %s) contributes to %s with the identity of this workspace (%q), but is not in traffic_policies: its resource left the state without a destroy. "+
				"The apply removes its contribution (annotation and label %s) and rewrites each object from the others, deleting it when nothing else contributes. "+
				"If the policy belongs to this state, add it to traffic_policies (and declare or import it) instead.",
				k.Policy, k.ID, strings.Join(where, ", "), workspace, orphanKind+".mesh-intent.io/"+k.Policy))
	}
}

func (r *workspaceResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	r.apply(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

func (r *workspaceResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	r.apply(ctx, req.Plan, &resp.State, &resp.Diagnostics)
}

// apply releases the orphans it finds, by the rule the plan used, and
// records them as released.
func (r *workspaceResource) apply(ctx context.Context, plan tfsdk.Plan, state *tfsdk.State, diags *diag.Diagnostics) {
	var m workspaceModel
	diags.Append(plan.Get(ctx, &m)...)
	if diags.HasError() || !r.ready(diags) {
		return
	}
	m.ID = types.StringValue(r.data.Workspace)
	listed, _, d := listedNames(ctx, m.TrafficPolicies)
	diags.Append(d...)
	orphans, errs := r.findOrphans(ctx, listed)
	diags.Append(engineDiagnostics(errs.Err(), diag.SeverityError)...)
	r.release(ctx, orphans, diags)
	m.Orphans = orphansMap(orphans)
	diags.Append(state.Set(ctx, &m)...)
}

// release removes each orphan from its object, policy by policy; what it
// could not remove is an error naming the cluster, and the next plan finds
// it again.
func (r *workspaceResource) release(ctx context.Context, orphans []orphan, diags *diag.Diagnostics) {
	order, entries := byInstance(orphans)
	for _, k := range order {
		owner := engine.Owner{Kind: orphanKind, Name: k.Policy, ID: k.ID, Composition: trafficPolicyComposer(r.data)}
		_, err := r.data.Engine.Delete(ctx, owner, entries[k])
		diags.Append(engineDiagnostics(err, diag.SeverityError)...)
	}
}

// Read empties orphans: what the last apply released is gone, and the
// next plan looks again. An imported roster (no list yet) lists every
// policy that contributes with this workspace's identity.
func (r *workspaceResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	var m workspaceModel
	resp.Diagnostics.Append(req.State.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() || !r.ready(&resp.Diagnostics) {
		return
	}
	if m.TrafficPolicies.IsNull() {
		found, errs := r.findOrphans(ctx, nil)
		if len(errs) > 0 {
			resp.Diagnostics.Append(engineDiagnostics(errs.Err(), diag.SeverityError)...)
			return
		}
		names := map[string]bool{}
		for _, o := range found {
			names[o.Policy] = true
		}
		set, d := types.SetValueFrom(ctx, types.StringType, slices.Sorted(maps.Keys(names)))
		resp.Diagnostics.Append(d...)
		m.TrafficPolicies = set
	}
	if m.ID.ValueString() == "" {
		m.ID = types.StringValue(r.data.Workspace)
	} // else the workspace it stands for: a new provider workspace replaces it at plan
	m.Orphans = types.MapValueMust(types.StringType, nil)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

func (r *workspaceResource) Delete(context.Context, resource.DeleteRequest, *resource.DeleteResponse) {
	// The roster is a list: forgetting it releases nothing.
}

// ImportState takes the workspace identity as the import ID; the roster
// lists every policy that contributes with it.
func (r *workspaceResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	if r.data != nil && req.ID != r.data.Workspace {
		resp.Diagnostics.AddError("Import of another workspace",
			fmt.Sprintf("The import ID is the workspace the roster stands for, and must be the provider's workspace, %q (got %q).", r.data.Workspace, req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), req.ID)...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("traffic_policies"), types.SetNull(types.StringType))...)
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("orphans"), types.MapNull(types.StringType))...)
}

// workspaceRoster is what this run's mesh_workspace lists, checked against
// the traffic policies planned in the same run in whichever order
// Terraform plans them: a policy the state holds but the roster does not
// list is a plan error, never an orphan the apply releases.
type workspaceRoster struct {
	mu      sync.Mutex
	listed  map[string]bool // nil until a roster is planned
	planned map[string]bool
	// held are the traffic policies this run read or planned: the state
	// holds them (one being destroyed releases its own contribution).
	held map[string]bool
}

// hold records a traffic policy of the state seen in this run.
func (w *workspaceRoster) hold(name string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held == nil {
		w.held = map[string]bool{}
	}
	w.held[name] = true
}

// withHeld returns listed and the policies held so far, in a new set.
func (w *workspaceRoster) withHeld(listed map[string]bool) map[string]bool {
	out := maps.Clone(listed)
	if out == nil {
		out = map[string]bool{}
	}
	if w == nil {
		return out
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	maps.Copy(out, w.held)
	return out
}

// list records the roster's names and returns the policies planned so far
// that it does not list; second is set when a roster with another list was
// planned in this run already. (Terraform plans a replaced resource twice,
// so the same list again is the same roster.)
func (w *workspaceRoster) list(listed map[string]bool) (unlisted []string, second bool) {
	if w == nil {
		return nil, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	second = w.listed != nil && !maps.Equal(w.listed, listed)
	w.listed = listed
	for name := range w.planned {
		if !listed[name] {
			unlisted = append(unlisted, name)
		}
	}
	sort.Strings(unlisted)
	return unlisted, second
}

// plan records a planned traffic policy and reports whether a roster
// planned earlier leaves it out.
func (w *workspaceRoster) plan(name string) (unlisted bool) {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.planned == nil {
		w.planned = map[string]bool{}
	}
	w.planned[name] = true
	return w.listed != nil && !w.listed[name]
}
