package engine

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// record is a virtual destination's record ConfigMap of owner in ns.
func record(owner Owner, cluster, ns, hostname string) Desired {
	m := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "vd-" + owner.Name, "namespace": ns},
		"data":     map[string]any{recordHostnameKey: hostname, recordIntentKey: `{"name":"` + owner.Name + `","hostname":"` + hostname + `"}`},
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

// Records are read from the records namespace only, with their writer's
// owner labels, in every cluster given; lookalikes elsewhere are listed
// apart, and an unreachable cluster is an error naming it.
func TestRecordsReadsTheRecordsNamespaceWithProvenance(t *testing.T) {
	ctx := context.Background()
	e, _ := newFakeEngine(t, "east", "west")
	a, b, o := testOwner, Owner{Kind: "virtual-destination", Name: "user-b", ID: "id-b"}, Owner{Kind: "virtual-destination", Name: "other", ID: "id-o"}
	for _, w := range []struct {
		owner Owner
		d     Desired
	}{
		{a, record(a, "east", DefaultRecordsNamespace, "user.global")},
		{b, record(b, "west", DefaultRecordsNamespace, "user.global")},
		{b, record(b, "east", "planted", "user.global")},
		{o, record(o, "east", DefaultRecordsNamespace, "other.global")},
	} {
		if _, err := e.Apply(ctx, w.owner, []Desired{w.d}, nil); err != nil {
			t.Fatal(err)
		}
	}
	records, elsewhere, errs := e.Records(ctx, []string{"east", "west", "gone"}, "user.global", true)
	if len(errs) != 1 || errs[0].Cluster != "gone" {
		t.Fatalf("errors %v, want one naming cluster gone", errs)
	}
	var got []string
	for _, r := range records {
		got = append(got, r.Cluster+":"+r.OwnerName+":"+r.OwnerID)
	}
	if strings.Join(got, ",") != "east:user:id-1,west:user-b:id-b" {
		t.Fatalf("records %v, want east's by id-1 and west's by id-b", got)
	}
	if len(elsewhere) != 1 || elsewhere[0].Where() != "ConfigMap planted/vd-user-b in cluster east" {
		t.Fatalf("elsewhere %v, want the planted one", elsewhere)
	}
}
