package provider

import (
	"errors"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
)

// The routing attribute: what an intent does to requests, one line per
// cluster, computed from the planned intent and the registry by
// internal/translate/routing (independently of the Istio objects), so that
// a plan says in words where traffic goes and a change shows as a one-line
// diff per cluster. See docs/design.md, "The routing statement".

// routingKinds are the per-resource parts of the attribute's description:
// what a key is and a plan excerpt.
var routingKinds = map[string]struct{ keys, excerpt string }{
	"virtual_destination": {
		keys: "Keys are the client clusters; each value lists the backend clusters a request may reach, in failover order: " +
			"`>` separates the steps of failover, `,` backends that share requests at one step (with their percentages when their weights differ), " +
			"exclusions applied; `(ns a, b)` ends it when `clients.namespaces` restricts who sees the hostname. In locality mode, a line whose region or zone is known only after apply is unknown.",
		excerpt: `      ~ routing  = {
          ~ "onprem" = "east > onprem > west" -> "east > onprem"
            # (2 unchanged elements hidden)
        }`,
	},
	"traffic_policy": {
		keys: "Keys are the source clusters where the policy acts (for a virtual destination, those that are its clients); each value says which requests it takes " +
			"(`ns` and workload labels of `sources`, then the `match` entries, `|` between them) and, after `:`, what happens to them: the traffic shift's targets with their percentages " +
			"(a `local` entry named by the source cluster itself), `mirror <target> <percent>`, the timeout, retries and faults; `no routing change` for a policy that sets only destination settings.",
		excerpt: `      ~ routing  = {
          ~ "east" = "ns accounts: east 95%, onprem 5%" -> "ns accounts: east 80%, onprem 20%; mirror west 5%"
        }`,
	},
	"access_policy": {
		keys: "Keys are the enforcing clusters (where the destination's workloads run and the policy covers); each value lists the service accounts allowed (`namespace/service_account from <source clusters>`, `;` between them) " +
			"and, after `:`, the requests they may make (methods, paths, `port`; `|` between rules; `any request` without rules), or `allow nobody` where no source may call. " +
			"Requests no access policy allows are denied by Istio once any ALLOW policy selects the workload.",
		excerpt: `      ~ routing  = {
          ~ "east" = "allow accounts/account from east, west: GET /users/* port 8080" -> "allow accounts/account from east: GET /users/* port 8080"
        }`,
	},
}

// routingAttribute is the routing attribute of the intent resource kind
// ("virtual_destination", "traffic_policy", "access_policy").
func routingAttribute(kind string) schema.MapAttribute {
	k := routingKinds[kind]
	return schema.MapAttribute{
		MarkdownDescription: "Where this intent sends requests, in words, one line per cluster, computed at plan from the planned configuration and the provider's clusters " +
			"(independently of the Istio objects, which Istio's simulation checks against it), so a change shows in `terraform plan` as a one-line diff. " +
			k.keys + " Unknown only while the configuration, or a cluster fact it depends on, is. Example plan:\n\n```text\n" + k.excerpt + "\n```",
		Computed:    true,
		ElementType: types.StringType,
	}
}

// routingModel is what the lifecycle needs of a model with a routing
// attribute.
type routingModel interface {
	routingValue() *types.Map
}

// planRouting computes the routing attribute of a spec: unknown when the
// registry or a placement is known only after apply, null for a spec
// without a statement. An error of an intent that translated is reported:
// the statement and the translation then disagree on what the intent
// means.
func planRouting(data *providerData, spec intentSpec, translated bool) (types.Map, diag.Diagnostics) {
	var diags diag.Diagnostics
	if spec.Routing == nil {
		return types.MapNull(types.StringType), nil
	}
	if data == nil || data.RegistryUnknown || data.Registry == nil {
		return types.MapUnknown(types.StringType), nil
	}
	st, err := spec.Routing(data.Registry)
	switch {
	case errors.Is(err, translate.ErrUnknownPlacement):
		return types.MapUnknown(types.StringType), nil
	case err != nil:
		if translated {
			diags.AddAttributeError(path.Root("routing"), "Routing statement",
				"The routing statement of "+spec.Owner.String()+" could not be computed although its objects were: "+err.Error()+". This is a provider error; please report it.")
		}
		return types.MapUnknown(types.StringType), diags
	}
	return routingValue(st), nil
}

// routingValue is a statement as a Terraform map; a line holding an
// Unknown placeholder is an unknown element.
func routingValue(st routing.Statement) types.Map {
	elems := make(map[string]attr.Value, len(st))
	for c, line := range st {
		if translate.IsUnknown(line) {
			elems[c] = types.StringUnknown()
		} else {
			elems[c] = types.StringValue(line)
		}
	}
	return types.MapValueMust(types.StringType, elems)
}

// fillRouting sets a model's routing when it is not known yet (after a
// plan that could not know it, or in a state written before the
// attribute existed, or imported): apply and refresh have every value.
func fillRouting(data *providerData, spec intentSpec, m routingModel) diag.Diagnostics {
	r := m.routingValue()
	if !r.IsNull() && fullyKnown(*r) {
		return nil
	}
	v, diags := planRouting(data, spec, true)
	if !fullyKnown(v) {
		// Still not known (the registry itself is not): state holds no
		// unknown value.
		v = types.MapNull(types.StringType)
	}
	*r = v
	return diags
}

// fullyKnown reports a map that is known, and so are its elements.
func fullyKnown(m types.Map) bool {
	if m.IsUnknown() {
		return false
	}
	for _, e := range m.Elements() {
		if e.IsUnknown() {
			return false
		}
	}
	return true
}

func (m *virtualDestinationModel) routingValue() *types.Map { return &m.Routing }
func (m *trafficPolicyModel) routingValue() *types.Map      { return &m.Routing }
func (m *accessPolicyModel) routingValue() *types.Map       { return &m.Routing }
