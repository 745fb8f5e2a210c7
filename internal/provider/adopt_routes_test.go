package provider

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// handWrite creates a hand-written VirtualService or DestinationRule in
// namespace users of east and returns it as created.
func handWrite(t *testing.T, gvr schema.GroupVersionResource, kind, name string, spec map[string]any) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "users"},
		"spec":     spec,
	}}
	ri := dyn(t, "east").Resource(gvr).Namespace("users")
	created, err := ri.Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = ri.Delete(context.Background(), name, metav1.DeleteOptions{}) // gone already when adopted
	})
	return created
}

// routesOnHost lists, in every local cluster, the VirtualServices and
// DestinationRules naming host (spec.hosts or spec.host), whoever wrote
// them, as sorted "cluster/Kind/namespace/name[ ours]".
func routesOnHost(t *testing.T, host string) []string {
	t.Helper()
	var out []string
	for _, c := range testClusters {
		for _, gvr := range []schema.GroupVersionResource{gvrVS, gvrDR} {
			list, err := dyn(t, c).Resource(gvr).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range list.Items {
				hosts, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "hosts")
				h, _, _ := unstructured.NestedString(o.Object, "spec", "host")
				for _, x := range append(hosts, h) {
					if x == host {
						k := fmt.Sprintf("%s/%s/%s/%s", c, o.GetKind(), o.GetNamespace(), o.GetName())
						if o.GetLabels()[engine.LabelManagedBy] == engine.ManagedByValue {
							k += " ours"
						}
						out = append(out, k)
						break
					}
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// adoptRoutesConfig is a virtual destination of host <name>.global backed
// in east and a traffic policy on it (a timeout), both with
// adopt_existing and imported with adopt:.
func adoptRoutesConfig(name string) string {
	return fmt.Sprintf(`
resource "mesh_virtual_destination" "user" {
  name           = %[1]q
  hostname       = "%[1]s.global"
  ports          = [{ number = 8080, protocol = "HTTP" }]
  backends       = [{ cluster = "east", namespace = "users", service = "user" }]
  clients        = { clusters = ["east"] }
  adopt_existing = true
}

resource "mesh_traffic_policy" "user" {
  name           = "%[1]s-timeout"
  destination    = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources        = { clusters = ["east"] }
  timeout        = "2s"
  adopt_existing = true
}

import {
  to = mesh_virtual_destination.user
  id = "adopt:%[1]s"
}

import {
  to = mesh_traffic_policy.user
  id = "adopt:%[1]s-timeout"
}
`, name)
}

// Import with adopt: of a host served by a hand-written VirtualService and
// DestinationRule with names of their own (issue 38): the plan names both
// as adopted, the apply writes the intents' objects and deletes the
// hand-written ones, exactly one VirtualService serves the host
// afterwards (the provider's), and the next plan is empty.
func TestAccAdoptRoutes_handWrittenVirtualServiceAndDestinationRule(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	const name, host = "rel-adopt-routes", "rel-adopt-routes.global"
	handWrite(t, gvrVS, "VirtualService", "user-routes", map[string]any{"hosts": []any{host}, "http": []any{map[string]any{
		"timeout": "2s", "route": []any{map[string]any{"destination": map[string]any{"host": host}}}}}})
	handWrite(t, gvrDR, "DestinationRule", "user-dr", map[string]any{"host": host, "trafficPolicy": map[string]any{"tls": map[string]any{"mode": "ISTIO_MUTUAL"}}})
	if got := routesOnHost(t, host); strings.Join(got, ",") != "east/DestinationRule/users/user-dr,east/VirtualService/users/user-routes" {
		t.Fatalf("before: %v", got)
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: name})
	w.write(providerConfig(t, "") + adoptRoutesConfig(name))
	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 2 {
		t.Fatalf("plan of the adoption: exit %d, want 2:\n%s", code, out)
	}
	for _, want := range []string{
		`Hand-written Istio objects adopted by mesh_virtual_destination "` + name + `"`,
		"DestinationRule users/user-dr in cluster east (host " + host + ")",
		`Hand-written Istio objects adopted by mesh_traffic_policy "` + name + `-timeout"`,
		"VirtualService users/user-routes in cluster east (host " + host + ")",
		"then deletes these hand-written ones",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	if got := routesOnHost(t, host); strings.Join(got, ",") != "east/DestinationRule/users/user-dr,east/VirtualService/users/user-routes" {
		t.Fatalf("the plan wrote: %v", got)
	}
	w.apply()
	got := routesOnHost(t, host)
	var vss []string
	for _, k := range got {
		if strings.Contains(k, "/VirtualService/") {
			vss = append(vss, k)
		}
		if !strings.HasSuffix(k, " ours") {
			t.Errorf("a hand-written object is left on the host: %s", k)
		}
	}
	if len(vss) != 1 || vss[0] != "east/VirtualService/istio-system/tp-"+host+" ours" {
		t.Fatalf("VirtualServices on %s after the adoption: %v, want the provider's one alone (all: %v)", host, vss, got)
	}
	w.requireExact("mesh_virtual_destination.user", "virtual-destination", name)
	if st := w.inventory("mesh_traffic_policy.user"); !st.present || st.tainted {
		t.Fatalf("the traffic policy after the adoption: in state %v, tainted %v", st.present, st.tainted)
	}
	w.planIsEmpty()
}

// Import with adopt: of a host whose hand-written VirtualService routes to
// a host the intent does not declare fails at plan, naming the object and
// why; the apply writes nothing (the hand-written objects keep their
// resourceVersion, no object of ours exists, no instance is in state).
func TestAccAdoptRoutes_refusedNamingWhatWasFound(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	const name, host = "rel-adopt-refused", "rel-adopt-refused.global"
	vs := handWrite(t, gvrVS, "VirtualService", "user-routes", map[string]any{"hosts": []any{host}, "http": []any{map[string]any{
		"route": []any{map[string]any{"destination": map[string]any{"host": "billing.users.svc.cluster.local"}}}}}})
	dr := handWrite(t, gvrDR, "DestinationRule", "user-dr", map[string]any{"host": host})
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: name})
	w.write(providerConfig(t, "") + adoptRoutesConfig(name))
	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 1 {
		t.Fatalf("plan of an adoption the intent cannot carry: exit %d, want 1:\n%s", code, out)
	}
	for _, want := range []string{
		`Hand-written Istio objects that cannot be adopted by mesh_traffic_policy "` + name + `-timeout"`,
		"VirtualService users/user-routes in cluster east (host " + host + "): it routes to billing.users.svc.cluster.local, which the intent does not declare",
		"Nothing is written", "adopt_existing = false",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	w.applyFails()
	if got := routesOnHost(t, host); strings.Join(got, ",") != "east/DestinationRule/users/user-dr,east/VirtualService/users/user-routes" {
		t.Fatalf("the failed apply changed what serves the host: %v", got)
	}
	if now := getObject(t, "east", gvrVS, "users", "user-routes"); now.GetResourceVersion() != vs.GetResourceVersion() {
		t.Error("the hand-written VirtualService was changed")
	}
	if now := getObject(t, "east", gvrDR, "users", "user-dr"); now.GetResourceVersion() != dr.GetResourceVersion() {
		t.Error("the hand-written DestinationRule was changed")
	}
	if left := relAllOwned(t); len(left) > 0 {
		t.Fatalf("the failed apply wrote %v", left)
	}
	for _, addr := range []string{"mesh_virtual_destination.user", "mesh_traffic_policy.user"} {
		if st := w.inventory(addr); st.present && (st.tainted || len(w.mustInventory(addr)) > 0) {
			t.Fatalf("%s after the failed apply: tainted %v, objects %v", addr, st.tainted, w.mustInventory(addr))
		}
	}
}

// vdAdoptPlan imports mesh_virtual_destination with the id adopt:<name
// in config> from the fake clusters and plans config (JSON) on the state
// the import made, as terraform does with an import block; it returns the
// import's and the plan's diagnostics.
func vdAdoptPlan(t *testing.T, f fakeClusterSet, config string) (diag.Diagnostics, diag.Diagnostics) {
	t.Helper()
	ctx := context.Background()
	r := NewVirtualDestinationResource().(*virtualDestinationResource)
	r.data = recordsData(f)
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx)
	v, err := discovery.ConfigValue(typ, config)
	if err != nil {
		t.Fatal(err)
	}
	var name types.String
	if d := (tfsdk.Config{Schema: sr.Schema, Raw: v}).GetAttribute(ctx, path.Root("name"), &name); d.HasError() {
		t.Fatal(diagText(d))
	}
	imp := resource.ImportStateResponse{State: tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(typ, nil)}}
	r.ImportState(ctx, resource.ImportStateRequest{ID: adoptPrefix + name.ValueString()}, &imp)
	if imp.Diagnostics.HasError() {
		return imp.Diagnostics, nil
	}
	req := resource.ModifyPlanRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: v}, Plan: tfsdk.Plan{Schema: sr.Schema, Raw: v}, State: imp.State}
	resp := resource.ModifyPlanResponse{Plan: req.Plan}
	r.ModifyPlan(ctx, req, &resp)
	return imp.Diagnostics, resp.Diagnostics
}

