package provider

import (
	"encoding/json"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// resolvedPrefix starts a traffic policy's resolved_destination. The
// value is machine data (read back by the policy's later plans and
// applies, never by a reviewer); a bare JSON object would be printed by
// terraform plan as a jsonencode block of about thirty lines per policy
// (580 of the 3881 lines of a 3-cluster x 20-service plan). Behind the
// prefix the value is no JSON to Terraform, so it prints on one line.
const resolvedPrefix = "v2 "

// encodeResolved is the resolved_destination of d: resolvedPrefix and
// d's compact JSON.
func encodeResolved(d trafficpolicy.Destination) string {
	raw, err := json.Marshal(d)
	if err != nil {
		// Destination is strings, slices and maps of strings: Marshal
		// never fails on it.
		panic(err)
	}
	return resolvedPrefix + string(raw)
}

// decodeResolved reads a resolved_destination: the prefixed form, or the
// bare JSON of 0.1.0 states (still there until the destination changes).
func decodeResolved(s string) (trafficpolicy.Destination, bool) {
	var d trafficpolicy.Destination
	raw := strings.TrimPrefix(s, resolvedPrefix)
	if json.Unmarshal([]byte(raw), &d) != nil {
		return trafficpolicy.Destination{}, false
	}
	return d, true
}

// resolvedValue is the resolved_destination to plan for d: the prior
// value when it says the same (a 0.1.0 state's bare JSON stays, so the
// new form is no change to plan), the new form otherwise.
func resolvedValue(prior types.String, d trafficpolicy.Destination) types.String {
	if !prior.IsNull() && !prior.IsUnknown() {
		if old, ok := decodeResolved(prior.ValueString()); ok && sameDestination(old, d) {
			return prior
		}
	}
	return types.StringValue(encodeResolved(d))
}

// sameDestination compares two destinations as their JSON, which is what
// state holds of them (nil and empty lists alike).
func sameDestination(a, b trafficpolicy.Destination) bool {
	ra, errA := json.Marshal(a)
	rb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ra) == string(rb)
}
