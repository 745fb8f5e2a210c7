package discovery

import (
	"context"
	"reflect"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// fakeClusters are the fake clusters of enginetest.
type fakeClusters = enginetest.Clusters

func newFakeClusters(clusters ...string) fakeClusters { return enginetest.New(clusters...) }

// put writes an object of kind k named ns/name into cluster.
func put(t *testing.T, f fakeClusters, cluster string, k schema.GroupVersionKind, ns, name string, labels, annotations map[string]string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(k)
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.SetLabels(labels)
	obj.SetAnnotations(annotations)
	f.Put(t, cluster, obj)
}

var (
	configMap      = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
	serviceEntry   = schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "ServiceEntry"}
	virtualService = schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}
)

// The instances of one name are told apart by their instance ID, each
// with the configurations its objects keep; objects with its names that
// this provider did not write are named apart; a cluster that does not
// answer is named, never skipped. Listing finds every name of the kind,
// with its clusters.
func TestSearchInstancesAndListIntents(t *testing.T) {
	ctx := context.Background()
	ns := virtualdestination.DefaultRecordsNamespace
	f := newFakeClusters("east", "west")
	user := engine.Owner{Kind: "virtual-destination", Name: "user", ID: "aaaa1111"}
	put(t, f, "east", configMap, ns, "vd-user", user.Labels(), map[string]string{ConfigAnnotation: `{"name":"user"}`})
	put(t, f, "west", configMap, ns, "vd-user", user.Labels(), map[string]string{ConfigAnnotation: `{"name":"user"}`})
	put(t, f, "east", serviceEntry, "istio-system", "vd-user", user.Labels(), map[string]string{ConfigAnnotation: `{"ignored":"not the config kind"}`})
	put(t, f, "west", serviceEntry, "users", "vd-user", nil, nil) // hand-written
	orders := engine.Owner{Kind: "virtual-destination", Name: "orders", ID: "bbbb2222"}
	put(t, f, "west", configMap, ns, "vd-orders", orders.Labels(), nil)
	eng := &engine.Engine{Clients: f}

	found, plain, unreachable := SearchInstances(ctx, eng, []string{"east", "west"}, intentkind.VirtualDestination, virtualdestination.ObjectName, "user")
	if len(unreachable) != 0 || len(found) != 1 {
		t.Fatalf("found %v, unreachable %v: want one instance", found, unreachable)
	}
	got := found["aaaa1111"]
	wantConfigs := map[string][]string{`{"name":"user"}`: {"ConfigMap " + ns + "/vd-user in east", "ConfigMap " + ns + "/vd-user in west"}}
	if !reflect.DeepEqual(got.Configs, wantConfigs) || len(got.Objects) != 3 {
		t.Fatalf("instance aaaa1111: configs %v, objects %v; want the configuration of its ConfigMaps only, and its 3 objects", got.Configs, got.Objects)
	}
	if !reflect.DeepEqual(plain, []string{"ServiceEntry users/vd-user in west"}) {
		t.Fatalf("hand-written objects: %v", plain)
	}
	id, config, summary, _ := ChooseImport("virtual-destination", "user", found)
	if id != "aaaa1111" || config != `{"name":"user"}` || summary != "" {
		t.Fatalf("ChooseImport: %q %q %q", id, config, summary)
	}

	_, _, unreachable = SearchInstances(ctx, eng, []string{"east", "north"}, intentkind.VirtualDestination, nil, "user")
	if len(unreachable) != 1 || !strings.HasPrefix(unreachable[0], "north: ") {
		t.Fatalf("a cluster that does not answer: unreachable %v", unreachable)
	}

	names, unreachable := ListIntents(ctx, eng, []string{"east", "west"}, intentkind.VirtualDestination)
	clusters := map[string]map[string]bool{}
	for name, l := range names {
		clusters[name] = l.Clusters
	}
	if len(unreachable) != 0 || !reflect.DeepEqual(clusters, map[string]map[string]bool{"user": {"east": true, "west": true}, "orders": {"west": true}}) {
		t.Fatalf("ListIntents: %v, unreachable %v", clusters, unreachable)
	}
	listedFindsWhatImportSearches(ctx, t, eng, []string{"east", "west"}, intentkind.VirtualDestination, names)
}

// listedFindsWhatImportSearches checks that the instances a list found of
// each name are those SearchInstances finds of it, so that an import from
// them (importListed) is the import by name.
func listedFindsWhatImportSearches(ctx context.Context, t *testing.T, eng *engine.Engine, clusters []string, kind intentkind.Kind, listed map[string]Listed) {
	t.Helper()
	for name, l := range listed {
		found, _, _ := SearchInstances(ctx, eng, clusters, kind, nil, name)
		if !reflect.DeepEqual(l.Instances, found) {
			t.Errorf("%s %s: the list found instances %v, an import's search %v", kind.Owner, name, l.Instances, found)
		}
	}
}

