package provider

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/flux"
	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/faultproxy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
)

var (
	gvrOCIRepository = schema.GroupVersionResource{Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "ocirepositories"}
	gvrKustomization = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}
)

// fluxWorkspace is the state's workspace in TestAccPull_throughFlux, and
// so the tag of onprem's artifact.
const fluxWorkspace = "acc-flux"

// fluxDeadline bounds each wait on Flux: a guard against a hang, not a
// claim about how fast Flux is.
const fluxDeadline = 3 * time.Minute

// fluxProviderConfig is the provider block of the Flux tests: east and
// west pushed, onprem pulled from repository (reached, read only, through
// the fault proxy onprem), as the state of workspace.
func fluxProviderConfig(t *testing.T, repository, workspace string, onprem *faultproxy.Proxy) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("provider \"mesh\" {\n  clusters = {\n")
	for _, c := range testClusters {
		conn := kubeconfigConnection(t, c)
		if c == "onprem" {
			conn = relProxies{c: onprem}.connection(t, c)
		}
		fmt.Fprintf(&b, "    %s = {\n      kubernetes = {\n      %s\n      }\n      %s\n", c, conn, testTopology[c])
		if c == "onprem" {
			fmt.Fprintf(&b, "      delivery = { oci = { repository = %q, insecure = true } }\n", repository)
		}
		b.WriteString("    }\n")
	}
	fmt.Fprintf(&b, "  }\n  workspace = %q\n}\n", workspace)
	return b.String()
}

// fluxDemoConfig is a demo-like configuration: east and west pushed,
// onprem pulled through Flux from repository. user runs in east (weight
// eastWeight) and onprem (weight 1) at one priority; account calls it
// from west and onprem, so onprem gets the ServiceEntry that carries the
// weights, and east and onprem the AuthorizationPolicy admitting account.
// The provider reaches onprem's API server through the fault proxy
// onprem; Flux reaches it directly.
func fluxDemoConfig(t *testing.T, repository string, eastWeight int, onprem *faultproxy.Proxy) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(fluxProviderConfig(t, repository, fluxWorkspace, onprem))
	b.WriteString(meshClusterConfig("east", `  mtls_mode        = "STRICT"
  expose_east_west = true
  default_deny     = true`))
	b.WriteString(meshClusterConfig("west", `  mtls_mode = "STRICT"`))
	b.WriteString(meshClusterConfig("onprem", `  mtls_mode        = "STRICT"
  expose_east_west = true
  default_deny     = true`))
	fmt.Fprintf(&b, `
resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0, weight = %d },
    { cluster = "onprem", namespace = "users", service = "user", priority = 0, weight = 1 },
  ]
  clients = { clusters = ["west", "onprem"], namespaces = ["accounts"] }
}

resource "mesh_access_policy" "account_to_user" {
  name        = "account-to-user"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = [{ clusters = ["west", "onprem"], namespace = "accounts", service_account = "account" }]
  rules       = [{ methods = ["GET", "POST"], paths = ["/users/*"], ports = [8080] }]
}
`, eastWeight)
	return b.String()
}

// fluxHarness is Flux on onprem, delivering the state's artifact.
type fluxHarness struct {
	t      *testing.T
	target oci.Target
	boot   flux.Bootstrap
}

// dyn is an admin client of onprem, straight to its API server (not
// through the provider's fault proxy).
func (h *fluxHarness) dyn() dynamic.Interface { return dyn(h.t, "onprem") }

// revision is Flux's name of what the tag holds now.
func (h *fluxHarness) revision() (string, error) {
	digest, found, err := oci.Head(context.Background(), h.target)
	if err != nil || !found {
		return "", fmt.Errorf("the digest of %s: found %v, %v", h.target, found, err)
	}
	return flux.Revision(h.target.Tag, digest), nil
}

