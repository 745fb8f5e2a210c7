package shareddata

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition/compositiontest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// scaleFleet is n registered clusters and a virtual destination backed in
// all but five of them, every cluster its client.
func scaleFleet(n int) ([]string, *translate.Registry, trafficpolicy.Destination) {
	var names []string
	var cs []translate.Cluster
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("prod-eu-west-1-c%02d", i)
		names = append(names, name)
		cs = append(cs, translate.Cluster{Name: name})
	}
	backends := names[:n-5]
	dest := trafficpolicy.Destination{VirtualDestination: "user.global", VirtualDestinationName: "user", BackendClusters: backends, ClientBackends: map[string][]string{}}
	for _, c := range names {
		dest.ClientBackends[c] = backends
	}
	return names, translate.NewRegistry(cs...), dest
}

// scalePolicy is policy i of 20: each selects its own requests (a header
// value) from every cluster, and sets a timeout, retries and, for every
// fourth, a shift to one backend cluster; the last sets the load balancer.
func scalePolicy(i int, names []string, dest trafficpolicy.Destination) trafficpolicy.Named {
	in := trafficpolicy.Intent{Name: fmt.Sprintf("policy-%02d", i), Sources: trafficpolicy.Sources{Placement: translate.Placement{Clusters: names}},
		Match:   []trafficpolicy.Match{{Headers: map[string]string{"x-team": fmt.Sprintf("team-%02d", i)}}},
		Timeout: fmt.Sprintf("%ds", i+1), Retries: &trafficpolicy.Retries{Attempts: 2, RetryOn: []string{"5xx"}}}
	if i%4 == 0 {
		in.TrafficShift = []trafficpolicy.Shift{{Cluster: names[i], Weight: 100}}
	}
	if i == 19 {
		// A destination setting, for every caller: into the virtual
		// destination's DestinationRule.
		in = trafficpolicy.Intent{Name: in.Name, Sources: in.Sources, LoadBalancer: "LEAST_REQUEST"}
	}
	return trafficpolicy.Named{Policy: in, Destination: dest}
}

// 50 registered clusters, 20 policies from 5 states (each its workspace
// and instance IDs) on one hostname: the plan-level check (Limits) finds
// nothing, and every object written stays within every Kubernetes limit,
// each contribution within what every reader accepts. The contributions
// stored are restricted to their cluster: the whole ones would not be.
func TestFiftyClustersTwentyPoliciesFiveStates(t *testing.T) {
	names, reg, dest := scaleFleet(50)
	e, fc := newEngine(names...)
	ctx := context.Background()
	var all []engine.Entry
	seen := map[string]bool{}
	for i := 0; i < 20; i++ {
		state := i % 5
		owner, desired := policyOwner(t, scalePolicy(i, names, dest), fmt.Sprintf("id-%02d", i), fmt.Sprintf("state-%d", state), reg)
		if len(owner.Composition.Contribution.Whole.Raw) <= trafficpolicy.MaxContributionBytes {
			t.Fatalf("the whole contribution is %d bytes: the fleet is too small to need restricting", len(owner.Composition.Contribution.Whole.Raw))
		}
		entries := engine.Entries(desired)
		live, errs := Contributions(ctx, e, owner, entries)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if l := e.Limits(owner, entries, live, KeptByTheWrite(owner)); len(l) > 0 {
			t.Fatalf("policy %d: the plan-level check finds %v", i, l)
		}
		if _, err := e.Apply(ctx, owner, desired, nil); err != nil {
			t.Fatalf("policy %d: %v", i, err)
		}
		for _, en := range entries {
			if !seen[en.StateKey()] {
				seen[en.StateKey()] = true
				all = append(all, en)
			}
		}
	}
	if len(all) != 100 {
		t.Fatalf("%d objects per policy, want a VirtualService and a DestinationRule in each of 50 clusters", len(all))
	}
	largest := 0
	for _, en := range all {
		obj := enginetest.Live(t, fc[en.Cluster], en)
		if obj == nil {
			t.Fatalf("%s was not written", en)
		}
		total := 0
		for k, v := range obj.GetAnnotations() {
			total += len(k) + len(v)
			if len(v) > trafficpolicy.MaxContributionBytes {
				t.Fatalf("%s: annotation %s is %d bytes", en, k, len(v))
			}
			if _, err := trafficpolicy.DecodeContribution(v); err != nil {
				t.Fatalf("%s: annotation %s: %v", en, k, err)
			}
		}
		if want := map[string]int{"VirtualService": 19, "DestinationRule": 1}[en.Kind]; len(obj.GetAnnotations()) != want {
			t.Fatalf("%s holds %d contributions, want %d", en, len(obj.GetAnnotations()), want)
		}
		largest = max(largest, total)
		if total > engine.MaxAnnotationBytes || len(obj.GetName()) > engine.MaxNameLength {
			t.Fatalf("%s: annotations %d bytes, name %d characters", en, total, len(obj.GetName()))
		}
		for k, v := range obj.GetLabels() {
			if len(v) > engine.MaxLabelValueLength {
				t.Fatalf("%s: label %s=%q", en, k, v)
			}
		}
		for _, mf := range obj.GetManagedFields() {
			if len(mf.Manager) > engine.MaxManagerLength {
				t.Fatalf("%s: manager %q", en, mf.Manager)
			}
		}
	}
	t.Logf("largest annotations of an object: %d bytes for 19 contributions", largest)
}

