package engine

import (
	"context"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
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
