package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

var (
	_ resource.ResourceWithConfigure  = &trafficPolicyResource{}
	_ resource.ResourceWithModifyPlan = &trafficPolicyResource{}
)

// NewTrafficPolicyResource is mesh_traffic_policy: how traffic from some
// sources to a destination behaves.
func NewTrafficPolicyResource() resource.Resource {
	return &trafficPolicyResource{newIntentLifecycle[trafficPolicyModel](importTarget{
		kind: intentkind.TrafficPolicy,
	})}
}

type trafficPolicyResource struct {
	intentLifecycle[trafficPolicyModel, *trafficPolicyModel]
}

func (r *trafficPolicyResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	resp.Schema = schema.Schema{
		Version: schemaVersion,
		MarkdownDescription: "How traffic from some sources to a destination behaves: routing (match, traffic shift, mirror), resilience (timeout, retries, fault injection), " +
			"headers and CORS, and connection settings. Written as VirtualService routes and DestinationRule settings in the source clusters only, since Istio applies them at the client. " +
			"Several policies on one destination compose into one VirtualService per cluster: requests they do not share get separate routes, shared requests get the settings of both, " +
			"and the same setting with different values is an error that names both policies." + objectsPlanNote(
			`~ "east/VirtualService.networking.istio.io/istio-system/tp-user.global" = "5b1f0c9e27d4a836" -> "a07e44c1d2b9f315"`,
			`+ "west/VirtualService.networking.istio.io/istio-system/tp-user.global" = "c3d98e0b6a1f7254"`,
		),
		Attributes: trafficPolicyAttributes(),
	}
}

// destination resolves where the policy points. A virtual destination is
// looked up among those planned in this run and the records in planPhase,
// and otherwise taken from state (Terraform re-plans only changed
// resources on apply). At plan, no record anywhere with every cluster
// answering is an error, whatever the state resolved before.
func (m *trafficPolicyModel) destination(ctx context.Context, data *providerData, ph phase) (trafficpolicy.Destination, diag.Diagnostics) {
	var diags diag.Diagnostics
	plain := m.Destination.plain()
	if plain.VirtualDestination == "" {
		m.ResolvedDestination = types.StringNull()
		return plain, diags
	}
	host := plain.VirtualDestination
	var known trafficpolicy.Destination
	s := m.ResolvedDestination
	if !s.IsNull() && !s.IsUnknown() {
		known, _ = decodeResolved(s.ValueString())
	}
	haveKnown := known.VirtualDestination == host
	var lookupErr error
	if ph == planPhase || !haveKnown {
		vd, ok, ignored, err := lookupVirtualDestination(ctx, data, host)
		warnIgnoredRecords(&diags, path.Root("destination").AtName("virtual_destination"), host, data.recordsNamespace(), ignored)
		if d, conflict := recordsConflictDiagnostics(path.Root("destination").AtName("virtual_destination"), err); conflict {
			// Never resolved from state either: which one is meant is
			// for the user to settle.
			return trafficpolicy.Destination{VirtualDestination: host}, append(diags, d...)
		}
		if errors.Is(err, errPendingDestination) {
			m.ResolvedDestination = types.StringUnknown()
			return trafficpolicy.Destination{VirtualDestination: host}, diags
		}
		if ok {
			if data.RegistryUnknown {
				m.ResolvedDestination = types.StringUnknown()
				return trafficpolicy.Destination{VirtualDestination: host}, diags
			}
			if _, err := virtualdestination.Translate(vd, data.Registry); errors.Is(err, translate.ErrUnknownPlacement) {
				// Which clusters are clients is known only after apply.
				m.ResolvedDestination = types.StringUnknown()
				return trafficpolicy.Destination{VirtualDestination: host}, diags
			}
			m.vd = &vd
			dest := trafficpolicy.DestinationOf(vd, data.Registry)
			m.ResolvedDestination = resolvedValue(s, dest)
			return dest, diags
		}
		lookupErr = err
		if ph == planPhase && err == nil && data != nil && data.Engine != nil && data.Registry != nil {
			// No record anywhere, and every cluster answered: the
			// destination is gone (destroyed). The state's resolution is
			// never a fall-back here: applying it would re-create the
			// destination's DestinationRule with no owner (issue 36).
			diags.Append(unknownVirtualDestination(path.Root("destination").AtName("virtual_destination"), host, nil)...)
			return trafficpolicy.Destination{VirtualDestination: host}, diags
		}
	}
	if haveKnown {
		// A cluster did not answer (lookupErr), or this is not a plan:
		// the destination resolved before stands.
		return known, diags
	}
	diags.Append(unknownVirtualDestination(path.Root("destination").AtName("virtual_destination"), host, lookupErr)...)
	return trafficpolicy.Destination{VirtualDestination: host}, diags
}

