package provider

import (
	"context"
	"fmt"
	"reflect"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// resourceBase is the framework-facing skeleton of every resource of this
// provider, embedded by intentLifecycle (the three intents and
// mesh_cluster) and by mesh_workspace: the type name, its kind's Resource
// (Metadata); the provider's data (Configure) and the check that it is
// configured (ready); and the frame of each write (create, read, update),
// which decodes the model from the plan or the state and, once the write
// has set the state, the resource identity from it (identityFromState).
type resourceBase[M any] struct {
	kind intentkind.Kind
	data *providerData
}

// providerTypeName is the provider's type name (meshProvider.Metadata),
// the prefix of every resource type.
const providerTypeName = "mesh"

// Metadata names the resource after its kind: the kind's Resource, with
// the provider's type name the framework passes in place of its prefix.
func (b *resourceBase[M]) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + strings.TrimPrefix(b.kind.Resource, providerTypeName)
}

func (b *resourceBase[M]) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if data, ok := req.ProviderData.(*providerData); ok {
		b.data = data
	}
}

// ready reports whether the provider is configured with clusters to talk
// to, adding an error naming the resource when it is not.
func (b *resourceBase[M]) ready(diags *diag.Diagnostics) bool {
	if b.data == nil || b.data.Engine == nil {
		diags.AddError("Provider not configured", "The mesh provider has no clusters to read: configure it before using "+b.kind.Resource+".")
		return false
	}
	return true
}

// fromPlan decodes the model from a plan; ok is false when it does not
// decode, and diags says why.
func (b *resourceBase[M]) fromPlan(ctx context.Context, plan tfsdk.Plan, diags *diag.Diagnostics) (m M, ok bool) {
	diags.Append(plan.Get(ctx, &m)...)
	return m, !diags.HasError()
}

// fromState decodes the model from a state; ok is false when it does not
// decode, and diags says why, except for a state imported with adopt: and
// not applied since (adoptPending; intents only), which owns nothing yet
// and so asks nothing of the operation.
//
// A state holding null where the schema has a default (edited by hand, or
// written without the attribute) decodes with the default, as a plan
// would fill it, so that it can still be refreshed and destroyed.
func (b *resourceBase[M]) fromState(ctx context.Context, state tfsdk.State, diags *diag.Diagnostics) (m M, ok bool) {
	d := state.Get(ctx, &m)
	if !d.HasError() {
		return m, true
	}
	if adoptPending(ctx, state) {
		return m, false
	}
	filled := tfsdk.State{Schema: state.Schema, Raw: state.Raw.Copy()}
	var withDefaults M
	if !fillStateDefaults(ctx, &filled).HasError() && !filled.Get(ctx, &withDefaults).HasError() {
		return withDefaults, true
	}
	diags.Append(d...)
	return m, false
}

// create, read and update frame the framework's Create, Read and Update:
// write gets the model decoded from the plan (from the state for Read) and
// sets the response's state; the resource identity is then set from that
// state. write is not called when the model does not decode.
func (b *resourceBase[M]) create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse, write func(m *M)) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	if m, ok := b.fromPlan(ctx, req.Plan, &resp.Diagnostics); ok {
		write(&m)
	}
}

func (b *resourceBase[M]) read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse, write func(m *M)) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	if m, ok := b.fromState(ctx, req.State, &resp.Diagnostics); ok {
		write(&m)
	}
}

func (b *resourceBase[M]) update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse, write func(m *M)) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	if m, ok := b.fromPlan(ctx, req.Plan, &resp.Diagnostics); ok {
		write(&m)
	}
}

// importState frames the framework's ImportState as create, read and
// update frame the writes: what to import, given by the import ID or by
// the identity's attribute attr (importName), goes to write, and the
// resource identity is then set from the state write made.
func (b *resourceBase[M]) importState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse, attr string, write func(name, instance string, byIdentity bool)) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	name, instance, byIdentity, d := importName(ctx, req, attr)
	resp.Diagnostics.Append(d...)
	if d.HasError() {
		return
	}
	write(name, instance, byIdentity)
}