// A composed kind's instances are its contributions: the contribution
// label's value is the instance ID ("true" is none), and a list finds the
// names in the labels of the objects it shares.
func TestSearchComposedContributions(t *testing.T) {
	ctx := context.Background()
	f := newFakeClusters("east")
	a := engine.Owner{Kind: "traffic-policy", Name: "a", ID: "aaaa1111", Composition: &engine.Composition{}}
	b := engine.Owner{Kind: "traffic-policy", Name: "b", Composition: &engine.Composition{}} // no ID
	labels := a.Labels()
	for k, v := range b.Labels() {
		labels[k] = v
	}
	put(t, f, "east", virtualService, "istio-system", "tp-user-global", labels, nil)
	eng := &engine.Engine{Clients: f}

	found, _, _ := SearchInstances(ctx, eng, []string{"east"}, intentkind.TrafficPolicy, nil, "b")
	if _, ok := found[NoInstanceID]; !ok || len(found) != 1 {
		t.Fatalf("a contribution label without an ID: found %v, want it under NoInstanceID", found)
	}
	if _, _, summary, _ := ChooseImport("traffic-policy", "b", found); summary != "Objects without an instance ID" {
		t.Fatalf("ChooseImport of a contribution without an ID: %q", summary)
	}
	found, _, _ = SearchInstances(ctx, eng, []string{"east"}, intentkind.TrafficPolicy, nil, "a")
	if _, ok := found["aaaa1111"]; !ok || len(found) != 1 {
		t.Fatalf("contribution of a: found %v", found)
	}
	names, _ := ListIntents(ctx, eng, []string{"east"}, intentkind.TrafficPolicy)
	var got []string
	for n := range names {
		got = append(got, n)
	}
	sort.Strings(got)
	if !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Fatalf("ListIntents of a composed kind: %v", got)
	}
	listedFindsWhatImportSearches(ctx, t, eng, []string{"east"}, intentkind.TrafficPolicy, names)
}

// ChooseImport takes exactly one instance with an ID keeping one
// configuration; anything else is refused, saying why, never resolved by
// which was found first.
func TestChooseImportRefusesWhatIsNotOneInstanceAndConfiguration(t *testing.T) {
	for _, c := range []struct {
		name    string
		found   map[string]Instance
		summary string
	}{
		{"no instance ID", map[string]Instance{NoInstanceID: {Objects: []string{"x"}, Configs: map[string][]string{"{}": {"x"}}}, "aaaa1111": {Configs: map[string][]string{"{}": {"y"}}}}, "Objects without an instance ID"},
		{"two instances", map[string]Instance{"aaaa1111": {Configs: map[string][]string{"{}": {"x"}}}, "bbbb2222": {Configs: map[string][]string{"{}": {"y"}}}}, "More than one instance to import"},
		{"no configuration", map[string]Instance{"aaaa1111": {Objects: []string{"x"}}}, "Nothing to rebuild the configuration from"},
		{"two configurations", map[string]Instance{"aaaa1111": {Configs: map[string][]string{"{}": {"x"}, `{"a":1}`: {"y"}}}}, "Kept configurations disagree"},
	} {
		if id, config, summary, _ := ChooseImport("virtual-destination", "user", c.found); summary != c.summary || id != "" || config != "" {
			t.Errorf("%s: got (%q, %q, %q), want refused with %q", c.name, id, config, summary, c.summary)
		}
	}
}

// PickInstance keeps the instance an identity names, and beside it the
// objects without an ID, which ChooseImport then refuses; an instance not
// found is refused, naming those found.
func TestPickInstance(t *testing.T) {
	found := map[string]Instance{"aaaa1111": {}, "bbbb2222": {}, NoInstanceID: {}}
	if got, summary, _ := PickInstance("virtual-destination", "user", "", found); summary != "" || len(got) != 3 {
		t.Fatalf("no instance named: %v %q", got, summary)
	}
	got, summary, _ := PickInstance("virtual-destination", "user", "bbbb2222", found)
	if _, ok := got[NoInstanceID]; summary != "" || len(got) != 2 || !ok {
		t.Fatalf("instance bbbb2222: %v %q, want it and the objects without an ID", got, summary)
	}
	_, summary, detail := PickInstance("virtual-destination", "user", "cccc3333", found)
	if summary != "No such instance to import" || !strings.Contains(detail, "(none), aaaa1111, bbbb2222") {
		t.Fatalf("an instance not found: %q %q", summary, detail)
	}
}
