package engine

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	discoveryfake "k8s.io/client-go/discovery/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// withDiscovery serves fake clusters with a discovery client that lists
// the given resources of networking.istio.io/v1.
type withDiscovery struct {
	fakeClusters
	served []string
}

func (w withDiscovery) Get(cluster string) (*kubeclient.Clients, error) {
	c, err := w.fakeClusters.Get(cluster)
	if err != nil {
		return nil, err
	}
	d := &discoveryfake.FakeDiscovery{Fake: &k8stesting.Fake{}}
	if w.served != nil {
		var rs []metav1.APIResource
		for _, r := range w.served {
			rs = append(rs, metav1.APIResource{Name: r})
		}
		d.Resources = []*metav1.APIResourceList{{GroupVersion: "networking.istio.io/v1", APIResources: rs}}
	}
	c.Discovery = d
	return c, nil
}

// A LIST answered 404 while discovery says the kind is served (a
// misrouted proxy, an aggregated API's hiccup) is an error, and refresh
// keeps what state listed; only when discovery agrees that the kind is not
// installed is there nothing of it to own.
func TestRead404TakenAsAbsentOnlyWhenDiscoverySaysSo(t *testing.T) {
	for _, c := range []struct {
		name    string
		served  []string
		wantErr bool
	}{
		{"discovery serves the kind", []string{"serviceentries"}, true},
		{"discovery does not", nil, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, fc := newFakeEngine(t, "east")
			e.Clients = withDiscovery{fc, c.served}
			fc["east"].PrependReactor("list", "serviceentries", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewNotFound(schema.GroupResource{Group: "networking.istio.io", Resource: "serviceentries"}, "")
			})
			prior := serviceEntry(testOwner, "east", "a").Entry
			entries, errs := e.Read(context.Background(), testOwner, []schema.GroupVersionKind{serviceEntryKind}, []string{"east"}, []Entry{prior})
			if c.wantErr {
				if len(errs) != 1 || !strings.Contains(errs[0].Error(), "discovery lists the resource as served") {
					t.Fatalf("want the 404 refused, got %v", errs)
				}
				if len(entries) != 1 {
					t.Fatalf("prior entries not kept: %v", entries)
				}
				return
			}
			if len(errs) != 0 || len(entries) != 0 {
				t.Fatalf("an uninstalled kind: got %v, %v; want nothing, no error", entries, errs)
			}
		})
	}
}

// A listing taken before an apply is not what a refresh after it answers
// from: in one provider process (terraform apply refreshes, writes, and a
// later refresh reads again), a Read after an Apply sees the objects it
// created and no longer lists those it pruned.
func TestReadAfterApplySeesItsWrites(t *testing.T) {
	e, _ := newFakeEngine(t, "east")
	ctx := context.Background()
	read := func() string {
		t.Helper()
		got, errs := e.Read(ctx, testOwner, []schema.GroupVersionKind{serviceEntryKind}, []string{"east"}, nil)
		if len(errs) != 0 {
			t.Fatal(errs)
		}
		var keys []string
		for _, en := range got {
			keys = append(keys, en.Key().String())
		}
		return strings.Join(keys, " ")
	}
	if got := read(); got != "" {
		t.Fatalf("an empty cluster lists %q", got)
	}
	a, b := serviceEntry(testOwner, "east", "a"), serviceEntry(testOwner, "east", "b")
	if _, err := e.Apply(ctx, testOwner, []Desired{a, b}, nil); err != nil {
		t.Fatal(err)
	}
	want := a.Key().String() + " " + b.Key().String()
	if got := read(); got != want {
		t.Fatalf("after creating a and b, refresh lists %q, want %q", got, want)
	}
	if _, err := e.Apply(ctx, testOwner, []Desired{b}, []Entry{a.Entry, b.Entry}); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != b.Key().String() {
		t.Fatalf("after pruning a, refresh lists %q, want only %q", got, b.Key().String())
	}
}
