package engine

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// record is a virtual destination's record ConfigMap of owner in ns.
func record(owner Owner, cluster, ns, hostname string) Desired {
	m := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "vd-" + owner.Name, "namespace": ns},
		"data":     map[string]any{"hostname": hostname, "intent": `{"name":"` + owner.Name + `","hostname":"` + hostname + `"}`},
	}
	addLabels(m, owner.Labels())
	return Desired{Entry: Entry{Cluster: cluster, APIVersion: "v1", Kind: "ConfigMap", Namespace: ns, Name: "vd-" + owner.Name, Digest: "d-" + ns}, Manifest: m}
}

var configMapKinds = []schema.GroupVersionKind{{Version: "v1", Kind: "ConfigMap"}}

// After records_namespace changes, a refresh keeps the records of the
// former namespace (listings cover the new one only), so that the next
// apply writes the record in the new namespace and deletes the old one;
// a record that became someone else's is neither kept nor deleted.
func TestRecordsMoveWithTheRecordsNamespace(t *testing.T) {
	ctx := context.Background()
	before, fc := newFakeEngine(t, "east", "west")
	before.RecordsNamespace = "old-records"
	prior, err := before.Apply(ctx, testOwner, []Desired{record(testOwner, "east", "old-records", "user.global"), record(testOwner, "west", "old-records", "user.global")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// west's old record is taken over by another instance in between.
	other := testOwner
	other.ID = "id-other"
	seedRecord := record(other, "west", "old-records", "user.global")
	if err := fc["west"].Tracker().Delete(configMaps, "old-records", "vd-user"); err != nil {
		t.Fatal(err)
	}
	seed(t, fc["west"], seedRecord.Entry, other.Labels())

	after := &Engine{Clients: fc, FieldManager: "test", RecordsNamespace: "new-records"}
	read, errs := after.Read(ctx, testOwner, configMapKinds, []string{"east", "west"}, prior)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if got := keysOf(read); got != "east/vd-user=d-old-records" {
		t.Fatalf("refresh after the records_namespace change kept %q, want the east record of the former namespace only (west's is another instance's now)", got)
	}
	entries, err := after.Apply(ctx, testOwner, []Desired{record(testOwner, "east", "new-records", "user.global"), record(testOwner, "west", "new-records", "user.global")}, read)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(entries); got != "east/vd-user=d-new-records,west/vd-user=d-new-records" {
		t.Fatalf("inventory %s, want the records in the new namespace only", got)
	}
	if live(t, fc["east"], record(testOwner, "east", "old-records", "").Entry) != nil {
		t.Fatal("the record in the former records namespace was not deleted")
	}
	if live(t, fc["west"], seedRecord.Entry) == nil {
		t.Fatal("another instance's record in the former namespace was deleted")
	}
	if live(t, fc["east"], record(testOwner, "east", "new-records", "").Entry) == nil {
		t.Fatal("the record was not written in the new namespace")
	}
}

// ListedConfigMaps, which the records lookup above the engine reads
// (internal/shareddata), is the records namespace's listing: one LIST per
// cluster however often it is asked for, and a ConfigMap this process
// writes is in the next one (the listing is taken again).
func TestListedConfigMapsSeesThisProcessesWrites(t *testing.T) {
	ctx := context.Background()
	e, fc := newFakeEngine(t, "east")
	first := Owner{Kind: "virtual-destination", Name: "first", ID: "id-first"}
	if _, err := e.Apply(ctx, first, []Desired{record(first, "east", DefaultRecordsNamespace, "first.global")}, nil); err != nil {
		t.Fatal(err)
	}
	names := func() string {
		t.Helper()
		items, err := e.ListedConfigMaps(ctx, "east", "Reading")
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, item := range items {
			out = append(out, item.GetName())
		}
		return strings.Join(out, ",")
	}
	fc["east"].ClearActions()
	for range 10 {
		if got := names(); got != "vd-first" {
			t.Fatalf("listed %q, want vd-first", got)
		}
	}
	if lists := countLists(fc["east"], "configmaps"); lists != 1 {
		t.Fatalf("%d LISTs of ConfigMaps for 10 reads, want 1", lists)
	}
	late := Owner{Kind: "virtual-destination", Name: "late", ID: "id-late"}
	if _, err := e.Apply(ctx, late, []Desired{record(late, "east", DefaultRecordsNamespace, "late.global")}, nil); err != nil {
		t.Fatal(err)
	}
	if got := names(); got != "vd-first,vd-late" {
		t.Fatalf("after this process wrote vd-late, listed %q, want vd-first,vd-late", got)
	}
	if _, err := e.ListedConfigMaps(ctx, "gone", "Reading"); err == nil || err.Cluster != "gone" {
		t.Fatalf("a cluster that does not answer: %v, want an error naming it", err)
	}
}

// countLists counts the LISTs of resource a fake cluster received.
func countLists(d *dynamicfake.FakeDynamicClient, resource string) int {
	n := 0
	for _, a := range d.Actions() {
		if a.GetVerb() == "list" && a.GetResource().Resource == resource {
			n++
		}
	}
	return n
}
