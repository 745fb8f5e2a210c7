package provider

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	networkingapi "istio.io/api/networking/v1"
	networkingv1 "istio.io/client-go/pkg/apis/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// The objects below are replaced between plan and apply by someone else's
// of the same name. Whatever the path (read first, or named by the UID a
// listing saw), the provider must refuse to write them, drop them from the
// inventory, and still update the rest.

// foreignServiceEntry deletes an object and creates someone else's
// ServiceEntry (no labels of ours) under its name; it returns that
// object's resourceVersion.
func foreignServiceEntry(t *testing.T, cluster, namespace, name string) string {
	t.Helper()
	ri := dyn(t, cluster).Resource(gvrSE).Namespace(namespace)
	ctx := context.Background()
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting %s/%s: %v", namespace, name, err)
	}
	foreign := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "ServiceEntry",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"hosts": []any{"theirs.example.com"}, "resolution": "DNS"},
	}}
	created, err := ri.Create(ctx, foreign, metav1.CreateOptions{FieldManager: "someone-else"})
	if err != nil {
		t.Fatalf("creating someone else's %s/%s: %v", namespace, name, err)
	}
	t.Cleanup(func() { _ = ri.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	return created.GetResourceVersion()
}

// requireUntouched fails unless the object is still someone else's, as
// created.
func requireUntouched(t *testing.T, cluster, namespace, name, resourceVersion string) {
	t.Helper()
	live := getObject(t, cluster, gvrSE, namespace, name)
	if live == nil {
		t.Fatalf("someone else's %s/%s in %s was deleted", namespace, name, cluster)
	}
	if live.GetResourceVersion() != resourceVersion || live.GetLabels()[engine.LabelManagedBy] != "" {
		t.Fatalf("someone else's %s/%s in %s was written: resourceVersion %s (created %s), labels %v",
			namespace, name, cluster, live.GetResourceVersion(), resourceVersion, live.GetLabels())
	}
}

// relOneDestination prepares a working directory that manages one virtual
// destination, backed in east and called from clients; its configuration
// with a given port comes from config.
func relOneDestination(t *testing.T, name, clients string) (w *relTF, config func(port int) string) {
	t.Helper()
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	provider := providerConfig(t, "")
	w = newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: name})
	return w, func(port int) string { return provider + relDestinationHCL(name, port, clients) }
}

// relDestinationHCL declares mesh_virtual_destination.this, backed in east.
func relDestinationHCL(name string, port int, clients string) string {
	return fmt.Sprintf(`
resource "mesh_virtual_destination" "this" {
  name     = %q
  hostname = "%s.global"
  ports    = [{ number = %d, protocol = "HTTP" }]
  backends = [{ cluster = "east", namespace = "users", service = "backend" }]
  clients  = { clusters = %s }
}
`, name, name, port, clients)
}

// A saved plan is applied after one of the objects it updates was
// replaced by someone else's. The apply refuses that object, names it,
// applies the others, and the object leaves the inventory.
func TestAccReliability_savedPlanReplacedObject(t *testing.T) {
	w, config := relOneDestination(t, "rel-saved", `["east", "west"]`)
	w.write(config(8080))
	w.apply()
	var target struct{ Namespace, Name string }
	for _, e := range w.mustInventory("mesh_virtual_destination.this") {
		if parts := strings.SplitN(e.Key, "/", 4); parts[0] == "west" && parts[1] == "ServiceEntry" {
			target.Namespace, target.Name = parts[2], parts[3]
		}
	}
	if target.Name == "" {
		t.Fatalf("no ServiceEntry in west in %v", relKeys(w.mustInventory("mesh_virtual_destination.this")))
	}

	w.write(config(9090))
	if out, code := w.run("plan", "-out=tfplan"); code != 0 {
		t.Fatalf("plan failed (exit %d):\n%s", code, out)
	}
	rv := foreignServiceEntry(t, "west", target.Namespace, target.Name)

	out, code := w.run("apply", "tfplan")
	if code == 0 {
		t.Fatalf("applying the saved plan succeeded over someone else's object:\n%s", out)
	}
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "ServiceEntry "+target.Namespace+"/"+target.Name+" in cluster west already exists and was not created by terraform-provider-mesh") {
		t.Fatalf("the error does not name the replaced object %s as someone else's:\n%s", target.Name, out)
	}
	requireUntouched(t, "west", target.Namespace, target.Name, rv)
	// The rest was applied, and the inventory lists exactly what is ours.
	for _, e := range w.mustInventory("mesh_virtual_destination.this") {
		if e.Key == "west/ServiceEntry/"+target.Namespace+"/"+target.Name {
			t.Fatalf("the inventory still lists someone else's %s/%s", target.Namespace, target.Name)
		}
	}
	w.requireExact("mesh_virtual_destination.this", "virtual-destination", "rel-saved")
	east := getObject(t, "east", gvrSE, target.Namespace, target.Name)
	if east == nil || !strings.Contains(fmt.Sprint(east.Object["spec"]), "9090") {
		t.Fatalf("the ServiceEntry in east was not updated to port 9090: %v", east)
	}
}