// intentModel is what the shared lifecycle needs from a resource model:
// how it becomes translator intent, and where its inventory lives. It is
// implemented by a pointer to the model struct.
//
// A model decodes the attributes a configuration sets as plain Go values
// (a pointer where an optional attribute has no default; a slice or a map
// is nil when null), since the lifecycle decodes a model only from a fully
// known configuration (ModifyPlan) or from a plan or state that holds no
// unknown configured value. Computed attributes (id, objects, routing,
// adopt_existing, values resolved from other intents or read from the
// cluster) are framework values, which may be unknown or null.
type intentModel[M any] interface {
	*M
	// spec turns the model into intent; it may set computed attributes
	// that follow from the configuration (id, vip, resolved backends).
	// The phase says which step of the run asks (planPhase, statePhase),
	// and so where facts about other intents come from.
	spec(ctx context.Context, data *providerData, ph phase) (intentSpec, diag.Diagnostics)
	// adoptExisting is the adopt_existing attribute; false for a kind
	// without one (mesh_cluster).
	adoptExisting() bool
	// adoptedValue is the adopted attribute (adoptedAttribute); nil for
	// a kind that takes over no VirtualService or DestinationRule of
	// another name (mesh_cluster, mesh_access_policy).
	adoptedValue() *types.Map
	inventory() types.Map
	setInventory(types.Map)
	// ownerID is the instance ID (the id attribute), set at create.
	ownerID() *types.String
	// routingValue is the routing attribute (routing.go); nil for a kind
	// without one (mesh_cluster), whose routing the lifecycle skips.
	routingValue() *types.Map
}

// phase is the step of a Terraform run that resolves a model into intent
// (intentModel.spec): it decides where facts about other intents come
// from and what the run's state (providerData) learns from this one.
type phase int

const (
	// planPhase is ModifyPlan: facts about other intents (a virtual
	// destination's backends) are looked up afresh, among the intents
	// planned earlier in this run or in their records, and this intent is
	// remembered in the run's registries for the intents planned after it
	// (destinations, traffic policies, the roster's check).
	planPhase phase = iota
	// statePhase is Read, Create, Update and Delete: facts are taken from
	// the state where it holds them (Terraform re-plans only changed
	// resources on apply), and nothing is remembered for other intents.
	statePhase
)

// intentLifecycle implements ModifyPlan, Create, Read, Update and Delete
// for every resource that writes translated objects (the intents and
// mesh_cluster), on the skeleton of resourceBase: each reads the model,
// calls the translator and the engine through objects.go, and sets state.
type intentLifecycle[M any, P intentModel[M]] struct {
	resourceBase[M]
	// partlyKnown, when set, is told about a configuration that is not
	// fully known at plan, so that intents depending on this one can plan
	// their own values as known after apply.
	partlyKnown func(ctx context.Context, data *providerData, config tfsdk.Config) diag.Diagnostics
	// importer says where import finds the resource's objects.
	importer importTarget
	// importedRead, when set, prepares the model of a state an import made
	// (no inventory yet) for the Read that follows: mesh_cluster's import
	// knows the name only, and leaves the instance ID to the objects found.
	importedRead func(m *M)
	// afterSync, when set, completes the model after each engine
	// operation, before state records it (sync); step says which
	// operation it was. mesh_cluster records what its cluster reports
	// and, at the Read after an import, what the objects found say.
	afterSync func(ctx context.Context, data *providerData, m *M, step syncStep) diag.Diagnostics
}

// newIntentLifecycle is the lifecycle of the kind t.kind, imported as t
// says; the optional hooks are set on the value it returns.
func newIntentLifecycle[M any, P intentModel[M]](t importTarget) intentLifecycle[M, P] {
	return intentLifecycle[M, P]{resourceBase: resourceBase[M]{kind: t.kind}, importer: t}
}

// syncStep is the operation a sync records: an apply (Create, Update), a
// refresh (Read), or the Read right after an import, which has no
// inventory yet.
type syncStep int

const (
	syncApply syncStep = iota
	syncRefresh
	syncImport
)

// routed reports whether the kind has a routing attribute.
func (l *intentLifecycle[M, P]) routed() bool {
	var m M
	return P(&m).routingValue() != nil
}

// specOf resolves the model into intent; with the configuration (at
// apply), the spec keeps it in the clusters for import.
func (l *intentLifecycle[M, P]) specOf(ctx context.Context, m *M, ph phase, config *tfsdk.Config) (intentSpec, diag.Diagnostics) {
	spec, diags := P(m).spec(ctx, l.data, ph)
	spec.Owner.Adopt = P(m).adoptExisting()
	if config == nil || diags.HasError() {
		return spec, diags
	}
	cfg, err := discovery.ConfigJSON(config.Raw)
	if err == nil {
		err = spec.withConfig(cfg)
	}
	if err != nil {
		diags.AddError("Recording the configuration", fmt.Sprintf("The configuration of %s cannot be kept for import: %v.", spec.Owner, err))
	}
	return spec, diags
}

