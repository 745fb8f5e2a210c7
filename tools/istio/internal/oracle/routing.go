package oracle

import (
	"encoding/json"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// The routing statement (internal/translate/routing) is the plan's own
// account of where an intent sends requests, computed from the intent
// and the registry alone. The simulation compares it with what Istio
// makes of the translator's objects: two independent computations of one
// promise, so a change to either side alone fails.

// RoutingVirtualDestination is the routing statement of a virtual
// destination intent.
func RoutingVirtualDestination(raw json.RawMessage, reg *translate.Registry) (routing.Destination, error) {
	var in virtualdestination.Intent
	if err := yaml.UnmarshalStrict(raw, &in); err != nil {
		return routing.Destination{}, err
	}
	return routing.VirtualDestination(in, reg)
}

// RoutingTrafficPolicy is the routing statement of a traffic policy on a
// virtual destination (vd, its intent) or, vd nil, a Kubernetes service.
func RoutingTrafficPolicy(policy, vd json.RawMessage, reg *translate.Registry) (routing.Traffic, error) {
	var in trafficpolicy.Intent
	if err := yaml.UnmarshalStrict(policy, &in); err != nil {
		return routing.Traffic{}, err
	}
	var dest *virtualdestination.Intent
	if vd != nil {
		dest = &virtualdestination.Intent{}
		if err := yaml.UnmarshalStrict(vd, dest); err != nil {
			return routing.Traffic{}, err
		}
	}
	return routing.TrafficPolicy(in, dest, reg)
}

// RoutingAccessPolicy is the routing statement of an access-policy case's
// intent (policy and destination).
func RoutingAccessPolicy(raw json.RawMessage, reg *translate.Registry) (routing.Access, error) {
	var in struct {
		Policy      accesspolicy.Intent      `json:"policy"`
		Destination accesspolicy.Destination `json:"destination"`
	}
	if err := yaml.UnmarshalStrict(raw, &in); err != nil {
		return routing.Access{}, err
	}
	return routing.AccessPolicy(in.Policy, in.Destination, reg)
}