// requestReconcile asks source- and kustomize-controller to look now
// rather than at their next interval, the way `flux reconcile` does (the
// time is only a value the annotation has not had before).
func (h *fluxHarness) requestReconcile(ctx context.Context) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"reconcile.fluxcd.io/requestedAt":%q}}}`, time.Now().UTC().Format(time.RFC3339Nano))
	for _, gvr := range []schema.GroupVersionResource{gvrOCIRepository, gvrKustomization} {
		if _, err := h.dyn().Resource(gvr).Namespace(h.boot.Namespace).Patch(ctx, h.boot.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			return fmt.Errorf("requesting a reconcile of %s %s: %w", gvr.Resource, h.boot.Name, err)
		}
	}
	return nil
}

// waitApplied requests a reconcile and polls the Kustomization until
// Flux reports it Ready at the revision the tag holds, failing with Flux's
// last status at the deadline.
func (h *fluxHarness) waitApplied() (flux.Status, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), fluxDeadline)
	defer cancel()
	rev, err := h.revision()
	if err != nil {
		return flux.Status{}, "", err
	}
	if err := h.requestReconcile(ctx); err != nil {
		return flux.Status{}, rev, err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	var last flux.Status
	var lastErr error
	for {
		u, err := h.dyn().Resource(gvrKustomization).Namespace(h.boot.Namespace).Get(ctx, h.boot.Name, metav1.GetOptions{})
		if err != nil {
			lastErr = err
		} else if last, lastErr = flux.ParseStatus(u, "onprem"); lastErr == nil && last.AppliedAt(rev) {
			return last, rev, nil
		}
		select {
		case <-ctx.Done():
			return last, rev, fmt.Errorf("Flux did not apply %s within %s: last status %+v (error %v)\n%s", rev, fluxDeadline, last, lastErr, testMesh.FluxReport("onprem"))
		case <-tick.C:
		}
	}
}

// checkApplied waits until Flux applied the tag's revision, then checks
// that its inventory is exactly the state's objects in onprem and that
// every one of them is on the cluster, applied by our Kustomization.
func (h *fluxHarness) checkApplied(s *terraform.State) error {
	st, rev, err := h.waitApplied()
	if err != nil {
		return err
	}
	var inventory []string
	for _, k := range st.Inventory {
		inventory = append(inventory, fmt.Sprintf("%s/%s/%s/%s", k.Cluster, k.Kind, k.Namespace, k.Name))
	}
	sort.Strings(inventory)
	var want []string
	for addr := range s.RootModule().Resources {
		keys, err := stateObjects(s, addr)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if strings.HasPrefix(k, "onprem/") {
				want = append(want, k)
			}
		}
	}
	sort.Strings(want)
	if len(want) == 0 {
		return fmt.Errorf("the state holds no object in onprem: the test checks nothing")
	}
	if strings.Join(inventory, "\n") != strings.Join(want, "\n") {
		return fmt.Errorf("at %s Flux's inventory is not the state's objects in onprem\nFlux:  %v\nstate: %v", rev, inventory, want)
	}
	live := liveOwnedIn(h.t, []string{"onprem"}, "", "")
	if strings.Join(live, "\n") != strings.Join(want, "\n") {
		return fmt.Errorf("at %s the objects on onprem are not the state's\ncluster: %v\nstate:   %v", rev, live, want)
	}
	// Flux applied them: each carries our Kustomization's labels.
	sel := engine.LabelManagedBy + "=" + engine.ManagedByValue
	for _, gvr := range allOwnedGVRs {
		list, err := h.dyn().Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			return err
		}
		for _, o := range list.Items {
			if l := o.GetLabels(); l["kustomize.toolkit.fluxcd.io/name"] != h.boot.Name || l["kustomize.toolkit.fluxcd.io/namespace"] != h.boot.Namespace {
				return fmt.Errorf("%s %s/%s on onprem was not applied by Kustomization %s/%s: labels %v", o.GetKind(), o.GetNamespace(), o.GetName(), h.boot.Namespace, h.boot.Name, l)
			}
		}
	}
	return nil
}

// checkEastWeight checks the weight of east's endpoint in onprem's
// ServiceEntry for user.global, which Flux applied.
func (h *fluxHarness) checkEastWeight(want int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		se, err := h.dyn().Resource(gvrSE).Namespace("istio-system").Get(context.Background(), "vd-user", metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("onprem's ServiceEntry istio-system/vd-user: %w", err)
		}
		return eastWeight(se.Object, "onprem's ServiceEntry", want)
	}
}

// checkPublishedEastWeight checks the ServiceEntry in the artifact the
// tag holds (what Flux will apply), not on the cluster.
func (h *fluxHarness) checkPublishedEastWeight(want int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		a, found, err := oci.Fetch(context.Background(), h.target)
		if err != nil || !found {
			return fmt.Errorf("the artifact %s: found %v, %v", h.target, found, err)
		}
		for _, o := range a.Objects {
			u := unstructured.Unstructured{Object: o}
			if u.GetKind() == "ServiceEntry" && u.GetNamespace() == "istio-system" && u.GetName() == "vd-user" {
				return eastWeight(o, "the published ServiceEntry", want)
			}
		}
		return fmt.Errorf("the artifact %s holds no ServiceEntry istio-system/vd-user", h.target)
	}
}

// eastWeight checks that a ServiceEntry gives east's gateway want.
func eastWeight(se map[string]any, what string, want int64) error {
	eps, _, err := unstructured.NestedSlice(se, "spec", "endpoints")
	if err != nil {
		return err
	}
	var weights []string
	for _, e := range eps {
		m, ok := e.(map[string]any)
		if !ok {
			return fmt.Errorf("endpoint %v is not an object", e)
		}
		addr, _, _ := unstructured.NestedString(m, "address")
		// An API server's JSON decodes to int64, the artifact's YAML
		// to int or float64.
		var w int64
		switch v := m["weight"].(type) {
		case int64:
			w = v
		case int:
			w = int64(v)
		case float64:
			w = int64(v)
		}
		weights = append(weights, fmt.Sprintf("%s=%d", addr, w))
		if addr == "203.0.113.10" && w == want {
			return nil
		}
	}
	return fmt.Errorf("%s's endpoints %v: want east's gateway 203.0.113.10 at weight %d", what, weights, want)
}

// checkPruned is a CheckDestroy: Flux applied the emptied artifact, its
// inventory is empty, nothing owned is left on onprem or anywhere.
func (h *fluxHarness) checkPruned(*terraform.State) error {
	st, rev, err := h.waitApplied()
	if err != nil {
		return err
	}
	if len(st.Inventory) != 0 {
		return fmt.Errorf("after destroy Flux's inventory at %s still lists %v", rev, st.Inventory)
	}
	if left := liveOwnedIn(h.t, []string{"onprem"}, "", ""); len(left) != 0 {
		return fmt.Errorf("after destroy Flux left %v on onprem", left)
	}
	return checkNothingOwned(h.t)(nil)
}

// restartOnpremWithFlux starts onprem's API server again, if stopped, and
// Flux against it, if not running.
func restartOnpremWithFlux(t *testing.T) {
	t.Helper()
	if err := testMesh.StartCluster("onprem"); err != nil {
		t.Fatalf("restarting onprem: %v", err)
	}
	if !testMesh.FluxRunning("onprem") {
		if err := testMesh.StartFlux(context.Background(), "onprem"); err != nil {
			t.Fatalf("restarting Flux on onprem: %v", err)
		}
	}
}

// onpremProxy is a fault proxy in front of onprem's API server, closed
// when the test ends: the provider reaches onprem through it.
func onpremProxy(t *testing.T) *faultproxy.Proxy {
	t.Helper()
	proxy, err := faultproxy.New(strings.TrimSuffix(strings.TrimPrefix(testMesh.Server("onprem"), "https://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	return proxy
}

// startFlux starts Flux on onprem, delivering the state's artifact
// (workspace fluxWorkspace) from a registry in the test process, with the
// objects flux.Bootstrap renders applied; the cleanup stops Flux and
// removes them. It returns the harness and the artifact's repository.
func startFlux(t *testing.T) (*fluxHarness, string) {
	t.Helper()
	requireMesh(t)
	if err := localmesh.CheckFluxBinaries(""); err != nil {
		t.Fatal(err)
	}
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
		ensureNamespace(t, c, "accounts")
	}
	ctx := context.Background()
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	repository := strings.TrimPrefix(srv.URL, "http://") + "/mesh/onprem"
	h := &fluxHarness{t: t,
		target: oci.Target{Repository: repository, Tag: fluxWorkspace, Insecure: true},
		boot: flux.Bootstrap{Name: "mesh-" + fluxWorkspace, Namespace: flux.DefaultNamespace, Repository: repository,
			Tag: fluxWorkspace, Insecure: true, Interval: 5 * time.Second, RecordsNamespace: localmesh.RecordsNamespace},
	}

	if err := testMesh.StartFlux(ctx, "onprem"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Flux first, then its objects without their finalizers (no
		// controller is left to remove them; destroy emptied the
		// inventory), so the shared mesh keeps nothing of this test.
		if err := testMesh.StopFlux("onprem"); err != nil {
			t.Errorf("stopping Flux: %v", err)
		}
		for _, gvr := range []schema.GroupVersionResource{gvrKustomization, gvrOCIRepository} {
			r := dyn(t, "onprem").Resource(gvr).Namespace(h.boot.Namespace)
			_, err := r.Patch(context.Background(), h.boot.Name, types.MergePatchType, []byte(`{"metadata":{"finalizers":null}}`), metav1.PatchOptions{})
			if err == nil {
				err = r.Delete(context.Background(), h.boot.Name, metav1.DeleteOptions{})
			}
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("removing the bootstrap's %s: %v", gvr.Resource, err)
			}
		}
		// The account the Kustomization applied as, and its roles.
		objs, err := h.boot.Objects()
		if err != nil {
			t.Error(err)
			return
		}
		for _, o := range objs {
			switch o.GetKind() {
			case "ServiceAccount", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding":
			default:
				continue
			}
			var r dynamic.ResourceInterface = dyn(t, "onprem").Resource(flux.Resources[o.GetKind()])
			if ns := o.GetNamespace(); ns != "" {
				r = dyn(t, "onprem").Resource(flux.Resources[o.GetKind()]).Namespace(ns)
			}
			if err := r.Delete(context.Background(), o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("removing the bootstrap's %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
	})
	objs, err := h.boot.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		gvr := flux.Resources[o.GetKind()]
		var r dynamic.ResourceInterface = dyn(t, "onprem").Resource(gvr)
		if ns := o.GetNamespace(); ns != "" {
			r = dyn(t, "onprem").Resource(gvr).Namespace(ns)
		}
		if _, err := r.Create(ctx, o, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("applying the bootstrap's %s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}

	return h, repository
}

// TestAccPull_throughFlux is issue 35's end-to-end test: a demo-like
// configuration with east and west delivered by push and onprem by pull,
// Flux's real source- and kustomize-controller running against onprem
// (Istio's webhook in front of it) with the objects flux.Bootstrap renders
// for the state's artifact on an in-process registry. After apply Flux is
// Ready at the digest the registry holds, its inventory is the state's
// onprem objects and they are on the cluster; the next plan is empty; a
// weight change is a new revision Flux applies; a tag re-pushed by hand is
// drift the plan shows and the apply undoes (and Flux follows); with
// onprem's API server refusing the provider, plan and apply succeed and
// publish, and Flux applies the result; with onprem's API server stopped
// (and Flux with it), plan and apply succeed and publish, and once both
// are back Flux applies it and the plan is empty; destroy leaves Flux
// pruning every object.
func TestAccPull_throughFlux(t *testing.T) {
	h, repository := startFlux(t)
	ctx := context.Background()
	proxy := onpremProxy(t)
	config := fluxDemoConfig(t, repository, 3, proxy)
	reweighted := fluxDemoConfig(t, repository, 2, proxy)
	restored := fluxDemoConfig(t, repository, 4, proxy)
	later := fluxDemoConfig(t, repository, 5, proxy)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             h.checkPruned,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check: resource.ComposeAggregateTestCheckFunc(
					h.checkApplied,
					h.checkEastWeight(3),
					func(*terraform.State) error {
						if live := liveOwnedIn(t, []string{"east"}, "", ""); len(live) == 0 {
							return fmt.Errorf("the push cluster east got nothing")
						}
						return nil
					},
				),
			},
			{
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// A weight change: a new revision, which Flux applies.
				Config: reweighted,
				Check:  resource.ComposeAggregateTestCheckFunc(h.checkApplied, h.checkEastWeight(2)),
			},
			{
				// The tag re-pushed by hand without onprem's ServiceEntry:
				// Flux prunes it, the plan shows the drift, the apply
				// publishes the state's objects again and Flux restores it.
				PreConfig: func() {
					a, _, err := oci.Fetch(ctx, h.target)
					if err != nil {
						t.Fatal(err)
					}
					objs := a.Objects.Clone()
					removed := 0
					for k := range objs {
						if strings.Contains(k, "/ServiceEntry/") {
							delete(objs, k)
							removed++
						}
					}
					if removed == 0 {
						t.Fatalf("the artifact holds no ServiceEntry: %v", a.Objects)
					}
					if _, err := oci.Publish(ctx, h.target, objs, a.Publisher); err != nil {
						t.Fatal(err)
					}
					if _, rev, err := h.waitApplied(); err != nil {
						t.Fatal(err)
					} else if se := getObject(t, "onprem", gvrSE, "istio-system", "vd-user"); se != nil {
						t.Fatalf("Flux applied the hand-pushed %s but left the ServiceEntry it drops", rev)
					}
				},
				Config: reweighted,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("mesh_virtual_destination.user", plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(h.checkApplied, h.checkEastWeight(2)),
			},
			{
				// onprem's API server gone for the provider (its address
				// refuses connections, as a stopped server's does): the
				// plan and the apply of a change need only the registry,
				// and publish (checked in the artifact). Flux, inside the
				// cluster, is not cut off.
				PreConfig: func() { proxy.Refuse() },
				Config:    restored,
				Check:     resource.ComposeAggregateTestCheckFunc(h.checkPublishedEastWeight(4), h.checkApplied, h.checkEastWeight(4)),
			},
			{
				// Reachable again: nothing to change, and Flux applied what
				// was published meanwhile.
				PreConfig: func() {
					if err := proxy.Heal(); err != nil {
						t.Fatal(err)
					}
				},
				Config: restored,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(h.checkApplied, h.checkEastWeight(4)),
			},
			{
				// onprem's API server stopped (etcd's data kept), with
				// Flux's controllers, which cannot work without it: the
				// plan and the apply of a change still succeed and
				// publish; the artifact waits in the registry.
				PreConfig: func() {
					t.Cleanup(func() { restartOnpremWithFlux(t) }) // if the next step does not run
					if err := testMesh.StopFlux("onprem"); err != nil {
						t.Fatal(err)
					}
					if err := testMesh.StopCluster("onprem"); err != nil {
						t.Fatal(err)
					}
					proxy.Refuse()
				},
				Config: later,
				Check:  h.checkPublishedEastWeight(5),
			},
			{
				// The API server and Flux back: nothing to change, and
				// Flux applies what was published while it was down.
				PreConfig: func() {
					restartOnpremWithFlux(t)
					if err := proxy.Heal(); err != nil {
						t.Fatal(err)
					}
				},
				Config: later,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: resource.ComposeAggregateTestCheckFunc(h.checkApplied, h.checkEastWeight(5)),
			},
		},
	})
}

// fluxTrafficConfig is fluxDemoConfig with a traffic policy that splits
// onprem's requests for user.global between east (eastWeight percent)
// and onprem: its VirtualService is composed in onprem's artifact.
func fluxTrafficConfig(t *testing.T, repository string, eastWeight int, onprem *faultproxy.Proxy) string {
	t.Helper()
	return fluxDemoConfig(t, repository, 3, onprem) + fmt.Sprintf(`