// ModifyPlan translates the planned intent into the objects attribute. It
// writes to no cluster (a traffic policy reads the objects it shares,
// checkComposition). Configuration values known only after apply leave
// the objects unknown. Objects in a cluster the refresh could not read are
// planned as re-checked (recheckUnreadable), and a state with objects in a
// cluster no longer registered fails, destroys included
// (checkRemovedClusters).
func (l *intentLifecycle[M, P]) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	prior := types.MapNull(types.StringType)
	if !req.State.Raw.IsNull() {
		var name types.String
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("objects"), &prior)...)
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("name"), &name)...)
		if resp.Diagnostics.HasError() {
			return
		}
		// The owner names the intent in messages; resolving the whole
		// spec could read the clusters.
		owner := engine.Owner{Kind: l.kind.Owner, Name: name.ValueString()}
		resp.Diagnostics.Append(checkRemovedClusters(l.data, owner, prior)...)
		if resp.Diagnostics.HasError() {
			return
		}
	}
	if req.Plan.Raw.IsNull() {
		return // destroy
	}
	if !req.Config.Raw.IsFullyKnown() {
		if l.partlyKnown != nil {
			resp.Diagnostics.Append(l.partlyKnown(ctx, l.data, req.Config)...)
		}
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("objects"), types.MapUnknown(types.StringType))...)
		if l.routed() {
			resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("routing"), types.MapUnknown(types.StringType))...)
		}
		return
	}
	m, ok := l.fromPlan(ctx, req.Plan, &resp.Diagnostics)
	if !ok {
		return
	}
	proposed := m
	// The configuration kept for import is no part of a digest, so the
	// plan does without it: apply writes it (Create, Update).
	spec, diags := l.specOf(ctx, &m, planPhase, nil)
	resp.Diagnostics.Append(diags...)
	if resp.Diagnostics.HasError() {
		return
	}
	// ... but its limits count it (planObjects).
	if cfg, err := discovery.ConfigJSON(req.Config.Raw); err == nil {
		spec.KeptConfig = cfg
	} else {
		resp.Diagnostics.AddError("Recording the configuration", fmt.Sprintf("The configuration of %s cannot be kept for import: %v.", spec.Owner, err))
		return
	}
	objects, adopting, diags := planObjects(ctx, l.data, spec, prior, !req.State.Raw.IsNull() && adoptPending(ctx, req.State))
	resp.Diagnostics.Append(diags...)
	if r := P(&m).adoptedValue(); r != nil {
		resp.Diagnostics.Append(planAdopted(ctx, r, adopting, req.State)...)
	}
	objects, diags = recheckUnreadable(spec.Owner, objects, prior, unreadableOf(ctx, req.Private))
	resp.Diagnostics.Append(diags...)
	P(&m).setInventory(objects)
	if r := P(&m).routingValue(); r != nil {
		routing, diags := planRouting(l.data, spec, !resp.Diagnostics.HasError() && !objects.IsUnknown())
		resp.Diagnostics.Append(diags...)
		*r = routing
	}
	if sameValues(proposed, m) {
		// The proposed plan already holds these computed values (an
		// unchanged resource, the usual case): writing them back would
		// only convert the whole resource again.
		return
	}
	resp.Diagnostics.Append(resp.Plan.Set(ctx, &m)...)
}

// sameValues reports whether two models hold equal values in every field:
// framework values (attr.Value) by their Equal, plain Go values deeply;
// unexported fields, which are no attributes, are ignored.
func sameValues[M any](a, b M) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	if va.Kind() != reflect.Struct {
		return false
	}
	for i := range va.NumField() {
		if !va.Type().Field(i).IsExported() {
			continue // not an attribute (tfsdk:"-")
		}
		fa, fb := va.Field(i).Interface(), vb.Field(i).Interface()
		if x, ok := fa.(attr.Value); ok {
			if y, ok := fb.(attr.Value); !ok || !x.Equal(y) {
				return false
			}
		} else if !reflect.DeepEqual(fa, fb) {
			return false
		}
	}
	return true
}

func (l *intentLifecycle[M, P]) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	l.create(ctx, req, resp, func(m *M) {
		*P(m).ownerID() = types.StringValue(newOwnerID())
		resp.Diagnostics.Append(l.sync(ctx, m, &req.Config, func(spec intentSpec) (types.Map, map[string]string, diag.Diagnostics) {
			return applyObjects(ctx, l.data, spec, nil)
		}, &resp.State, resp.Private, syncApply)...)
		if resp.Diagnostics.HasError() && len(P(m).inventory().Elements()) == 0 {
			// Nothing was written (a namespace missing, every cluster
			// refused): no state, so nothing is tainted, and the next
			// apply creates it, rather than deleting and re-creating.
			resp.State.RemoveResource(ctx)
		}
	})
}

