package engine

import (
	"context"
	"fmt"
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

// configMapLists counts the ConfigMap LISTs a fake cluster received: in
// the records namespace, and in every namespace (cluster-wide).
func configMapLists(d *dynamicfake.FakeDynamicClient) (namespaced, clusterWide int) {
	for _, a := range d.Actions() {
		if a.GetVerb() != "list" || a.GetResource().Resource != "configmaps" {
			continue
		}
		if a.GetNamespace() == "" {
			clusterWide++
		} else {
			namespaced++
		}
	}
	return namespaced, clusterWide
}

// Record lookups share the engine's listing: 50 policies, each looking
// up its destination's hostname (with the search for lookalikes), make
// one LIST of the records namespace per cluster and at most one attempt
// of the cluster-wide search, not one or two per policy and cluster; and
// each still finds its own destination's records. A record written by
// this process is seen by the next lookup (the listing is taken again).
func TestRecordLookupsListEachClusterOnce(t *testing.T) {
	const policies = 50
	ctx := context.Background()
	e, fc := newFakeEngine(t, "east", "west")
	vd := func(i int) Owner {
		return Owner{Kind: "virtual-destination", Name: fmt.Sprintf("d%02d", i), ID: fmt.Sprintf("id-%02d", i)}
	}
	for i := range policies {
		if _, err := e.Apply(ctx, vd(i), []Desired{record(vd(i), "east", DefaultRecordsNamespace, fmt.Sprintf("d%02d.global", i)), record(vd(i), "west", DefaultRecordsNamespace, fmt.Sprintf("d%02d.global", i))}, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range fc {
		d.ClearActions()
	}
	for i := range policies {
		records, _, errs := e.Records(ctx, []string{"east", "west"}, fmt.Sprintf("d%02d.global", i), true)
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		if len(records) != 2 || records[0].OwnerID != vd(i).ID || records[1].OwnerID != vd(i).ID {
			t.Fatalf("lookup %d found %v, want the records of %s in east and west", i, records, vd(i).ID)
		}
	}
	for _, c := range []string{"east", "west"} {
		if ns, all := configMapLists(fc[c]); ns != 1 || all > 1 {
			t.Fatalf("cluster %s: %d LISTs of the records namespace and %d cluster-wide for %d lookups, want 1 and at most 1", c, ns, all, policies)
		}
	}
	// A record this process writes is seen by the next lookup.
	late := Owner{Kind: "virtual-destination", Name: "late", ID: "id-late"}
	if _, err := e.Apply(ctx, late, []Desired{record(late, "east", DefaultRecordsNamespace, "late.global")}, nil); err != nil {
		t.Fatal(err)
	}
	if records, _, _ := e.Records(ctx, []string{"east", "west"}, "late.global", true); len(records) != 1 || records[0].OwnerID != "id-late" {
		t.Fatalf("a record written in this process is not seen: %v", records)
	}
}