const vdAdoptConfig = `{"name":"user","hostname":"user.global","namespace":"istio-system","ports":[{"number":8080,"protocol":"HTTP"}],"backends":[{"cluster":"east","namespace":"users","service":"user"}],"adopt_existing":true}`

// Import with adopt: never reports an adoption that adopts nothing: with
// no hand-written object of the intent's names and none on its host, the
// import says the plan decides, and the plan fails on adopt_existing,
// saying what it looked for. A hand-written DestinationRule on the host
// is adopted (a warning naming it); one that applies to some workloads
// only is refused, named with the reason.
func TestAdoptWithNothingToAdoptFailsAtPlan(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	imp, plan := vdAdoptPlan(t, f, vdAdoptConfig)
	if imp.HasError() || !strings.Contains(diagText(imp), "Adoption decided by the plan") {
		t.Fatalf("import with adopt: and nothing of its names: want a warning that the plan decides, got %q", diagText(imp))
	}
	msg := diagText(plan)
	if !plan.HasError() || !strings.Contains(msg, "Nothing to adopt for mesh_virtual_destination \"user\"") || !strings.Contains(msg, "VirtualService or DestinationRule") || !strings.Contains(msg, "Nothing is written") {
		t.Fatalf("plan of an adoption with nothing to adopt: want an error saying what was looked for, got %q", msg)
	}

	dr := func(name string, spec map[string]any) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "spec": spec}}
		o.SetNamespace("users")
		o.SetName(name)
		return o
	}
	f = newFakeClusterSet(t, "east", "west")
	f.Put(t, "east", dr("user-dr", map[string]any{"host": "user.global"}))
	_, plan = vdAdoptPlan(t, f, vdAdoptConfig)
	if msg := diagText(plan); plan.HasError() || !strings.Contains(msg, "Hand-written Istio objects adopted by mesh_virtual_destination \"user\"") || !strings.Contains(msg, "DestinationRule users/user-dr in cluster east (host user.global)") {
		t.Fatalf("plan of an adoption of a hand-written DestinationRule on the host: want a warning naming it, got %q", msg)
	}
	if strings.Contains(diagText(plan), "Hand-written Istio objects on the host") {
		t.Errorf("the adopted object is also named by the foreign-objects warning: %q", diagText(plan))
	}

	f = newFakeClusterSet(t, "east", "west")
	f.Put(t, "east", dr("picky-dr", map[string]any{"host": "user.global", "workloadSelector": map[string]any{"matchLabels": map[string]any{"app": "a"}}}))
	_, plan = vdAdoptPlan(t, f, vdAdoptConfig)
	if msg := diagText(plan); !plan.HasError() || !strings.Contains(msg, "cannot be adopted") || !strings.Contains(msg, "DestinationRule users/picky-dr in cluster east (host user.global): it applies only to the workloads its workloadSelector picks") {
		t.Fatalf("plan of an adoption of a DestinationRule for some workloads: want an error naming it and why, got %q", msg)
	}
}