func (m *trafficPolicyModel) spec(ctx context.Context, data *providerData, ph phase) (intentSpec, diag.Diagnostics) {
	var diags diag.Diagnostics
	name := m.Name
	spec := intentSpec{Kinds: intentkind.TrafficPolicy.Writes}
	// A composer from the start: a delete whose destination no longer
	// resolves still releases its contributions (nothing to add, the
	// others recomposed).
	spec.Owner = engine.Owner{Kind: intentkind.TrafficPolicy.Owner, Name: name, ID: ownerIDOf(m.ID), Composition: trafficPolicyComposer(orEmpty(data))}
	in := m.intent()
	if data != nil {
		data.Roster.Hold(name, spec.Owner.ID)
	}
	if ph == planPhase && data != nil && data.Roster.Plan(name) {
		diags.AddAttributeError(path.Root("name"), "Traffic policy not listed",
			fmt.Sprintf("This state's mesh_workspace does not list traffic policy %q, so the apply would release its contributions as orphans. Add it to the roster's traffic_policies.", name))
		return spec, diags
	}
	dest, d := m.destination(ctx, data, ph)
	diags.Append(d...)
	if diags.HasError() {
		return spec, diags
	}
	self := trafficpolicy.Named{Policy: in, Destination: dest}
	spec.Owner.Composition = trafficPolicyComposition(self, data)
	spec.Translate = func(reg *translate.Registry) ([]translate.Object, error) {
		if m.ResolvedDestination.IsUnknown() {
			return nil, translate.ErrUnknownPlacement
		}
		objs, err := trafficpolicy.Translate(in, dest, reg)
		if err != nil || ph != planPhase || data == nil {
			return objs, err
		}
		// Policies planned earlier in this run that target the same
		// destination must compose with this one: fail at plan if not.
		if err := conflictsWith(self, data.TrafficPolicies.RememberAndList(self), reg); err != nil {
			return nil, err
		}
		return objs, nil
	}
	spec.Routing = func(reg *translate.Registry) (routing.Statement, error) {
		if m.ResolvedDestination.IsUnknown() {
			return nil, translate.ErrUnknownPlacement
		}
		tr, err := routing.TrafficPolicy(in, routingDestination(m.vd, dest), reg)
		return tr.Statement(), err
	}
	spec.Case = func() any { return map[string]any{"policy": in, "destination": dest} }
	spec.DestinationService = m.destinationServiceCheck()
	if data != nil {
		// The objects applied are those of every policy on the
		// destination composed: Istio judges that case too.
		spec.ComposedCase = func() (string, any) {
			all := data.TrafficPolicies.On(self)
			if len(all) < 2 {
				return "", nil
			}
			return "composed-" + destinationKey(dest), map[string]any{"compose": all}
		}
	}
	return spec, diags
}

// conflictsWith reports the conflicts between self and the other policies
// planned on its destination so far (on, sorted by name), pair by pair
// (Compose's conflicts are those of pairs: trafficpolicy.CheckConflicts).
// Only pairs that hold self count: Terraform plans resources in parallel
// and in no fixed order, so a check of the whole group would report two
// policies' conflict on whichever policy on the destination happened to be
// planned last, a third one that sets nothing in conflict included. Pair by
// pair, the conflict of a and b is reported by the one of them planned
// second (the first saw no conflict), naming both, and never by a third
// policy, on every plan alike. ErrUnknownPlacement (a policy whose clusters
// are known only at apply) stands when no pair conflicts.
func conflictsWith(self trafficpolicy.Named, on []trafficpolicy.Named, reg *translate.Registry) error {
	var (
		errs    translate.Errors
		unknown error
	)
	for _, o := range on {
		if o.Policy.Name == self.Policy.Name {
			continue
		}
		err := trafficpolicy.CheckConflicts(self, o, reg)
		switch {
		case err == nil:
		case errors.Is(err, translate.ErrUnknownPlacement):
			unknown = err
		default:
			errs.Add(err)
		}
	}
	if len(errs) > 0 {
		return errs
	}
	return unknown
}