// The engine, in one process, refreshes (so it holds a listing of the
// objects) and then applies an update. Objects seen in the listing are
// written by UID without being read first; one replaced since by someone
// else's is refused, one deleted since is created again.
func TestAccEngine_listedObjectsWrittenByUID(t *testing.T) {
	requireMesh(t)
	const cluster, namespace, count = "west", "rel-uid", 20
	ensureNamespace(t, cluster, namespace)
	ctx := context.Background()
	eng := &engine.Engine{Clients: kubeclient.NewSet(map[string]kubeclient.Connection{
		cluster: {ConfigPath: testMesh.Kubeconfig(), ConfigContext: cluster},
	}, 0)}
	owner := engine.Owner{Kind: "virtual-destination", Name: "rel-uid", ID: "00000000000000aa"}
	desired := func(port uint32) []engine.Desired {
		var objs []translate.Object
		for i := range count {
			se := &networkingv1.ServiceEntry{
				TypeMeta:   metav1.TypeMeta{APIVersion: "networking.istio.io/v1", Kind: "ServiceEntry"},
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("rel-uid-%02d", i), Namespace: namespace},
			}
			se.Spec.Hosts = []string{fmt.Sprintf("rel-uid-%02d.global", i)}
			se.Spec.Ports = []*networkingapi.ServicePort{{Number: port, Protocol: "HTTP", Name: "http"}}
			se.Spec.Resolution = networkingapi.ServiceEntry_STATIC
			objs = append(objs, translate.Object{Cluster: cluster, Resource: se})
		}
		ds, err := engine.Plan(owner, objs)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	applied, err := eng.Apply(ctx, owner, desired(8080), nil)
	t.Cleanup(func() {
		if _, err := eng.Delete(context.Background(), owner, applied); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	if err != nil || len(applied) != count {
		t.Fatalf("create: %d entries, %v", len(applied), err)
	}
	seGVK := schema.GroupVersionKind{Group: "networking.istio.io", Version: "v1", Kind: "ServiceEntry"}
	if read, errs := eng.Read(ctx, owner, []schema.GroupVersionKind{seGVK}, []string{cluster}, applied); len(errs) > 0 || len(read) != count {
		t.Fatalf("refresh: %d entries, %v", len(read), errs)
	}

	rv := foreignServiceEntry(t, cluster, namespace, "rel-uid-03")
	if err := dyn(t, cluster).Resource(gvrSE).Namespace(namespace).Delete(ctx, "rel-uid-07", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	gets := seRequests(t, cluster, "GET")
	entries, err := eng.Apply(ctx, owner, desired(9090), applied)
	applied = entries
	if err == nil || !strings.Contains(err.Error(), "rel-uid-03") || !strings.Contains(err.Error(), "was not created by terraform-provider-mesh") {
		t.Fatalf("update over someone else's rel-uid-03: err = %v", err)
	}
	if strings.Count(err.Error(), "Applying") != 1 {
		t.Fatalf("want exactly one refused object, got: %v", err)
	}
	// Only the two objects the listing was wrong about were read.
	if n := seRequests(t, cluster, "GET") - gets; n != 2 {
		t.Fatalf("the update read %d ServiceEntries one by one; want 2 (the replaced and the deleted one)", n)
	}
	requireUntouched(t, cluster, namespace, "rel-uid-03", rv)
	if len(entries) != count-1 {
		t.Fatalf("inventory has %d entries, want %d (all but someone else's)", len(entries), count-1)
	}
	for _, e := range entries {
		if e.Name == "rel-uid-03" {
			t.Fatalf("the inventory lists someone else's rel-uid-03")
		}
		live := getObject(t, cluster, gvrSE, namespace, e.Name)
		if live == nil {
			t.Fatalf("%s is in the inventory but not in the cluster", e.Name)
		}
		ports, _, _ := unstructured.NestedSlice(live.Object, "spec", "ports")
		if len(ports) != 1 || fmt.Sprint(ports[0].(map[string]any)["number"]) != "9090" {
			t.Fatalf("%s was not updated: ports %v", e.Name, ports)
		}
	}
}

// seRequests is how many requests of a verb the cluster's API server has
// served for ServiceEntries.
func seRequests(t *testing.T, cluster, verb string) int {
	t.Helper()
	cs, err := kubernetes.NewForConfig(testMesh.RESTConfig(cluster))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, line := range strings.Split(string(raw), "\n") {
		if !strings.HasPrefix(line, "apiserver_request_total{") || !strings.Contains(line, `resource="serviceentries"`) ||
			!strings.Contains(line, `verb="`+verb+`"`) {
			continue
		}
		n, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		total += int(n)
	}
	return total
}

// A change the API server will not make in place replaces the object: here
// someone made a virtual destination's record ConfigMap immutable, and the
// next change of the destination rewrites the record.
func TestAccReliability_immutableChangeReplaces(t *testing.T) {
	w, config := relOneDestination(t, "rel-frozen", `["east"]`)
	w.write(config(8080))
	w.apply()
	var record []string
	for _, e := range w.mustInventory("mesh_virtual_destination.this") {
		if parts := strings.SplitN(e.Key, "/", 4); parts[1] == "ConfigMap" {
			record = parts
		}
	}
	if record == nil {
		t.Fatalf("no record ConfigMap in %v", relKeys(w.mustInventory("mesh_virtual_destination.this")))
	}
	ctx := context.Background()
	cms := dyn(t, record[0]).Resource(gvrConfigMap).Namespace(record[2])
	frozen, err := cms.Patch(ctx, record[3], types.MergePatchType, []byte(`{"immutable":true}`), metav1.PatchOptions{FieldManager: "someone-else"})
	if err != nil {
		t.Fatal(err)
	}
	w.planIsEmpty() // not a field of ours: no drift

	w.write(config(9090))
	w.apply()
	live := getObject(t, record[0], gvrConfigMap, record[2], record[3])
	if live == nil {
		t.Fatal("the record is gone")
	}
	if live.GetUID() == frozen.GetUID() {
		t.Fatal("the record was not replaced")
	}
	if immutable, found, _ := unstructured.NestedBool(live.Object, "immutable"); found && immutable {
		t.Fatal("the new record is immutable")
	}
	if intent, _, _ := unstructured.NestedString(live.Object, "data", "intent"); !strings.Contains(intent, "9090") {
		t.Fatalf("the new record does not hold the new intent: %s", intent)
	}
	w.requireExact("mesh_virtual_destination.this", "virtual-destination", "rel-frozen")
	w.planIsEmpty()
}

// A replacement whose delete cannot finish (a finalizer holds the old
// record, still immutable) fails naming why, and the record leaves the
// inventory: it is on its way out. Once it is gone, the next apply writes
// the new one.
func TestAccReliability_replacementHeldByFinalizer(t *testing.T) {
	w, config := relOneDestination(t, "rel-held", `["east"]`)
	w.write(config(8080))
	w.apply()
	ctx := context.Background()
	cms := dyn(t, "east").Resource(gvrConfigMap).Namespace(localmesh.RecordsNamespace)
	patch := `{"immutable":true,"metadata":{"finalizers":["example.com/hold"]}}`
	if _, err := cms.Patch(ctx, "vd-rel-held", types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}
	release := func() {
		_, _ = cms.Patch(context.Background(), "vd-rel-held", types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{FieldManager: "someone-else"})
	}
	t.Cleanup(release)

	w.write(config(9090))
	out := w.applyFails()
	if flat := strings.Join(strings.Fields(out), " "); !strings.Contains(flat, "deleted to be replaced and could not be created again") {
		t.Fatalf("the failure does not say the record could not be replaced:\n%s", out)
	}
	for _, e := range w.mustInventory("mesh_virtual_destination.this") {
		if e.Key == "east/ConfigMap/mesh-intent-records/vd-rel-held" {
			t.Fatal("the inventory still lists the record that is being deleted")
		}
	}

	release()
	w.apply()
	live := getObject(t, "east", gvrConfigMap, localmesh.RecordsNamespace, "vd-rel-held")
	if live == nil {
		t.Fatal("the record was not written again")
	}
	intent, _, err := unstructured.NestedString(live.Object, "data", "intent")
	if err != nil || !strings.Contains(intent, "9090") {
		t.Fatalf("the record was written without the new port (%v): %v", err, live)
	}
	w.requireExact("mesh_virtual_destination.this", "virtual-destination", "rel-held")
	w.planIsEmpty()
}

// Changing field_manager migrates ownership: the intent's former manager
// is released (no managedFields entry left), and a value the intent
// dropped in the same change is gone, not kept alive by the former manager.
func TestAccReliability_fieldManagerChangeMigrates(t *testing.T) {
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "cluster", Name: "east"})
	config := func(manager, hosts string) string {
		return providerConfig(t, fmt.Sprintf("field_manager = %q", manager)) +
			meshClusterConfig("east", "  expose_east_west = true\n  east_west_hosts  = "+hosts)
	}
	w.write(config("team-a", `["*.global", "*.mesh"]`))
	w.apply()
	if err := checkGateway(t, "east", "*.global", "*.mesh")(nil); err != nil {
		t.Fatal(err)
	}
	w.write(config("team-b", `["*.global"]`))
	w.apply()
	if err := checkGateway(t, "east", "*.global")(nil); err != nil {
		t.Fatalf("after the change of field manager: %v", err)
	}
	gw := getObject(t, "east", gvrGateway, "istio-system", "mesh-cross-network")
	var managers []string
	for _, mf := range gw.GetManagedFields() {
		managers = append(managers, mf.Manager)
		if strings.HasPrefix(mf.Manager, "team-a/") {
			t.Errorf("the former field manager %s still owns fields", mf.Manager)
		}
	}
	if !slices.Contains(managers, "team-b/cluster.east") {
		t.Fatalf("the new field manager owns nothing: %v", managers)
	}
	w.planIsEmpty()
}
