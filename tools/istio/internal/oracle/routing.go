package oracle

import (
	"encoding/json"
	"errors"

	"github.com/mesh-intent/terraform-provider-mesh/internal/oraclecall"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
)

// The routing statement (internal/translate/routing) is the plan's own
// account of where an intent sends requests, computed from the intent
// and the registry alone. The simulation compares it with what Istio
// makes of the translator's objects: two independent computations of one
// promise, so a change to either side alone fails. Like the translator,
// it runs through internal/oraclecall (Call).

// RoutingVirtualDestination is the routing statement of a virtual
// destination intent.
func RoutingVirtualDestination(raw json.RawMessage, reg []RegistryCluster) (routing.Destination, error) {
	var d routing.Destination
	err := routingOf(oraclecall.Request{Op: "routing", Intent: "virtual-destination", Raw: raw, Registry: reg}, &d)
	return d, err
}

// RoutingTrafficPolicy is the routing statement of a traffic policy on a
// virtual destination (vd, its intent) or, vd nil, a Kubernetes service.
func RoutingTrafficPolicy(policy, vd json.RawMessage, reg []RegistryCluster) (routing.Traffic, error) {
	var r routing.Traffic
	err := routingOf(oraclecall.Request{Op: "routing", Intent: "traffic-policy", Raw: policy, VD: vd, Registry: reg}, &r)
	return r, err
}

// RoutingAccessPolicy is the routing statement of an access-policy case's
// intent (policy and destination).
func RoutingAccessPolicy(raw json.RawMessage, reg []RegistryCluster) (routing.Access, error) {
	var a routing.Access
	err := routingOf(oraclecall.Request{Op: "routing", Intent: "access-policy", Raw: raw, Registry: reg}, &a)
	return a, err
}

func routingOf(req oraclecall.Request, out any) error {
	resp, err := Call(req)
	if err != nil {
		return err
	}
	if resp.Err != "" {
		return errors.New(resp.Err)
	}
	return json.Unmarshal(resp.Routing, out)
}
