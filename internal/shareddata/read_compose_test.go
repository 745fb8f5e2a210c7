package engine

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

var serviceEntryKind = schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "ServiceEntry"}

// Refresh lists what the intent owns in the clusters it can reach, and
// keeps the prior entries of a cluster it cannot: an unreachable cluster
// is no reason to forget what exists there.
func TestReadKeepsEntriesOfAnUnreachableCluster(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	inEast := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], inEast.Entry, testOwner.Labels())
	inGone := serviceEntry(testOwner, "gone", "a")
	entries, errs := e.Read(context.Background(), testOwner, []schema.GroupVersionKind{serviceEntryKind}, []string{"east"}, []Entry{inGone.Entry})
	if len(errs) != 1 || errs[0].Cluster != "gone" {
		t.Fatalf("want one warning, for cluster gone; got %v", errs)
	}
	var got []string
	for _, en := range entries {
		got = append(got, en.Cluster+"/"+en.Name)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != "east/a,gone/a" {
		t.Fatalf("read %v, want east/a (listed) and gone/a (kept)", got)
	}
}

// Refresh finds only this instance's objects.
func TestReadListsOnlyThisInstance(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	other := testOwner
	other.ID = "id-other"
	seed(t, fc["east"], serviceEntry(testOwner, "east", "mine").Entry, testOwner.Labels())
	seed(t, fc["east"], serviceEntry(other, "east", "theirs").Entry, other.Labels())
	entries, errs := e.Read(context.Background(), testOwner, []schema.GroupVersionKind{serviceEntryKind}, []string{"east"}, nil)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(entries) != 1 || entries[0].Name != "mine" {
		t.Fatalf("read %v, want only mine", entries)
	}
}

// composedOwner contributes name to a composed VirtualService whose spec
// lists the contributions.
func composedOwner(name string) Owner {
	return Owner{Kind: "traffic-policy", Name: name, ID: "id-" + name, Composition: &Composition{
		Contribution: testPart("route-of-" + name),
		Composer:     testComposer{},
	}}
}

// testComposer composes test contributions, each a route as a string,
// into a VirtualService that lists them. check, when set, reads the
// workspace of a contribution and refuses what it does not accept.
type testComposer struct {
	check func(raw string) (string, error)
}

type testContribution struct{ raw, workspace string }

func (c testContribution) Workspace() string { return c.workspace }

func (c testContribution) Name() string { return "" }

func (t testComposer) Decode(raw string) (composition.Contribution, error) {
	if t.check == nil {
		return testContribution{raw: raw}, nil
	}
	ws, err := t.check(raw)
	return testContribution{raw: raw, workspace: ws}, err
}

func (testComposer) Compose(key translate.Key, contributions map[string]composition.Contribution) (map[string]any, error) {
	var routes []any
	for _, n := range sortedNames(contributions) {
		routes = append(routes, contributions[n].(testContribution).raw)
	}
	return map[string]any{"apiVersion": key.APIVersion, "kind": key.Kind,
		"metadata": map[string]any{"name": key.Name, "namespace": key.Namespace},
		"spec":     map[string]any{"hosts": []any{"user.global"}, "routes": routes}}, nil
}

func (testComposer) Canonical(raw string) string { return raw }

func (testComposer) Targets(translate.Key, composition.Contribution) bool { return true }

// testComposers are the engine's composers (Engine.Composers) where a
// test's traffic-policy contributions compose into the objects they are
// on.
var testComposers = map[string]composition.Composer{"traffic-policy": testComposer{}}

// testPart is raw as an intent's own contribution, in every cluster.
func testPart(raw string) composition.Part {
	return composition.Part{Whole: composition.Encoded{Contribution: testContribution{raw: raw}, Raw: raw}}
}

func sortedNames[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func composedEntry() Desired {
	return Desired{Entry: Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "istio-system", Name: "tp-user.global", Digest: "c"},
		Manifest: map[string]any{}}
}

// conflictsFirst makes the first n server-side applies of a fake cluster
// fail with a resourceVersion conflict (another writer came first) and
// returns the number of applies seen.
func conflictsFirst(d k8stesting.FakeClient, n int) *int {
	seen := 0
	d.PrependReactor("patch", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		seen++
		if seen <= n {
			return true, nil, apierrors.NewConflict(schema.GroupResource{Group: "networking.istio.io", Resource: "virtualservices"}, "tp-user.global", fmt.Errorf("the object has been modified"))
		}
		return false, nil, nil
	})
	return &seen
}

