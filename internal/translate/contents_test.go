package translate_test

import (
	"reflect"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// sharedTraffic is a traffic policy held by pointer, as the translator
// shares one between the DestinationRules of client clusters.
var sharedTraffic = trafficPolicy(10*time.Second, true)

func trafficPolicy(interval time.Duration, locality bool) *networkingapi.TrafficPolicy {
	return &networkingapi.TrafficPolicy{
		Tls: &networkingapi.ClientTLSSettings{Mode: networkingapi.ClientTLSSettings_ISTIO_MUTUAL},
		OutlierDetection: &networkingapi.OutlierDetection{Consecutive_5XxErrors: wrapperspb.UInt32(5), Interval: durationpb.New(interval),
			MaxEjectionPercent: 100},
		LoadBalancer: &networkingapi.LoadBalancerSettings{LocalityLbSetting: &networkingapi.LocalityLoadBalancerSetting{
			Enabled: wrapperspb.Bool(locality), FailoverPriority: []string{"rank-le-0=true"}}},
	}
}

func destinationRule(tp *networkingapi.TrafficPolicy) translate.Object {
	return translate.Object{Cluster: "east", Resource: &networking.DestinationRule{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "DestinationRule"),
		ObjectMeta: translate.ObjectMeta("istio-system", "vd-svc"),
		Spec:       networkingapi.DestinationRule{Host: "svc.global", TrafficPolicy: tp, ExportTo: []string{"*"}},
	}}
}

// serviceEntry is a client ServiceEntry with two endpoints; change
// alters the one field a variant differs in.
func serviceEntry(change func(*networking.ServiceEntry)) translate.Object {
	se := &networking.ServiceEntry{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "ServiceEntry"),
		ObjectMeta: translate.ObjectMeta("istio-system", "vd-svc"),
		Spec: networkingapi.ServiceEntry{
			Hosts: []string{"svc.global"}, Addresses: []string{"240.0.0.1"},
			Ports:    []*networkingapi.ServicePort{{Number: 80, Name: "http-80", Protocol: "HTTP"}},
			Location: networkingapi.ServiceEntry_MESH_INTERNAL, Resolution: networkingapi.ServiceEntry_DNS,
			Endpoints: []*networkingapi.WorkloadEntry{
				{Address: "svc.ns-a.svc.cluster.local", Labels: map[string]string{"cluster": "east", "rank-le-0": "true"}},
				{Address: "gw-west.example", Ports: map[string]uint32{"http-80": 15443}, Labels: map[string]string{"cluster": "west"}, Weight: 3},
			},
		},
	}
	if change != nil {
		change(se)
	}
	return translate.Object{Cluster: "east", Resource: se}
}

func record(data map[string]string) translate.Object {
	return translate.Object{Cluster: "east", Resource: &corev1.ConfigMap{
		TypeMeta:   translate.TypeMeta("v1", "ConfigMap"),
		ObjectMeta: translate.ObjectMeta("istio-system", "vd-svc"),
		Data:       data,
	}}
}