// The plan-level check names every limit a write would hit, before
// anything is written: an object name, a label value, a field manager and
// the annotations of a composed object with what others contributed.
func TestLimitsNameEachLimit(t *testing.T) {
	e := &engine.Engine{FieldManager: fmt.Sprintf("%080d", 0)}
	long := engine.Owner{Kind: "virtual-destination", Name: fmt.Sprintf("%063d", 0), ID: fmt.Sprintf("%070d", 0)}
	en := engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "DestinationRule", Namespace: "istio-system", Name: "tp-" + fmt.Sprintf("%0251d", 0)}
	got := map[string]bool{}
	for _, l := range e.Limits(long, []engine.Entry{en}, nil, KeptByTheWrite(long)) {
		got[l.Limit] = true
	}
	for _, want := range []string{"object name", "label value", "field manager"} {
		if !got[want] {
			t.Errorf("the %s limit is not reported: %v", want, got)
		}
	}
	composed := enginetest.ComposedOwner("mine")
	composed.Composition.Contribution = compositiontest.Part(fmt.Sprintf("%0100d", 0))
	var others []engine.LiveContribution
	for i := 0; i < 9; i++ {
		others = append(others, engine.LiveContribution{Entry: en, Name: fmt.Sprintf("other-%d", i), Raw: fmt.Sprintf("%030000d", i)})
	}
	limits := e.Limits(composed, []engine.Entry{en}, others[:8], KeptByTheWrite(composed))
	for _, l := range limits {
		if l.Limit == "annotations" {
			t.Fatalf("8 contributions of 30000 bytes fit, but %v", l)
		}
	}
	limits = e.Limits(composed, []engine.Entry{en}, others, KeptByTheWrite(composed))
	found := false
	for _, l := range limits {
		found = found || (l.Limit == "annotations" && l.Object == en.String())
	}
	if !found {
		t.Fatalf("9 contributions of 30000 bytes and ours exceed 256 KiB, but %v", limits)
	}
}

// The apply refuses, before writing, a composed object whose annotations
// would exceed the limit with what it holds when applied (written since
// the plan read it).
func TestComposeRefusesAnnotationsOverTheLimit(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	for i := 0; i < 9; i++ {
		o := enginetest.ComposedOwner(fmt.Sprintf("other-%d", i))
		o.Composition.Contribution = compositiontest.Part(fmt.Sprintf("%030000d", i))
		_, err := e.Apply(ctx, o, []engine.Desired{d}, nil)
		if i < 8 && err != nil {
			t.Fatal(err)
		}
		if i == 8 && (err == nil || !strings.Contains(err.Error(), "Kubernetes limit exceeded: annotations")) {
			t.Fatalf("the ninth contribution of 30000 bytes: %v, want the annotations limit", err)
		}
	}
	if n := len(enginetest.Live(t, fc["east"], d.Entry).GetAnnotations()); n != 8 {
		t.Fatalf("the object holds %d contributions, want the 8 that fit", n)
	}
}
