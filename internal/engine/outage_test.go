package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"syscall"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// cutOff makes every request to a fake cluster fail as err: the cluster
// is down (a refused connection), silent, or answers with a status.
func cutOff(d k8stesting.FakeClient, err error) {
	d.PrependReactor("*", "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err })
}

var refused = &url.Error{Op: "Patch", URL: "https://west.example:6443/apis", Err: syscall.ECONNREFUSED}

// outageFixture is an intent with an object in east and one in west, both
// in state; east's object changes, west's keeps its digest unless
// westChanges. A stale object in east waits to be pruned.
func outageFixture(t *testing.T, westChanges bool, westErr error) (*Engine, fakeClusters, []Entry, error) {
	t.Helper()
	e, fc := newFakeEngine(t, "east", "west")
	eastA, westA, stale := serviceEntry(testOwner, "east", "a"), serviceEntry(testOwner, "west", "a"), serviceEntry(testOwner, "east", "stale")
	seed(t, fc["east"], eastA.Entry, testOwner.Labels())
	seed(t, fc["east"], stale.Entry, testOwner.Labels())
	prior := []Entry{eastA.Entry, stale.Entry, westA.Entry}
	eastA.Digest = "d-a2"
	if westChanges {
		westA.Digest = "d-a2"
	}
	cutOff(fc["west"], westErr)
	entries, err := e.Apply(context.Background(), testOwner, []Desired{eastA, westA}, prior)
	return e, fc, entries, err
}

// A cluster that cannot be reached, where nothing of the intent changes,
// fails nothing: east is written and pruned, west's entry stays as state
// listed it, and the only report is one warning naming west.
func TestApplyKeepsAnUnchangedUnreachableCluster(t *testing.T) {
	for name, cause := range map[string]error{
		"refused": refused,
		"silent":  fmt.Errorf("cluster west %w", kubeclient.ErrSilent),
	} {
		t.Run(name, func(t *testing.T) {
			_, fc, entries, err := outageFixture(t, false, cause)
			if err == nil || !errors.Is(err, ErrUnchangedUnreachable) {
				t.Fatalf("want the warning for west, got %v", err)
			}
			var list Errors
			if !errors.As(err, &list) || len(list) != 1 || list[0].Cluster != "west" || len(failures(list)) != 0 {
				t.Fatalf("want exactly one warning, for west, and no failure; got %v", err)
			}
			for _, want := range []string{"Cluster west", "mesh_virtual_destination \"user\"", "kept as in state", "re-checks"} {
				if !strings.Contains(list[0].Summary+" "+list[0].Detail, want) {
					t.Errorf("the warning does not say %q: %s", want, list[0])
				}
			}
			if got := keysOf(entries); got != "east/a=d-a2,west/a=d-a" {
				t.Fatalf("inventory %s, want east/a applied, east/stale pruned, west/a kept as in state", got)
			}
			if live(t, fc["east"], serviceEntry(testOwner, "east", "stale").Entry) != nil {
				t.Fatal("east/stale was not pruned: the unreachable unchanged cluster stopped the prune")
			}
		})
	}
}

// A change that must reach the unreachable cluster, or a failure that is
// no outage (the cluster answered, or Terraform was interrupted), still
// fails there, and nothing is pruned; east is written all the same.
func TestApplyFailsWhatMustReachAnUnreachableCluster(t *testing.T) {
	for _, tc := range []struct {
		name        string
		westChanges bool
		err         error
		says        string
	}{
		{"changed content", true, refused, "is unreachable"},
		{"silent", true, fmt.Errorf("cluster west %w", kubeclient.ErrSilent), "did not answer"},
		{"answered 403", false, apierrors.NewForbidden(schema.GroupResource{Resource: "serviceentries"}, "a", fmt.Errorf("no")), "403 Forbidden"},
		{"interrupted", false, &url.Error{Op: "Patch", URL: "https://west.example:6443/apis", Err: context.Canceled}, "interrupted"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, fc, entries, err := outageFixture(t, tc.westChanges, tc.err)
			var list Errors
			if !errors.As(err, &list) || len(failures(list)) == 0 || errors.Is(err, ErrUnchangedUnreachable) {
				t.Fatalf("want a failure for west, not a warning; got %v", err)
			}
			for _, e := range list {
				if e.Cluster != "west" {
					t.Errorf("a failure names %s, not west: %s", e.Cluster, e)
				}
			}
			if !strings.Contains(err.Error(), tc.says) {
				t.Errorf("the error does not say %q: %v", tc.says, err)
			}
			if got := keysOf(entries); got != "east/a=d-a2,east/stale=d-stale,west/a=d-a" {
				t.Fatalf("inventory %s, want east/a applied, east/stale kept (no prune after a failure), west/a as it was", got)
			}
			if live(t, fc["east"], serviceEntry(testOwner, "east", "stale").Entry) == nil {
				t.Fatal("east/stale was pruned after a failed write")
			}
		})
	}
}

// Only an exact match with state counts as unchanged: a new object, an
// object to prune, or an unconfirmed or unknown digest is a change.
func TestUnchangedInNeedsTheStateExactly(t *testing.T) {
	a, b := serviceEntry(testOwner, "west", "a"), serviceEntry(testOwner, "west", "b")
	unconfirmedA, unknownA := a, a
	unconfirmedA.Digest, unknownA.Digest = DigestUnconfirmed, ""
	for _, tc := range []struct {
		name    string
		desired []Desired
		prior   []Entry
		want    bool
	}{
		{"same", []Desired{a, b}, []Entry{a.Entry, b.Entry}, true},
		{"new object", []Desired{a, b}, []Entry{a.Entry}, false},
		{"object to prune", []Desired{a}, []Entry{a.Entry, b.Entry}, false},
		{"unconfirmed in state", []Desired{a}, []Entry{unconfirmedA.Entry}, false},
		{"unknown content", []Desired{unknownA}, []Entry{unknownA.Entry}, false},
		{"nothing desired", nil, nil, false},
	} {
		if got := unchangedIn(tc.desired, tc.prior); got != tc.want {
			t.Errorf("%s: unchangedIn = %v, want %v", tc.name, got, tc.want)
		}
	}
}
