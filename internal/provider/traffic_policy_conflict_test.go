package provider

import (
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/runstate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// Terraform plans the policies of one destination in parallel, in no fixed
// order. Whatever the order, the conflict of "a" and "b" (two timeouts for
// the same requests) is reported once, by the one of them planned second,
// naming both, in the same words; "c", which sets no timeout, never reports
// it. Every order of the three is one plan of the same configuration.
func TestTrafficPolicyConflictNamedOnTheTwoConflictingPolicies(t *testing.T) {
	reg := translate.NewRegistry(
		translate.Cluster{Name: "east"},
		translate.Cluster{Name: "west"},
	)
	vd := trafficpolicy.Destination{VirtualDestination: "user.global", BackendClusters: []string{"east", "west"}, VirtualDestinationName: "user"}
	policies := map[string]trafficpolicy.Named{
		"a": {Policy: trafficpolicy.Intent{Name: "a", Timeout: "3s"}, Destination: vd},
		"b": {Policy: trafficpolicy.Intent{Name: "b", Timeout: "9s"}, Destination: vd},
		"c": {Policy: trafficpolicy.Intent{Name: "c", Retries: &trafficpolicy.Retries{Attempts: 2}}, Destination: vd},
	}
	orders := [][]string{
		{"a", "b", "c"}, {"a", "c", "b"}, {"b", "a", "c"},
		{"b", "c", "a"}, {"c", "a", "b"}, {"c", "b", "a"},
	}
	var message string
	for _, order := range orders {
		index := &runstate.TrafficPolicyIndex{}
		var reported []string
		for i, name := range order {
			self := policies[name]
			err := conflictsWith(self, index.RememberAndList(self), reg)
			if err == nil {
				continue
			}
			reported = append(reported, name)
			// The one of a and b planned second reports it.
			if second := strings.Contains("ab", name) && strings.ContainsAny(strings.Join(order[:i], ""), strings.Replace("ab", name, "", 1)); !second {
				t.Errorf("order %v: %s reported the conflict: %v", order, name, err)
			}
			if !strings.Contains(err.Error(), `"a" and "b"`) || strings.Contains(err.Error(), `"c"`) {
				t.Errorf("order %v: the error must name a and b, and not c: %v", order, err)
			}
			if message == "" {
				message = err.Error()
			} else if err.Error() != message {
				t.Errorf("order %v: the error reads\n%s\nanother plan's read\n%s", order, err, message)
			}
		}
		if len(reported) != 1 {
			t.Errorf("order %v: reported by %v, want exactly one of a and b", order, reported)
		}
	}
}
