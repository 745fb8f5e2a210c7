package shareddata

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
)

// A composed object written by someone else in between (a resourceVersion
// conflict) is read again and recomposed: both contributions survive.
func TestComposeRetriesAfterAConcurrentWrite(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	if _, err := e.Apply(context.Background(), enginetest.ComposedOwner("a"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	seen := enginetest.ConflictsFirst(fc["east"], 2)
	if _, err := e.Apply(context.Background(), enginetest.ComposedOwner("b"), []engine.Desired{d}, nil); err != nil {
		t.Fatalf("compose gave up after 2 conflicts: %v", err)
	}
	if *seen != 3 {
		t.Fatalf("%d applies, want 2 refused and 1 that succeeds", *seen)
	}
	vs := enginetest.Live(t, fc["east"], d.Entry)
	routes, _, _ := unstructured.NestedSlice(vs.Object, "spec", "routes")
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
// engine.ConflictAttempts() attempts the error says why.
func TestComposeGivesUpAfterItsRetries(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	if _, err := e.Apply(context.Background(), enginetest.ComposedOwner("a"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	seen := enginetest.ConflictsFirst(fc["east"], 1000)
	_, err := e.Apply(context.Background(), enginetest.ComposedOwner("b"), []engine.Desired{d}, nil)
	if err == nil || !strings.Contains(err.Error(), "kept changing under concurrent writers") {
		t.Fatalf("want the give-up error, got %v", err)
	}
	if *seen != engine.ConflictAttempts() {
		t.Fatalf("%d attempts, want engine.ConflictAttempts() (%d)", *seen, engine.ConflictAttempts())
	}
}

// The last contribution out deletes the composed object.
func TestComposeLastContributionDeletesTheObject(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	if _, err := e.Apply(context.Background(), enginetest.ComposedOwner("a"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	left, err := e.Delete(context.Background(), enginetest.ComposedOwner("a"), []engine.Entry{d.Entry})
	if err != nil || len(left) != 0 {
		t.Fatalf("delete left %v, %v", left, err)
	}
	if enginetest.Live(t, fc["east"], d.Entry) != nil {
		t.Fatal("the composed object outlived its last contribution")
	}
}

// A hand-written object where a composed one goes is refused, untouched,
// unless the contributing intent adopts; then it is recomposed in place
// (same UID) from the contributions alone, and carries them.
func TestComposeAdoptsAPlainObjectOnlyWhenAsked(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	enginetest.Seed(t, fc["east"], d.Entry, map[string]string{"team": "hand-written"})
	uid := enginetest.Live(t, fc["east"], d.Entry).GetUID()
	if _, err := e.Apply(context.Background(), enginetest.ComposedOwner("a"), []engine.Desired{d}, nil); err == nil || !strings.Contains(err.Error(), "adopt_existing") {
		t.Fatalf("want the refusal naming adopt_existing, got %v", err)
	}
	if got := enginetest.Live(t, fc["east"], d.Entry); got.GetLabels()[engine.LabelManagedBy] != "" {
		t.Fatalf("the refused object was written: labels %v", got.GetLabels())
	}
	adopter := enginetest.ComposedOwner("a")
	adopter.Adopt = true
	if _, err := e.Apply(context.Background(), adopter, []engine.Desired{d}, nil); err != nil {
		t.Fatalf("adopting: %v", err)
	}
	vs := enginetest.Live(t, fc["east"], d.Entry)
	routes, _, _ := unstructured.NestedSlice(vs.Object, "spec", "routes")
	if vs.GetUID() != uid || fmt.Sprint(routes) != "[route-of-a]" || vs.GetLabels()["traffic-policy.mesh-intent.io/a"] != "id-a" {
		t.Fatalf("not adopted in place: uid %s (was %s), routes %v, labels %v", vs.GetUID(), uid, routes, vs.GetLabels())
	}
}
