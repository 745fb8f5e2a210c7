package engine

import (
	"context"
	"reflect"
	"testing"

	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// TestApplyLeavesSharedManifestsAlone: Plan gives objects of equal
// content in several clusters one manifest map (Desired.Manifest: read
// it, never change it). Applying them, creating then updating (the
// update names the object by its UID, a copy of the manifest), must leave
// that map as planned, or one cluster's write would change another's
// object.
func TestApplyLeavesSharedManifestsAlone(t *testing.T) {
	var objs []translate.Object
	for _, c := range []string{"east", "west"} {
		objs = append(objs, translate.Object{Cluster: c, Resource: &networking.ServiceEntry{
			TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "ServiceEntry"),
			ObjectMeta: translate.ObjectMeta("istio-system", "vd-user"),
			Spec: networkingapi.ServiceEntry{Hosts: []string{"user.global"}, Location: networkingapi.ServiceEntry_MESH_INTERNAL,
				Ports:     []*networkingapi.ServicePort{{Number: 80, Name: "http-80", Protocol: "HTTP"}},
				Endpoints: []*networkingapi.WorkloadEntry{{Address: "gw.example", Labels: map[string]string{"cluster": "east"}}}},
		}})
	}
	desired, err := Plan(testOwner, objs)
	if err != nil {
		t.Fatal(err)
	}
	if reflect.ValueOf(desired[0].Manifest).UnsafePointer() != reflect.ValueOf(desired[1].Manifest).UnsafePointer() {
		t.Fatal("the two clusters' equal objects do not share their manifest: the test checks nothing")
	}
	before, err := canonicalJSON(desired[0].Manifest)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := newFakeEngine(t, "east", "west")
	var prior []Entry
	for range 2 {
		if prior, err = e.Apply(context.Background(), testOwner, desired, prior); err != nil {
			t.Fatal(err)
		}
	}
	after, err := canonicalJSON(desired[0].Manifest)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatalf("apply changed the planned manifest:\n%s\nwas\n%s", after, before)
	}
}