resource "mesh_traffic_policy" "user_split" {
  name          = "user-split"
  destination   = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources       = { clusters = ["onprem"] }
  traffic_shift = [{ cluster = "east", weight = %d }, { cluster = "onprem", weight = %d }]
}
`, eastWeight, 100-eastWeight)
}

// checkSplit checks the VirtualService Flux applied on onprem for the
// policy user-split: its routes' weights are want (sorted).
func (h *fluxHarness) checkSplit(want ...int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		list, err := h.dyn().Resource(gvrVS).List(context.Background(), metav1.ListOptions{LabelSelector: "traffic-policy.mesh-intent.io/user-split"})
		if err != nil {
			return err
		}
		if len(list.Items) != 1 {
			return fmt.Errorf("onprem holds %d VirtualServices of traffic policy user-split, want 1", len(list.Items))
		}
		vs := list.Items[0]
		if l := vs.GetLabels(); l["kustomize.toolkit.fluxcd.io/name"] != h.boot.Name {
			return fmt.Errorf("VirtualService %s/%s was not applied by Kustomization %s: labels %v", vs.GetNamespace(), vs.GetName(), h.boot.Name, l)
		}
		if _, ok := vs.GetAnnotations()["traffic-policy.mesh-intent.io/user-split"]; !ok {
			return fmt.Errorf("VirtualService %s/%s carries no contribution of user-split: %v", vs.GetNamespace(), vs.GetName(), vs.GetAnnotations())
		}
		httpRoutes, _, err := unstructured.NestedSlice(vs.Object, "spec", "http")
		if err != nil {
			return err
		}
		var got []int64
		for _, r := range httpRoutes {
			route, _ := r.(map[string]any)["route"].([]any)
			for _, d := range route {
				if w, ok := d.(map[string]any)["weight"].(int64); ok {
					got = append(got, w)
				}
			}
		}
		sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Errorf("VirtualService %s/%s on onprem routes with weights %v, want %v: spec %v", vs.GetNamespace(), vs.GetName(), got, want, vs.Object["spec"])
		}
		return nil
	}
}

// TestAccPull_trafficPolicyThroughFlux: a traffic policy's VirtualService
// (a composed object) on the pull cluster onprem, with Flux's real
// controllers. The apply composes it in onprem's artifact; Flux applies
// it (Istio's webhook admits it) with the split asked for, and its
// inventory is the state's onprem objects; the next plan is empty; a new
// split is a new revision Flux applies; destroy leaves Flux pruning
// everything (CheckDestroy).
func TestAccPull_trafficPolicyThroughFlux(t *testing.T) {
	h, repository := startFlux(t)
	proxy := onpremProxy(t)
	config := fluxTrafficConfig(t, repository, 70, proxy)
	shifted := fluxTrafficConfig(t, repository, 40, proxy)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             h.checkPruned,
		Steps: []resource.TestStep{
			{
				Config: config,
				Check:  resource.ComposeAggregateTestCheckFunc(h.checkApplied, h.checkSplit(30, 70)),
			},
			{
				// Nothing to change; and a second state (workspace
				// acc-flux-b, its own artifact beside this one) with a
				// policy on the same destination and pull cluster fails
				// its plan naming this state's artifact and policy.
				Config: config,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
				Check: func(*terraform.State) error {
					resource.Test(t, resource.TestCase{
						ProtoV6ProviderFactories: protoV6ProviderFactories,
						Steps: []resource.TestStep{{
							Config: fluxProviderConfig(t, repository, "acc-flux-b", proxy) + `
resource "mesh_traffic_policy" "user_timeout" {
  name        = "user-timeout"
  destination = { virtual_destination = "user.global" }
  sources     = { clusters = ["onprem"] }
  timeout     = "3s"
}
`,
							PlanOnly:    true,
							ExpectError: regexp.MustCompile(words(`published for pull cluster onprem by another state`) + `[\s\S]*` + regexp.QuoteMeta(h.target.String()) + `[\s\S]*` + words(`traffic policy "user-split"`) + `[\s\S]*` + words(`deliver cluster onprem by push`)),
						}},
					})
					return nil
				},
			},
			{
				Config: shifted,
				Check:  resource.ComposeAggregateTestCheckFunc(h.checkApplied, h.checkSplit(40, 60)),
			},
		},
	})
}
