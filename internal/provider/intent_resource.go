package provider

import (
	"context"
	"fmt"
	"reflect"

	"github.com/hashicorp/terraform-plugin-framework/attr"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// intentModel is what the shared lifecycle needs from a resource model:
// how it becomes translator intent, and where its inventory lives. It is
// implemented by a pointer to the model struct.
type intentModel[M any] interface {
	*M
	// spec turns the model into intent; it may set computed attributes
	// that follow from the configuration (id, vip, resolved backends).
	// The phase says which step of the run asks (planPhase, statePhase),
	// and so where facts about other intents come from.
	spec(ctx context.Context, data *providerData, ph phase) (intentSpec, diag.Diagnostics)
	// adoptExisting is the adopt_existing attribute.
	adoptExisting() bool
	inventory() types.Map
	setInventory(types.Map)
	// ownerID is the instance ID (the id attribute), set at create.
	ownerID() *types.String
	// routingValue is the routing attribute (routing.go).
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

// intentLifecycle implements Configure, ModifyPlan, Create, Read, Update and
// Delete for every intent resource: each reads the model, calls the
// translator and the engine through objects.go, and sets state.
type intentLifecycle[M any, P intentModel[M]] struct {
	data *providerData
	// partlyKnown, when set, is told about a configuration that is not
	// fully known at plan, so that intents depending on this one can plan
	// their own values as known after apply.
	partlyKnown func(ctx context.Context, data *providerData, config tfsdk.Config) diag.Diagnostics
	// importer says where import finds the resource's objects.
	importer importTarget
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

func (l *intentLifecycle[M, P]) Configure(_ context.Context, req resource.ConfigureRequest, _ *resource.ConfigureResponse) {
	if data, ok := req.ProviderData.(*providerData); ok {
		l.data = data
	}
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
		owner := engine.Owner{Kind: l.importer.kind.Owner, Name: name.ValueString()}
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
		resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root("routing"), types.MapUnknown(types.StringType))...)
		return
	}
	var m M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
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
	objects, diags := planObjects(ctx, l.data, spec)
	resp.Diagnostics.Append(diags...)
	objects, diags = recheckUnreadable(spec.Owner, objects, prior, unreadableOf(ctx, req.Private))
	resp.Diagnostics.Append(diags...)
	P(&m).setInventory(objects)
	routing, diags := planRouting(l.data, spec, !resp.Diagnostics.HasError() && !objects.IsUnknown())
	resp.Diagnostics.Append(diags...)
	*P(&m).routingValue() = routing
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
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	var m M
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	*P(&m).ownerID() = types.StringValue(newOwnerID())
	resp.Diagnostics.Append(l.sync(ctx, &m, &req.Config, func(spec intentSpec) (types.Map, map[string]string, diag.Diagnostics) {
		return applyObjects(ctx, l.data, spec, nil)
	}, &resp.State, resp.Private, false)...)
}

func (l *intentLifecycle[M, P]) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	var m M
	if d := req.State.Get(ctx, &m); d.HasError() {
		if !adoptPending(ctx, req.State) { // else imported with adopt:, before the apply that adopts
			resp.Diagnostics.Append(d...)
		}
		return
	}
	prior := P(&m).inventory()
	resp.Diagnostics.Append(l.sync(ctx, &m, nil, func(spec intentSpec) (types.Map, map[string]string, diag.Diagnostics) {
		return readObjects(ctx, l.data, spec, entriesOf(prior), prior.IsNull())
	}, &resp.State, resp.Private, true)...)
}

func (l *intentLifecycle[M, P]) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	defer identityFromState(ctx, &resp.State, resp.Identity, &resp.Diagnostics)
	var m M
	var prior types.Map
	resp.Diagnostics.Append(req.Plan.Get(ctx, &m)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("objects"), &prior)...)
	if resp.Diagnostics.HasError() {
		return
	}
	resp.Diagnostics.Append(l.sync(ctx, &m, &req.Config, func(spec intentSpec) (types.Map, map[string]string, diag.Diagnostics) {
		return applyObjects(ctx, l.data, spec, entriesOf(prior))
	}, &resp.State, resp.Private, false)...)
}

// sync resolves the model into intent, runs one engine operation and
// records the inventory it returns in state, also when it failed, and the
// clusters it could not read or write in private state (unreadableKey).
//
// refreshing is set by Read, whose response state starts out as a copy of
// the state m was read from: when nothing changed, as in most refreshes,
// it is left as it is rather than converted from the model again. (Update
// starts from the prior state, not the plan, so it always writes.)
func (l *intentLifecycle[M, P]) sync(ctx context.Context, m *M, config *tfsdk.Config, op func(intentSpec) (types.Map, map[string]string, diag.Diagnostics), state *tfsdk.State, private privateSetter, refreshing bool) diag.Diagnostics {
	before := *m
	spec, diags := l.specOf(ctx, m, statePhase, config)
	if diags.HasError() {
		return diags
	}
	objects, failed, d := op(spec)
	diags.Append(d...)
	diags.Append(recordUnreadable(ctx, private, failed)...)
	P(m).setInventory(objects)
	diags.Append(fillRouting(l.data, spec, P(m))...)
	if refreshing && sameValues(before, *m) {
		return diags
	}
	diags.Append(state.Set(ctx, m)...)
	return diags
}

func (l *intentLifecycle[M, P]) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var m M
	if d := req.State.Get(ctx, &m); d.HasError() {
		if !adoptPending(ctx, req.State) { // else imported with adopt: and never applied: nothing is ours yet
			resp.Diagnostics.Append(d...)
		}
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
