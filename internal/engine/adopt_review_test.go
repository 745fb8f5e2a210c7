package engine

import (
	"context"
	"testing"
)

// lostContent compares a hand-written
// route's destinations by host, subset and weight only. What a
// destination of the route says besides (its own headers: request and
// response headers set per destination) is read nowhere, so a
// hand-written VirtualService that sets a header per destination is
// adopted, deleted, and the header is gone without a word. And lists are
// compared as sets everywhere, also where order is the meaning:
// localityLbSetting.failoverPriority ranks its labels in order, and a
// hand-written DestinationRule ranking them the other way round is taken
// as saying what the intent says. Each must be refused, naming the field.
func TestAdoptionRefusesWhatItWouldLose(t *testing.T) {
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

// The adopted attribute keeps the last
// record when a plan finds nothing new (planAdopted), and the apply
// deletes what that record names if it is unchanged since, without asking
// whether the intent still takes it over. An adoption whose delete did
// not happen (the apply failed in another cluster: ApplyChecked's error
// skips DeleteAdopted) leaves the hand-written DestinationRule recorded;
// when the intent then stops writing a DestinationRule on that host in
// that cluster, the next plan does not adopt it (it is not the intent's
// to take over any more, RoutesToAdopt neither adopts nor refuses it),
// yet the next apply deletes it, and the host loses its DestinationRule.
func TestApplyDeletesOnlyWhatTheIntentStillTakesOver(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	putRoute(t, fc, "east", "DestinationRule", "user-dr", map[string]any{"host": "user.global"})
	earlier, _, _ := e.RoutesToAdopt(context.Background(), routeDesired(), false)
	if len(earlier) != 1 {
		t.Fatalf("the earlier plan adopts %v, want user-dr", earlier)
	}
	// Now the intent writes no DestinationRule on user.global in east
	// (its ServiceEntry and VirtualService stay).
	var now []Desired
	for _, d := range routeDesired() {
		if d.Kind != "DestinationRule" {
			now = append(now, d)
		}
	}
	adopt, refuse, _ := e.RoutesToAdopt(context.Background(), now, true)
	if len(adopt)+len(refuse) != 0 {
		t.Fatalf("the plan now adopts %v, refuses %v; want neither", adopt, refuse)
	}
	a := e.AdoptionAtApply(context.Background(), now, earlier)
	if len(a.Delete) > 0 {
		t.Fatalf("the apply deletes %v, which the intent no longer takes over (no DestinationRule of its own on the host): the host is left without one", a.Delete)
	}
}

// The subsets an intent defines are read
// from its rendered manifests only (hostsOfDesired: subsetsOf(d.Manifest)),
// and a traffic policy's objects are composed: their Manifest is empty,
// what the policy writes is in Part. A traffic policy that shifts
// between subsets v1 and v2 of a Service (labels version=v1, v2) cannot
// adopt the classic hand-written DestinationRule defining exactly those
// subsets with exactly those labels: it is refused as defining "the
// subsets v1, v2, which the intent's DestinationRule does not".
func TestPolicySubsetsAdoptTheirHandWrittenDestinationRule(t *testing.T) {
	const host = "user.users.svc.cluster.local"
	subsets := []any{
		map[string]any{"name": "v1", "labels": map[string]any{"version": "v1"}},
		map[string]any{"name": "v2", "labels": map[string]any{"version": "v2"}},
	}
	dr := serviceEntry(Owner{Kind: "traffic-policy", Name: "user-canary"}, "east", "tp-user")
	dr.Kind = "DestinationRule"
	dr.Manifest = map[string]any{} // composed: the part says what the policy writes
	dr.Hosts, dr.Declares = []string{host}, []string{host}
	dr.Part = map[string]any{"kind": "DestinationRule", "spec": map[string]any{"host": host, "subsets": subsets}}

	e, fc := newFakeEngine(t, "east")
	putRoute(t, fc, "east", "DestinationRule", "user-versions", map[string]any{"host": host, "subsets": subsets})
	adopt, refuse, _ := e.RoutesToAdopt(context.Background(), []Desired{dr}, false)
	if len(adopt) != 1 || len(refuse) > 0 {
		t.Fatalf("adopted %v, refused:\n%s\nwant the hand-written DestinationRule adopted: the policy defines the same subsets with the same labels", adopt, HandWrittenList(refuse))
	}
}