// The apply takes over what its plan named, and nothing else (issue 38):
// the plan records the hand-written VirtualService with its UID and
// resourceVersion (adopted). A second hand-written VirtualService on the
// host, written between the plan and the apply of the saved plan, changes
// what the policy would adopt, so Terraform refuses the saved plan for
// that policy (its plan again at apply records another adopted, naming
// late-routes): nothing is written for it and both hand-written
// VirtualServices survive. The next plan names both, its apply takes them
// over, and the plan after that is empty.
func TestAccAdoptRoutes_writtenAfterThePlanIsLeftAlone(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	const name, host = "rel-adopt-late", "rel-adopt-late.global"
	route := map[string]any{"timeout": "2s", "route": []any{map[string]any{"destination": map[string]any{"host": host}}}}
	vs := handWrite(t, gvrVS, "VirtualService", "user-routes", map[string]any{"hosts": []any{host}, "http": []any{route}})
	handWrite(t, gvrDR, "DestinationRule", "user-dr", map[string]any{"host": host, "trafficPolicy": map[string]any{"tls": map[string]any{"mode": "ISTIO_MUTUAL"}}})
	virtualServices := func() string {
		var vss []string
		for _, k := range routesOnHost(t, host) {
			if strings.Contains(k, "/VirtualService/") {
				vss = append(vss, k)
			}
		}
		return strings.Join(vss, ",")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: name})
	w.write(providerConfig(t, "") + adoptRoutesConfig(name))
	out, code := w.run("plan", "-out=tfplan")
	if code != 0 {
		t.Fatalf("plan: exit %d\n%s", code, out)
	}
	recorded := fmt.Sprintf(`"east/VirtualService.networking.istio.io/users/user-routes" = "host=%s uid=%s resourceVersion=%s"`, host, vs.GetUID(), vs.GetResourceVersion())
	if !strings.Contains(out, recorded) {
		t.Fatalf("the plan does not record %s:\n%s", recorded, out)
	}
	handWrite(t, gvrVS, "VirtualService", "late-routes", map[string]any{"hosts": []any{host}, "http": []any{route}})
	out, code = w.run("apply", "tfplan")
	flat := strings.Join(strings.Fields(out), " ")
	if code == 0 {
		t.Fatalf("the saved plan applied although what it adopts changed since:\n%s", out)
	}
	for _, want := range []string{"mesh_traffic_policy.user", ".adopted", "east/VirtualService.networking.istio.io/users/late-routes"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the refused apply does not name %q:\n%s", want, out)
		}
	}
	if got := virtualServices(); got != "east/VirtualService/users/late-routes,east/VirtualService/users/user-routes" {
		t.Fatalf("after the refused apply of the saved plan: %v, want both hand-written VirtualServices and none of ours", got)
	}
	out, code = w.run("plan", "-detailed-exitcode")
	if flat := strings.Join(strings.Fields(out), " "); code != 2 || !strings.Contains(flat, "VirtualService users/late-routes in cluster east (host "+host+")") || !strings.Contains(flat, "Hand-written Istio objects adopted by") ||
		!strings.Contains(flat, "east/VirtualService.networking.istio.io/users/user-routes") {
		t.Fatalf("the plan after: exit %d, want 2 naming late-routes and user-routes as adopted:\n%s", code, out)
	}
	w.apply()
	if got := virtualServices(); got != "east/VirtualService/istio-system/tp-"+host+" ours" {
		t.Fatalf("after the second apply: %v, want the provider's VirtualService alone", got)
	}
	w.planIsEmpty()
}

