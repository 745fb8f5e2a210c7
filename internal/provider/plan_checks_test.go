package provider

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// A backend namespace that does not exist fails the plan (issue 38): the
// error is on backends[1].namespace and names the cluster, the namespace
// and how to create it; the apply stops at that plan, nothing is written
// in any cluster, and the state holds no instance (nothing tainted). Once
// the namespace exists, the apply succeeds and the plan is empty.
func TestAccPlanChecks_missingNamespace(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	const ns = "rel-ns-created-later"
	owner := engine.Owner{Kind: "virtual-destination", Name: "rel-nsmissing"}
	w := newRelTF(t)
	relCleanup(t, w, nil, owner)
	w.write(providerConfig(t, "") + `
resource "mesh_virtual_destination" "user" {
  name     = "rel-nsmissing"
  hostname = "rel-nsmissing.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user" },
    { cluster = "west", namespace = "` + ns + `", service = "user" },
  ]
}
`)
	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 1 {
		t.Fatalf("plan with west's backend namespace missing: exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"Namespace missing in cluster west", "Attribute backends[1].namespace", "with mesh_virtual_destination.user,", "Namespace " + ns + " does not exist in cluster west", "kubectl"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(flat, "Namespace missing in cluster east") {
		t.Errorf("the plan names east, whose namespace exists:\n%s", out)
	}
	w.applyFails()
	if left := liveOwned(t, owner.Kind, owner.Name); len(left) > 0 {
		t.Fatalf("the failed apply wrote %v", left)
	}
	s, _ := w.stateFile()
	for _, r := range s.Resources {
		if r.Type == "mesh_virtual_destination" && len(r.Instances) > 0 {
			t.Fatalf("state holds %s.%s (status %q) after an apply that wrote nothing", r.Type, r.Name, r.Instances[0].Status)
		}
	}

	ensureNamespace(t, "west", ns)
	w.apply()
	w.requireExact("mesh_virtual_destination.user", owner.Kind, owner.Name)
	w.planIsEmpty()
}

// A hand-written ServiceEntry with the name a virtual destination would
// write fails the plan on name, naming the object, the cluster and the
// adopt_existing fix; the apply stops at that plan, writes nothing, leaves
// no instance in state, and the hand-written object keeps its
// resourceVersion.
func TestAccPlanChecks_foreignObjectWithOurName(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	owner := engine.Owner{Kind: "virtual-destination", Name: "rel-foreign"}
	se := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "ServiceEntry",
		"metadata": map[string]any{"name": "vd-rel-foreign", "namespace": "istio-system"},
		"spec":     map[string]any{"hosts": []any{"rel-foreign.global"}, "resolution": "NONE", "ports": []any{map[string]any{"number": int64(8080), "name": "http", "protocol": "HTTP"}}},
	}}
	ri := dyn(t, "east").Resource(gvrSE).Namespace("istio-system")
	created, err := ri.Create(context.Background(), se, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ri.Delete(context.Background(), "vd-rel-foreign", metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the hand-written ServiceEntry: %v", err)
		}
	})
	w := newRelTF(t)
	relCleanup(t, w, nil, owner)
	w.write(providerConfig(t, "") + `
resource "mesh_virtual_destination" "user" {
  name     = "rel-foreign"
  hostname = "rel-foreign.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [{ cluster = "west", namespace = "users", service = "user" }]
}
`)
	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 1 {
		t.Fatalf("plan with a hand-written object of our name: exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{"Object not ours in cluster east", "ServiceEntry istio-system/vd-rel-foreign in cluster east", "was not created by terraform-provider-mesh", "adopt_existing = true", `with mesh_virtual_destination.user,`, `name = "rel-foreign"`} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	w.applyFails()
	if left := liveOwned(t, owner.Kind, owner.Name); len(left) > 0 {
		t.Fatalf("the failed apply wrote %v", left)
	}
	if st := w.inventory("mesh_virtual_destination.user"); st.present {
		t.Fatalf("state holds the virtual destination (tainted: %v) after an apply that wrote nothing", st.tainted)
	}
	if now := getObject(t, "east", gvrSE, "istio-system", "vd-rel-foreign"); now == nil || now.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatal("the hand-written ServiceEntry was changed or deleted")
	}
}

// A hand-written VirtualService on a virtual destination's hostname is a
// plan warning naming it, its cluster and the fix; the plan writes
// nothing, and the apply goes on (the resource is in state, not tainted)
// and leaves it untouched.
func TestAccPlanChecks_foreignVirtualServiceOnTheHost(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	owner := engine.Owner{Kind: "virtual-destination", Name: "rel-fvs"}
	vs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
		"metadata": map[string]any{"name": "user-routes", "namespace": "users"},
		"spec": map[string]any{"hosts": []any{"rel-fvs.global"}, "http": []any{map[string]any{
			"route": []any{map[string]any{"destination": map[string]any{"host": "user.users.svc.cluster.local"}}}}}},
	}}
	ri := dyn(t, "east").Resource(gvrVS).Namespace("users")
	created, err := ri.Create(context.Background(), vs, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ri.Delete(context.Background(), "user-routes", metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the hand-written VirtualService: %v", err)
		}
	})
	w := newRelTF(t)
	relCleanup(t, w, nil, owner)
	w.write(providerConfig(t, "") + `
resource "mesh_virtual_destination" "user" {
  name     = "rel-fvs"
  hostname = "rel-fvs.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [{ cluster = "west", namespace = "users", service = "user" }]
}
`)
	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 2 {
		t.Fatalf("plan: exit %d, want 2:\n%s", code, out)
	}
	for _, want := range []string{`Warning: Hand-written Istio objects on the host of mesh_virtual_destination "rel-fvs"`, "VirtualService users/user-routes in cluster east (host rel-fvs.global)", "adopt:"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(flat, "in cluster west (host") || strings.Contains(flat, "in cluster onprem (host") {
		t.Errorf("the warning names a cluster without a hand-written object:\n%s", out)
	}
	if left := liveOwned(t, owner.Kind, owner.Name); len(left) > 0 {
		t.Fatalf("the plan wrote %v", left)
	}
	if now := getObject(t, "east", gvrVS, "users", "user-routes"); now == nil || now.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatal("the plan changed or deleted the hand-written VirtualService")
	}
	w.apply()
	if st := w.inventory("mesh_virtual_destination.user"); !st.present || st.tainted {
		t.Fatalf("after the apply the virtual destination is in state %v, tainted %v: the warning must not fail or taint it", st.present, st.tainted)
	}
	w.requireExact("mesh_virtual_destination.user", owner.Kind, owner.Name)
	if now := getObject(t, "east", gvrVS, "users", "user-routes"); now == nil || now.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatal("the hand-written VirtualService was changed or deleted")
	}
}