// routingDestination is the virtual destination whose clients the
// routing statement keeps among the sources: the one looked up, else (a
// destination taken from state) one whose clients are the resolved
// destination's client clusters; nil for a service, or when the clients
// are not known.
func routingDestination(vd *virtualdestination.Intent, dest trafficpolicy.Destination) *virtualdestination.Intent {
	switch {
	case dest.VirtualDestination == "":
		return nil
	case vd != nil:
		return vd
	case dest.ClientBackends == nil:
		return nil
	}
	clients := slices.Sorted(maps.Keys(dest.ClientBackends))
	return &virtualdestination.Intent{Hostname: dest.VirtualDestination, Clients: virtualdestination.Clients{Placement: translate.Placement{Clusters: clients}}}
}

func (m *trafficPolicyModel) inventory() types.Map     { return m.Objects }
func (m *trafficPolicyModel) setInventory(l types.Map) { m.Objects = l }

func (m *trafficPolicyModel) ownerID() *types.String { return &m.ID }

// destinationServiceCheck is the Service destination.service names, for
// the plan's warning when it does not exist (checkServices).
func (m *trafficPolicyModel) destinationServiceCheck() *serviceCheck {
	return destinationService(m.Destination.Service, m.Destination.Namespace)
}

func (m *trafficPolicyModel) adoptExisting() bool      { return m.Adopt.ValueBool() }
func (m *trafficPolicyModel) adoptedValue() *types.Map { return &m.Adopted }

// trafficPolicyComposition is how a traffic policy takes part in the
// objects it shares with other policies: its contribution, resolved with
// this provider's registry so that any writer can recompose it, and how
// contributions found on an object are read and checked (composer).
func trafficPolicyComposition(self trafficpolicy.Named, data *providerData) *engine.Composition {
	data = orEmpty(data)
	c := trafficPolicyComposer(data)
	part, err := trafficpolicy.NewPart(self, trafficpolicy.Writer{Workspace: data.recordedWorkspace()}, data.Registry)
	if err != nil {
		// The policy does not resolve (an error the translation reports,
		// or placement known only after apply): nothing is written, and
		// the policy as given stands in for the checks at plan.
		part = trafficpolicy.UnresolvedPart(self, data.recordedWorkspace())
	}
	c.Contribution = part
	name := self.Policy.Name
	c.Own = func(id string) bool { return data.Roster.Holds(name, id) }
	c.Owned = ownedByDestination(self.Destination)
	return c
}

// ownedByDestination says which objects a policy on dest only joins: a
// virtual destination's DestinationRule, which that destination creates
// and owns; the composer never creates it (engine.Composition.Owned).
func ownedByDestination(dest trafficpolicy.Destination) func(translate.Key) bool {
	if dest.VirtualDestination == "" || dest.VirtualDestinationName == "" {
		return nil
	}
	ns := dest.VirtualDestinationNamespace
	if ns == "" {
		ns = translate.DefaultIstioNS
	}
	name := virtualdestination.ObjectName(dest.VirtualDestinationName)
	return func(k translate.Key) bool {
		return k.Kind == "DestinationRule" && k.Namespace == ns && k.Name == name
	}
}

// orEmpty is data, or empty provider data when there is none.
func orEmpty(data *providerData) *providerData {
	if data == nil {
		return &providerData{}
	}
	return data
}

// trafficPolicyComposer composes and checks traffic policies'
// contributions without adding one: what reading and releasing others'
// contributions need (the workspace roster).
func trafficPolicyComposer(data *providerData) *engine.Composition {
	data = orEmpty(data)
	return &engine.Composition{Composer: &trafficpolicy.Composer{Registry: data.Registry, Version: providerVersion(data.Version)}}
}

// providerVersion shows this provider's version in messages.
func providerVersion(v string) string {
	if v == "" {
		return "unknown"
	}
	return v
}