// Read refreshes the inventory from the clusters. A state without an
// inventory was just imported: its objects are searched for in every
// registered cluster. (A state imported with adopt:, before the apply that
// adopts, does not decode and is left as it is: fromState.)
func (l *intentLifecycle[M, P]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	l.read(ctx, req, resp, func(m *M) {
		prior := P(m).inventory()
		step := syncRefresh
		if prior.IsNull() {
			step = syncImport
			if l.importedRead != nil {
				l.importedRead(m)
			}
		}
		resp.Diagnostics.Append(l.sync(ctx, m, nil, func(spec intentSpec) (types.Map, map[string]string, diag.Diagnostics) {
			return readObjects(ctx, l.data, spec, entriesOf(prior), step == syncImport)
		}, &resp.State, resp.Private, step)...)
	})
}

func (l *intentLifecycle[M, P]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	l.update(ctx, req, resp, func(m *M) {
		var prior types.Map
		resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("objects"), &prior)...)
		if resp.Diagnostics.HasError() {
			return
		}
		resp.Diagnostics.Append(l.sync(ctx, m, &req.Config, func(spec intentSpec) (types.Map, map[string]string, diag.Diagnostics) {
			return applyObjects(ctx, l.data, spec, entriesOf(prior))
		}, &resp.State, resp.Private, syncApply)...)
	})
}

// sync resolves the model into intent, runs one engine operation and
// records the inventory it returns in state, also when it failed, and the
// clusters it could not read or write in private state (unreadableKey).
//
// A Read (syncRefresh, syncImport) starts from a response state that is a
// copy of the state m was read from: when nothing changed, as in most
// refreshes, it is left as it is rather than converted from the model
// again. (Update starts from the prior state, not the plan, so it always
// writes.)
func (l *intentLifecycle[M, P]) sync(ctx context.Context, m *M, config *tfsdk.Config, op func(intentSpec) (types.Map, map[string]string, diag.Diagnostics), state *tfsdk.State, private privateSetter, step syncStep) diag.Diagnostics {
	before := *m
	spec, diags := l.specOf(ctx, m, statePhase, config)
	if diags.HasError() {
		return diags
	}
	if r := P(m).adoptedValue(); r != nil && step == syncApply {
		// The apply takes over what its plan recorded, and nothing else;
		// a record unknown at plan takes over nothing.
		spec.Adopted = adoptedOf(*r)
		if r.IsUnknown() {
			*r = types.MapNull(types.StringType)
		}
	}
	objects, failed, d := op(spec)
	diags.Append(d...)
	diags.Append(recordUnreadable(ctx, private, failed)...)
	P(m).setInventory(objects)
	if P(m).routingValue() != nil {
		diags.Append(fillRouting(l.data, spec, P(m))...)
	}
	if l.afterSync != nil {
		diags.Append(l.afterSync(ctx, l.data, m, step)...)
	}
	if step != syncApply && sameValues(before, *m) {
		return diags
	}
	diags.Append(state.Set(ctx, m)...)
	return diags
}

func (l *intentLifecycle[M, P]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	m, ok := l.fromState(ctx, req.State, &resp.Diagnostics) // not ok either when imported with adopt: and never applied: nothing is ours yet
	if !ok {
		return
	}
	// Deleting needs only the owner and the inventory, never a
	// translation: an intent that no longer translates can still go.
	spec, _ := P(&m).spec(ctx, l.data, statePhase)
	left, diags := deleteObjects(ctx, l.data, spec, entriesOf(P(&m).inventory()))
	resp.Diagnostics.Append(diags...)
	if diags.HasError() {
		P(&m).setInventory(left)
		resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
	}
}

// adoptPending reports, of a state that does not decode into its model, a
// state imported with an adopt: id and not applied since: only its name,
// instance ID and adopt_existing are set, and it owns nothing yet.
func adoptPending(ctx context.Context, state tfsdk.State) bool {
	var adopt types.Bool
	var objects types.Map
	if state.GetAttribute(ctx, path.Root("adopt_existing"), &adopt).HasError() ||
		state.GetAttribute(ctx, path.Root("objects"), &objects).HasError() {
		return false
	}
	return adopt.ValueBool() && objects.IsNull()
}
