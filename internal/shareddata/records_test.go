package shareddata

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
)

var testOwner = engine.Owner{Kind: "virtual-destination", Name: "user", ID: "id-1"}

// recordOn is owner's record of hostname, as its apply writes it.
func recordOn(owner engine.Owner, ns, hostname string) *unstructured.Unstructured {
	labels := map[string]any{}
	for k, v := range owner.Labels() {
		labels[k] = v
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "vd-" + owner.Name, "namespace": ns, "labels": labels},
		"data":     map[string]any{recordHostnameKey: hostname, recordIntentKey: `{"name":"` + owner.Name + `","hostname":"` + hostname + `"}`},
	}}
}

// newRecords is the records lookup of an engine on fake clusters.
func newRecords(clusters ...string) (Records, enginetest.Clusters) {
	fc := enginetest.New(clusters...)
	return Records{&engine.Engine{Clients: fc, FieldManager: "test"}}, fc
}

// Records are read from the records namespace only, with their writer's
// owner labels, in every cluster given; lookalikes elsewhere are listed
// apart, and an unreachable cluster is an error naming it.
func TestRecordsReadsTheRecordsNamespaceWithProvenance(t *testing.T) {
	ctx := context.Background()
	e, fc := newRecords("east", "west")
	a, b, o := testOwner, engine.Owner{Kind: "virtual-destination", Name: "user-b", ID: "id-b"}, engine.Owner{Kind: "virtual-destination", Name: "other", ID: "id-o"}
	fc.Put(t, "east", recordOn(a, engine.DefaultRecordsNamespace, "user.global"))
	fc.Put(t, "west", recordOn(b, engine.DefaultRecordsNamespace, "user.global"))
	fc.Put(t, "east", recordOn(b, "planted", "user.global"))
	fc.Put(t, "east", recordOn(o, engine.DefaultRecordsNamespace, "other.global"))
	records, elsewhere, errs := e.Lookup(ctx, []string{"east", "west", "gone"}, "user.global", true)
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
// each still finds its own destination's records. (That a record this
// process writes is seen by the next lookup is the listing's:
// internal/engine's TestListedConfigMapsSeesThisProcessesWrites.)
func TestRecordLookupsListEachClusterOnce(t *testing.T) {
	const policies = 50
	ctx := context.Background()
	e, fc := newRecords("east", "west")
	vd := func(i int) engine.Owner {
		return engine.Owner{Kind: "virtual-destination", Name: fmt.Sprintf("d%02d", i), ID: fmt.Sprintf("id-%02d", i)}
	}
	for i := range policies {
		fc.Put(t, "east", recordOn(vd(i), engine.DefaultRecordsNamespace, fmt.Sprintf("d%02d.global", i)))
		fc.Put(t, "west", recordOn(vd(i), engine.DefaultRecordsNamespace, fmt.Sprintf("d%02d.global", i)))
	}
	for _, d := range fc {
		d.ClearActions()
	}
	for i := range policies {
		records, _, errs := e.Lookup(ctx, []string{"east", "west"}, fmt.Sprintf("d%02d.global", i), true)
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
}

// A virtual destination's record on a pull cluster is published in the
// artifact and read back from the registry, as records are from a push
// cluster.
func TestPullRecordsReadFromTheArtifact(t *testing.T) {
	target := newPullRegistry(t)
	ctx := context.Background()
	m := recordOn(testOwner, engine.DefaultRecordsNamespace, "user.global")
	d := engine.Desired{Entry: engine.Entry{Cluster: "onprem", APIVersion: "v1", Kind: "ConfigMap", Namespace: m.GetNamespace(), Name: m.GetName(), Digest: "d-record"}, Manifest: m.Object}
	if _, err := newEngineOn(target).Apply(ctx, testOwner, []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	run2 := Records{newEngineOn(target)}
	got, _, errs := run2.Lookup(ctx, []string{"onprem"}, "user.global", false)
	if len(errs) > 0 || len(got) != 1 || got[0].OwnerID != testOwner.ID || got[0].Cluster != "onprem" {
		t.Errorf("records on the pull cluster: %+v, %v", got, errs)
	}
	if none, _, errs := run2.Lookup(ctx, []string{"onprem"}, "other.global", false); len(errs) > 0 || len(none) != 0 {
		t.Errorf("records of another hostname: %+v, %v", none, errs)
	}
}
