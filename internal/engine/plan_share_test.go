package engine_test

import (
	"reflect"
	"testing"

	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// clientServiceEntry is a virtual destination's client ServiceEntry in
// cluster, its endpoints given.
func clientServiceEntry(cluster string, endpoints []*networkingapi.WorkloadEntry) translate.Object {
	return translate.Object{Cluster: cluster, Resource: &networking.ServiceEntry{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "ServiceEntry"),
		ObjectMeta: translate.ObjectMeta("istio-system", "vd-svc"),
		Spec: networkingapi.ServiceEntry{
			Hosts: []string{"svc.global"}, Ports: []*networkingapi.ServicePort{{Number: 80, Name: "http-80", Protocol: "HTTP"}},
			Location: networkingapi.ServiceEntry_MESH_INTERNAL, Resolution: networkingapi.ServiceEntry_DNS, Endpoints: endpoints,
		},
	}}
}

// TestPlanSharesADigestOnlyBetweenEqualObjects: Plan renders objects of
// equal content once (translate.Contents), so the clusters of one intent
// whose objects differ in one field must still get different digests and
// manifests. Here four clusters' client ServiceEntries: c and d share a's
// endpoints by pointer or have equal ones, b's second endpoint differs
// from a's in one character of its address (the local backend in a
// backend cluster), e's in one label value.
func TestPlanSharesADigestOnlyBetweenEqualObjects(t *testing.T) {
	endpoints := func(address, rank string) []*networkingapi.WorkloadEntry {
		return []*networkingapi.WorkloadEntry{
			{Address: "gw-west.example", Ports: map[string]uint32{"http-80": 15443}, Labels: map[string]string{"cluster": "west", "rank-le-0": "true"}},
			{Address: address, Labels: map[string]string{"cluster": "east", "rank-le-0": rank}},
		}
	}
	shared := endpoints("svc.ns.svc.cluster.local", "true")
	objs := []translate.Object{
		clientServiceEntry("a", shared),
		clientServiceEntry("b", endpoints("svc.ns.svc.cluster.locaL", "true")),
		clientServiceEntry("c", shared),
		clientServiceEntry("d", endpoints("svc.ns.svc.cluster.local", "true")),
		clientServiceEntry("e", endpoints("svc.ns.svc.cluster.local", "fals")),
	}
	owner := engine.Owner{Kind: "virtual-destination", Name: "svc", ID: "id-1"}
	desired, err := engine.Plan(owner, objs)
	if err != nil {
		t.Fatal(err)
	}
	digest := map[string]string{}
	for _, d := range desired {
		digest[d.Cluster] = d.Digest
	}
	if digest["a"] == "" || digest["c"] != digest["a"] || digest["d"] != digest["a"] {
		t.Errorf("equal objects got digests %v", digest)
	}
	if digest["b"] == digest["a"] || digest["e"] == digest["a"] || digest["b"] == digest["e"] {
		t.Errorf("objects that differ in one field share a digest: %v", digest)
	}
	planAlone(t, owner, objs, desired)
}

// planAlone checks desired, Plan's output for objs, against Plan of each
// object on its own (nothing to share): the same entries, digests,
// manifests, hosts and declared names.
func planAlone(t *testing.T, owner engine.Owner, objs []translate.Object, desired []engine.Desired) {
	t.Helper()
	if len(desired) != len(objs) {
		t.Fatalf("%d objects planned, want %d", len(desired), len(objs))
	}
	for i, o := range objs {
		alone, err := engine.Plan(owner, []translate.Object{o})
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(alone[0], desired[i]) {
			t.Fatalf("%s planned with the others:\n%+v\nplanned alone:\n%+v", o.Key(), desired[i], alone[0])
		}
	}
}

// TestPlanOfTheFleetIsPlanOfEachObject: on TestPlanIsStable's corpus (a
// quarter of its intents): bench/gen's configurations
// (virtual destinations, access policies, traffic policies' composed
// objects, records; one cluster's gateway and trust domain known only
// after apply in the last), Plan of an intent's objects gives, object
// for object, what Plan of that object alone gives: sharing renderings
// between clusters changes no digest and no manifest.
func TestPlanOfTheFleetIsPlanOfEachObject(t *testing.T) {
	unknown := 0
	planCorpus(t, 4, func(tr gen.Translated, desired []engine.Desired) {
		planAlone(t, tr.Owner, tr.Objects, desired)
		for _, d := range desired {
			if d.Manifest == nil {
				unknown++
			}
		}
	})
	if unknown == 0 {
		t.Fatal("no object known only after apply in the corpus")
	}
}
