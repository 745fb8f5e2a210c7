package engine

import (
	"context"
	"testing"
)

// Review of issue 38 (finding 3): lostContent compares a hand-written
// route's destinations by host, subset and weight only. What a
// destination of the route says besides (its own headers: request and
// response headers set per destination) is read nowhere, so a
// hand-written VirtualService that sets a header per destination is
// adopted, deleted, and the header is gone without a word. And lists are
// compared as sets everywhere, also where order is the meaning:
// localityLbSetting.failoverPriority ranks its labels in order, and a
// hand-written DestinationRule ranking them the other way round is taken
// as saying what the intent says. Each must be refused, naming the field.
func TestReview54_AdoptionRefusesWhatItWouldLose(t *testing.T) {
	for _, c := range []struct {
		name, kind string
		spec       map[string]any
		desired    func([]Desired)
	}{
		{
			name: "a header set on one destination of the route",
			kind: "VirtualService",
			spec: map[string]any{"hosts": []any{"user.global"}, "http": []any{map[string]any{"timeout": "1s", "route": []any{map[string]any{
				"destination": map[string]any{"host": "east.cluster.user.global"},
				"headers":     map[string]any{"request": map[string]any{"set": map[string]any{"x-tenant": "blue"}}}}}}}},
		},
		{
			name: "failoverPriority ranked the other way round",
			kind: "DestinationRule",
			spec: map[string]any{"host": "user.global", "trafficPolicy": map[string]any{"loadBalancer": map[string]any{"localityLbSetting": map[string]any{
				"enabled": true, "failoverPriority": []any{"topology.kubernetes.io/zone", "topology.kubernetes.io/region"}}}}},
			desired: func(d []Desired) {
				d[1].Manifest["spec"] = map[string]any{"host": "user.global", "subsets": []any{map[string]any{"name": "east"}},
					"trafficPolicy": map[string]any{"loadBalancer": map[string]any{"localityLbSetting": map[string]any{
						"enabled": true, "failoverPriority": []any{"topology.kubernetes.io/region", "topology.kubernetes.io/zone"}}}}}
			},
		},
	} {
		desired := routeDesired()
		if c.desired != nil {
			c.desired(desired)
		}
		e, fc := newFakeEngine(t, "east")
		putRoute(t, fc, "east", c.kind, "hand", c.spec)
		adopt, refuse, _ := e.RoutesToAdopt(context.Background(), desired, false)
		if len(adopt) > 0 || len(refuse) != 1 {
			t.Errorf("%s: adopted %v (refused %v): adopting deletes it, and what it says is lost", c.name, adopt, HandWrittenList(refuse))
		}
	}
}