// TestContentsNumbersEqualRenderingsAlike: two objects get the same
// number from one translate.Contents exactly when they render to the same
// manifest. The variants differ from a client ServiceEntry in one field
// each, at every depth and of every kind (a string of the same length in
// a list of messages, a map's key or value, an enum, a number, a label,
// a duration, a wrapper), or are equal to it in fresh allocations, with
// maps filled in another order, or sharing its messages by pointer.
func TestContentsNumbersEqualRenderingsAlike(t *testing.T) {
	base := serviceEntry(nil).Resource.(*networking.ServiceEntry)
	objs := map[string]translate.Object{
		"base":         serviceEntry(nil),
		"equal, fresh": serviceEntry(nil),
		"equal, sharing pointers": serviceEntry(func(se *networking.ServiceEntry) {
			se.Spec.Endpoints, se.Spec.Ports = base.Spec.Endpoints, base.Spec.Ports
		}),
		"equal, maps filled in another order": serviceEntry(func(se *networking.ServiceEntry) {
			se.Spec.Endpoints[0].Labels = map[string]string{"rank-le-0": "true"}
			se.Spec.Endpoints[0].Labels["cluster"] = "east"
		}),
		"endpoint address":     serviceEntry(func(se *networking.ServiceEntry) { se.Spec.Endpoints[1].Address = "gw-east.example" }),
		"endpoint label value": serviceEntry(func(se *networking.ServiceEntry) { se.Spec.Endpoints[0].Labels["cluster"] = "west" }),
		"endpoint label key": serviceEntry(func(se *networking.ServiceEntry) {
			delete(se.Spec.Endpoints[0].Labels, "cluster")
			se.Spec.Endpoints[0].Labels["clusteR"] = "east"
		}),
		"endpoint port":            serviceEntry(func(se *networking.ServiceEntry) { se.Spec.Endpoints[1].Ports["http-80"] = 15444 }),
		"endpoint weight":          serviceEntry(func(se *networking.ServiceEntry) { se.Spec.Endpoints[1].Weight = 4 }),
		"endpoints swapped":        serviceEntry(func(se *networking.ServiceEntry) { e := se.Spec.Endpoints; e[0], e[1] = e[1], e[0] }),
		"one endpoint":             serviceEntry(func(se *networking.ServiceEntry) { se.Spec.Endpoints = se.Spec.Endpoints[:1] }),
		"port protocol":            serviceEntry(func(se *networking.ServiceEntry) { se.Spec.Ports[0].Protocol = "HTTPS" }),
		"location":                 serviceEntry(func(se *networking.ServiceEntry) { se.Spec.Location = networkingapi.ServiceEntry_MESH_EXTERNAL }),
		"host":                     serviceEntry(func(se *networking.ServiceEntry) { se.Spec.Hosts[0] = "svc.globaL" }),
		"no addresses":             serviceEntry(func(se *networking.ServiceEntry) { se.Spec.Addresses = nil }),
		"name":                     serviceEntry(func(se *networking.ServiceEntry) { se.Name = "vd-svd" }),
		"namespace":                serviceEntry(func(se *networking.ServiceEntry) { se.Namespace = "istio-systen" }),
		"label":                    serviceEntry(func(se *networking.ServiceEntry) { se.Labels = map[string]string{"a": "b"} }),
		"annotation":               serviceEntry(func(se *networking.ServiceEntry) { se.Annotations = map[string]string{"a": "b"} }),
		"api version":              serviceEntry(func(se *networking.ServiceEntry) { se.APIVersion = "networking.istio.io/v1beta1" }),
		"destination rule, shared": destinationRule(sharedTraffic),
		"destination rule, equal":  destinationRule(trafficPolicy(10*time.Second, true)),
		"destination rule, shared again, another cluster": func() translate.Object {
			o := destinationRule(sharedTraffic)
			o.Cluster = "west"
			return o
		}(),
		"destination rule, interval":  destinationRule(trafficPolicy(10*time.Second+time.Millisecond, true)),
		"destination rule, locality":  destinationRule(trafficPolicy(10*time.Second, false)),
		"destination rule, no policy": destinationRule(nil),
		"record":                      record(map[string]string{"hostname": "svc.global", "intent": `{"a":1}`}),
		"record, equal":               record(map[string]string{"intent": `{"a":1}`, "hostname": "svc.global"}),
		"record, intent":              record(map[string]string{"hostname": "svc.global", "intent": `{"a":2}`}),
	}
	objs["another cluster"] = serviceEntry(nil)
	objs["another cluster"] = translate.Object{Cluster: "west", Resource: objs["another cluster"].Resource}

	var contents translate.Contents
	ids := map[string]uint64{}
	manifests := map[string]map[string]any{}
	for name, o := range objs {
		id, ok := contents.ID(o)
		if !ok {
			t.Fatalf("%s: not numbered", name)
		}
		m, err := o.Manifest()
		if err != nil {
			t.Fatal(err)
		}
		ids[name], manifests[name] = id, m
	}
	for a := range objs {
		for b := range objs {
			same := reflect.DeepEqual(manifests[a], manifests[b])
			if (ids[a] == ids[b]) != same {
				t.Errorf("%q and %q: numbers %d and %d, manifests equal: %v", a, b, ids[a], ids[b], same)
			}
		}
	}
	// The variants meant to equal the base do.
	for _, name := range []string{"equal, fresh", "equal, sharing pointers", "equal, maps filled in another order", "another cluster"} {
		if ids[name] != ids["base"] {
			t.Errorf("%q is numbered apart from the base", name)
		}
	}
	for _, name := range []string{"destination rule, equal", "destination rule, shared again, another cluster"} {
		if ids[name] != ids["destination rule, shared"] {
			t.Errorf("%q is numbered apart from the shared one", name)
		}
	}
	if ids["record, equal"] != ids["record"] {
		t.Error("two equal records are numbered apart")
	}
}

// TestContentsNumbersTheFleetByRendering: on every intent of bench/gen's
// configurations, the objects one Contents numbers alike render alike
// (Object.Manifest), and objects are shared (the clusters' ServiceEntries,
// DestinationRules and records).
func TestContentsNumbersTheFleetByRendering(t *testing.T) {
	objects, shared := 0, 0
	for _, clusters := range [][]string{{"east", "west", "onprem"}, {"a", "b", "c", "d", "e", "f", "g", "h"}} {
		spec := gen.Generate(120, gen.Clusters(clusters))
		translated, err := spec.Translate(spec.Registry())
		if err != nil {
			t.Fatal(err)
		}
		for _, tr := range translated {
			var contents translate.Contents
			first := map[uint64]translate.Object{}
			for _, o := range tr.Objects {
				objects++
				id, ok := contents.ID(o)
				if !ok {
					t.Fatalf("%s: not numbered", o.Key())
				}
				f, seen := first[id]
				if !seen {
					first[id] = o
					continue
				}
				shared++
				want, err := f.Manifest()
				if err != nil {
					t.Fatal(err)
				}
				got, err := o.Manifest()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s and %s are numbered alike and render apart:\n%v\n%v", f.Key(), o.Key(), want, got)
				}
			}
		}
	}
	if shared == 0 {
		t.Fatal("no object shares its number: the test checks nothing")
	}
	t.Logf("%d objects, %d numbered like an earlier one", objects, shared)
}