// A composed object written by someone else in between (a resourceVersion
// conflict) is read again and recomposed: both contributions survive.
func TestComposeRetriesAfterAConcurrentWrite(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := composedEntry()
	if _, err := e.Apply(context.Background(), composedOwner("a"), []Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	seen := conflictsFirst(fc["east"], 2)
	if _, err := e.Apply(context.Background(), composedOwner("b"), []Desired{d}, nil); err != nil {
		t.Fatalf("compose gave up after 2 conflicts: %v", err)
	}
	if *seen != 3 {
		t.Fatalf("%d applies, want 2 refused and 1 that succeeds", *seen)
	}
	vs := live(t, fc["east"], d.Entry)
	routes, _, _ := unstructuredSlice(vs.Object, "spec", "routes")
	if fmt.Sprint(routes) != "[route-of-a route-of-b]" {
		t.Fatalf("composed routes %v, want both contributions", routes)
	}
	for _, k := range []string{"traffic-policy.mesh-intent.io/a", "traffic-policy.mesh-intent.io/b"} {
		if vs.GetAnnotations()[k] == "" || vs.GetLabels()[k] == "" {
			t.Fatalf("contribution %s missing: labels %v annotations %v", k, vs.GetLabels(), vs.GetAnnotations())
		}
	}
}

// Writers that keep colliding are not retried forever: after
// conflictBackoff.Steps attempts the error says why.
func TestComposeGivesUpAfterItsRetries(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := composedEntry()
	if _, err := e.Apply(context.Background(), composedOwner("a"), []Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	seen := conflictsFirst(fc["east"], 1000)
	_, err := e.Apply(context.Background(), composedOwner("b"), []Desired{d}, nil)
	if err == nil || !strings.Contains(err.Error(), "kept changing under concurrent writers") {
		t.Fatalf("want the give-up error, got %v", err)
	}
	if *seen != conflictBackoff.Steps {
		t.Fatalf("%d attempts, want conflictBackoff.Steps (%d)", *seen, conflictBackoff.Steps)
	}
}

// The last contribution out deletes the composed object.
func TestComposeLastContributionDeletesTheObject(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := composedEntry()
	if _, err := e.Apply(context.Background(), composedOwner("a"), []Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	left, err := e.Delete(context.Background(), composedOwner("a"), []Entry{d.Entry})
	if err != nil || len(left) != 0 {
		t.Fatalf("delete left %v, %v", left, err)
	}
	if live(t, fc["east"], d.Entry) != nil {
		t.Fatal("the composed object outlived its last contribution")
	}
}

// A hand-written object where a composed one goes is refused, untouched,
// unless the contributing intent adopts; then it is recomposed in place
// (same UID) from the contributions alone, and carries them.
func TestComposeAdoptsAPlainObjectOnlyWhenAsked(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	d := composedEntry()
	seed(t, fc["east"], d.Entry, map[string]string{"team": "hand-written"})
	uid := live(t, fc["east"], d.Entry).GetUID()
	if _, err := e.Apply(context.Background(), composedOwner("a"), []Desired{d}, nil); err == nil || !strings.Contains(err.Error(), "adopt_existing") {
		t.Fatalf("want the refusal naming adopt_existing, got %v", err)
	}
	if got := live(t, fc["east"], d.Entry); got.GetLabels()[LabelManagedBy] != "" {
		t.Fatalf("the refused object was written: labels %v", got.GetLabels())
	}
	adopter := composedOwner("a")
	adopter.Adopt = true
	if _, err := e.Apply(context.Background(), adopter, []Desired{d}, nil); err != nil {
		t.Fatalf("adopting: %v", err)
	}
	vs := live(t, fc["east"], d.Entry)
	routes, _, _ := unstructuredSlice(vs.Object, "spec", "routes")
	if vs.GetUID() != uid || fmt.Sprint(routes) != "[route-of-a]" || vs.GetLabels()["traffic-policy.mesh-intent.io/a"] != "id-a" {
		t.Fatalf("not adopted in place: uid %s (was %s), routes %v, labels %v", vs.GetUID(), uid, routes, vs.GetLabels())
	}
}