// A virtual destination and a traffic policy on one host, both with
// adopt_existing, both take over its hand-written DestinationRule: the
// plan's adoption warning names it once, and the adopted attribute
// records it once, on the first of them (whose apply deletes it; the
// second's plan again at apply, after that delete, then records the same
// as its plan did). Planning the first again names it again.
func TestAdoptionWarningNamesEachObjectOnce(t *testing.T) {
	f := newFakeClusterSet(t, "east")
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "spec": map[string]any{"host": "user.global"}}}
	o.SetNamespace("users")
	o.SetName("user-dr")
	f.Put(t, "east", o)
	data := recordsData(f)
	desired := []engine.Desired{{Entry: engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "DestinationRule", Namespace: "istio-system", Name: "vd-user"},
		Manifest: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "metadata": map[string]any{"name": "vd-user", "namespace": "istio-system"}, "spec": map[string]any{"host": "user.global"}}}}
	warnings := func(owner engine.Owner) (int, int) {
		_, adopt, _, diags := planAdoption(context.Background(), data, intentSpec{Owner: owner}, desired, false)
		n := 0
		for _, d := range diags.Warnings() {
			if strings.Contains(d.Detail(), "DestinationRule users/user-dr in cluster east") {
				n++
			}
		}
		return n, len(adopt)
	}
	vd := engine.Owner{Kind: "virtual-destination", Name: "user", Adopt: true}
	tp := engine.Owner{Kind: "traffic-policy", Name: "user-pool", Adopt: true}
	if n, adopted := warnings(vd); n != 1 || adopted != 1 {
		t.Fatalf("the virtual destination: %d warnings naming user-dr, %d adopted; want 1 and 1", n, adopted)
	}
	if n, adopted := warnings(tp); n != 0 || adopted != 0 {
		t.Fatalf("the traffic policy on the same host: %d warnings naming user-dr, %d recorded; want it named and recorded once in the run (0 here)", n, adopted)
	}
	if n, _ := warnings(vd); n != 1 {
		t.Fatalf("the virtual destination planned again: %d warnings naming user-dr, want 1", n)
	}
}
