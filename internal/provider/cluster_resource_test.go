package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

func meshClusterConfig(name, body string) string {
	return fmt.Sprintf(`
resource "mesh_cluster" %[1]q {
  name = %[1]q
%[2]s
}
`, name, body)
}

// checkGateway asserts the east-west Gateway in a cluster: our labels, the
// port, passthrough TLS and the hosts.
func checkGateway(t *testing.T, cluster string, hosts ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		gw := getObject(t, cluster, gvrGateway, "istio-system", "mesh-cross-network")
		if gw == nil {
			return fmt.Errorf("no Gateway istio-system/mesh-cross-network in %s", cluster)
		}
		if l := gw.GetLabels(); l["app.kubernetes.io/managed-by"] != "terraform-provider-mesh" || l["mesh-intent.io/owner-name"] != cluster {
			return fmt.Errorf("Gateway in %s lacks our owner labels: %v", cluster, l)
		}
		servers, _, _ := unstructured.NestedSlice(gw.Object, "spec", "servers")
		if len(servers) != 1 {
			return fmt.Errorf("Gateway in %s has %d servers", cluster, len(servers))
		}
		s := servers[0].(map[string]any)
		if mode, _, _ := unstructured.NestedString(s, "tls", "mode"); mode != "AUTO_PASSTHROUGH" {
			return fmt.Errorf("Gateway tls mode %q", mode)
		}
		if port, _, _ := unstructured.NestedInt64(s, "port", "number"); port != 15443 {
			return fmt.Errorf("Gateway port %d", port)
		}
		got, _, _ := unstructured.NestedStringSlice(s, "hosts")
		if fmt.Sprint(got) != fmt.Sprint(hosts) {
			return fmt.Errorf("Gateway hosts %v, want %v", got, hosts)
		}
		return nil
	}
}

func checkPeerAuth(t *testing.T, cluster, mode string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		pa := getObject(t, cluster, gvrPeerAuth, "istio-system", "default")
		if mode == "" {
			if pa != nil {
				return fmt.Errorf("PeerAuthentication still in %s", cluster)
			}
			return nil
		}
		if pa == nil {
			return fmt.Errorf("no PeerAuthentication in %s", cluster)
		}
		if got, _, _ := unstructured.NestedString(pa.Object, "spec", "mtls", "mode"); got != mode {
			return fmt.Errorf("PeerAuthentication mode %q, want %q", got, mode)
		}
		return nil
	}
}

// rememberResourceVersion records an object's resourceVersion, and
// sameResourceVersion asserts it did not change: the object was not written.
func rememberResourceVersion(t *testing.T, cluster string, into *string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		gw := getObject(t, cluster, gvrGateway, "istio-system", "mesh-cross-network")
		if gw == nil {
			return fmt.Errorf("no Gateway in %s", cluster)
		}
		*into = gw.GetResourceVersion()
		return nil
	}
}

func sameResourceVersion(t *testing.T, cluster string, want *string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		gw := getObject(t, cluster, gvrGateway, "istio-system", "mesh-cross-network")
		if gw == nil {
			return fmt.Errorf("no Gateway in %s", cluster)
		}
		if gw.GetResourceVersion() != *want {
			return fmt.Errorf("Gateway in %s was rewritten: resourceVersion %s, was %s", cluster, gw.GetResourceVersion(), *want)
		}
		return nil
	}
}

// patchAs changes an object as another tool would: a merge patch (kubectl
// edit/patch) or a server-side apply under another field manager.
func patchAs(t *testing.T, cluster, name, manager string, pt types.PatchType, body string, force bool) {
	t.Helper()
	ri := dyn(t, cluster).Resource(gvrGateway).Namespace("istio-system")
	var err error
	if pt == types.ApplyPatchType {
		_, err = ri.Patch(context.Background(), name, pt, []byte(body), metav1.PatchOptions{FieldManager: manager, Force: &force})
	} else {
		_, err = ri.Patch(context.Background(), name, pt, []byte(body), metav1.PatchOptions{FieldManager: manager})
	}
	if err != nil {
		t.Fatalf("patching Gateway %s in %s as %s: %v", name, cluster, manager, err)
	}
}

// checkIngressOpen finds, among the cluster's AuthorizationPolicies, the
// ALLOW-all one that keeps Istio's ingress gateway open under default_deny.
func checkIngressOpen(t *testing.T, cluster string) error {
	t.Helper()
	list, err := dyn(t, cluster).Resource(gvrAuthz).Namespace("istio-system").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		return err
	}
	for _, ap := range list.Items {
		sel, _, _ := unstructured.NestedStringMap(ap.Object, "spec", "selector", "matchLabels")
		rules, _, _ := unstructured.NestedSlice(ap.Object, "spec", "rules")
		if sel["istio"] == "ingressgateway" && len(sel) == 1 && len(rules) == 1 {
			if r, ok := rules[0].(map[string]any); ok && len(r) == 0 {
				return nil
			}
		}
	}
	return fmt.Errorf("no AuthorizationPolicy in %s allows every request to istio=ingressgateway (default_deny_exempt)", cluster)
}

func TestAccMeshCluster_lifecycle(t *testing.T) {
	var gwVersion string
	full := meshClusterConfig("east", `  mtls_mode        = "STRICT"
  default_deny     = true
  expose_east_west = true`)
	noMTLS := meshClusterConfig("east", `  default_deny     = true
  expose_east_west = true`)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkNothingOwned(t),
		Steps: []resource.TestStep{
			{
				Config: providerConfig(t, "") + full,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGateway(t, "east", "*.global"),
					checkPeerAuth(t, "east", "STRICT"),
					func(*terraform.State) error {
						if getObject(t, "east", gvrAuthz, "istio-system", "mesh-default-deny") == nil {
							return fmt.Errorf("no deny-all AuthorizationPolicy")
						}
						return checkIngressOpen(t, "east")
					},
					resource.TestCheckResourceAttr("mesh_cluster.east", "objects.%", "4"),
					resource.TestCheckResourceAttr("mesh_cluster.east", "istio_crds_installed", "true"),
					resource.TestMatchResourceAttr("mesh_cluster.east", "kubernetes_version", regexp.MustCompile(`^v1\.`)),
					checkInventoryMatches(t, "mesh_cluster.east", "cluster", "east"),
					rememberResourceVersion(t, "east", &gwVersion),
					logStateSize(t, "mesh_cluster.east"),
				),
			},
			{
				// Refresh and plan again: nothing to do.
				Config: providerConfig(t, "") + full,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Unsetting mtls_mode deletes the PeerAuthentication and
				// leaves the other objects untouched.
				Config: providerConfig(t, "") + noMTLS,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkPeerAuth(t, "east", ""),
					sameResourceVersion(t, "east", &gwVersion),
					resource.TestCheckResourceAttr("mesh_cluster.east", "objects.%", "3"),
					checkInventoryMatches(t, "mesh_cluster.east", "cluster", "east"),
				),
			},
			{
				// Another tool adds a label and an annotation: fields we do
				// not own never show as drift.
				PreConfig: func() {
					patchAs(t, "east", "mesh-cross-network", "kubectl-label", types.MergePatchType,
						`{"metadata":{"labels":{"team":"net"},"annotations":{"note":"hello"}}}`, false)
				},
				Config: providerConfig(t, "") + noMTLS,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// kubectl edit of a field we own: the plan shows it and
				// apply restores it.
				PreConfig: func() {
					patchAs(t, "east", "mesh-cross-network", "kubectl-edit", types.MergePatchType,
						`{"spec":{"servers":[{"port":{"number":15443,"name":"tls","protocol":"TLS"},"tls":{"mode":"AUTO_PASSTHROUGH"},"hosts":["*"]}]}}`, false)
				},
				Config: providerConfig(t, "") + noMTLS,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("mesh_cluster.east", plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGateway(t, "east", "*.global"),
					func(*terraform.State) error {
						// The other tool's label is still there.
						gw := getObject(t, "east", gvrGateway, "istio-system", "mesh-cross-network")
						if gw.GetLabels()["team"] != "net" {
							return fmt.Errorf("apply removed a label it does not own")
						}
						return nil
					},
				),
			},
			{
				// Deleted out of band: the next apply recreates it.
				PreConfig: func() {
					err := dyn(t, "east").Resource(gvrGateway).Namespace("istio-system").Delete(context.Background(), "mesh-cross-network", metav1.DeleteOptions{})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: providerConfig(t, "") + noMTLS,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("mesh_cluster.east", plancheck.ResourceActionUpdate)},
				},
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGateway(t, "east", "*.global"),
					checkInventoryMatches(t, "mesh_cluster.east", "cluster", "east"),
				),
			},
			{
				// Import by name reads the intent back from the cluster.
				ResourceName:      "mesh_cluster.east",
				ImportState:       true,
				ImportStateId:     "east",
				ImportStateVerify: true,
				Config:            providerConfig(t, "") + noMTLS,
			},
		},
	})
}

// Another field manager applied different values to fields we own: apply
// fails naming the object, cluster, fields and manager; force_conflicts
// takes ownership back.
func TestAccMeshCluster_conflict(t *testing.T) {
	config := meshClusterConfig("west", `  expose_east_west = true`)
	other := `{"apiVersion":"networking.istio.io/v1","kind":"Gateway","metadata":{"name":"mesh-cross-network","namespace":"istio-system"},
"spec":{"selector":{"istio":"eastwestgateway"},"servers":[{"port":{"number":15443,"name":"tls","protocol":"TLS"},"tls":{"mode":"AUTO_PASSTHROUGH"},"hosts":["*.other"]}]}}`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkNothingOwned(t),
		Steps: []resource.TestStep{
			{
				Config: providerConfig(t, "") + config,
				Check:  checkGateway(t, "west", "*.global"),
			},
			{
				PreConfig: func() {
					patchAs(t, "west", "mesh-cross-network", "gitops-controller", types.ApplyPatchType, other, true)
				},
				Config:      providerConfig(t, "") + config,
				ExpectError: regexp.MustCompile(`Conflict applying Gateway istio-system/mesh-cross-network in cluster west[\s\S]*\.spec\.servers[\s\S]*"gitops-controller"[\s\S]*force_conflicts = true`),
			},
			{
				Config: providerConfig(t, "force_conflicts = true") + config,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkGateway(t, "west", "*.global"),
					checkInventoryMatches(t, "mesh_cluster.west", "cluster", "west"),
				),
			},
		},
	})
}

// A same-named object that is not ours is never overwritten.
func TestAccMeshCluster_refusesObjectNotOurs(t *testing.T) {
	requireMesh(t)
	theirs := `apiVersion: security.istio.io/v1
kind: PeerAuthentication
metadata:
  name: default
  namespace: istio-system
spec:
  mtls:
    mode: PERMISSIVE
`
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal([]byte(theirs), &obj.Object); err != nil {
		t.Fatal(err)
	}
	ri := dyn(t, "onprem").Resource(gvrPeerAuth).Namespace("istio-system")
	if _, err := ri.Create(context.Background(), &obj, metav1.CreateOptions{FieldManager: "platform-team"}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ri.Delete(context.Background(), "default", metav1.DeleteOptions{}) })
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy: func(*terraform.State) error {
			if err := checkPeerAuth(t, "onprem", "PERMISSIVE")(nil); err != nil {
				return fmt.Errorf("the object that is not ours changed: %w", err)
			}
			return checkNothingOwned(t)(nil)
		},
		Steps: []resource.TestStep{{
			Config:      providerConfig(t, "") + meshClusterConfig("onprem", `  mtls_mode = "STRICT"`),
			ExpectError: regexp.MustCompile(`PeerAuthentication istio-system/default in cluster onprem already exists\s+and\s+was\s+not\s+created\s+by\s+terraform-provider-mesh`),
		}},
	})
}

// Plan needs no cluster: with connection values known only after apply,
// planning succeeds and shows the objects.
func TestAccMeshCluster_planWithUnknownConnection(t *testing.T) {
	config := `
resource "terraform_data" "endpoint" {
  input = "https://192.0.2.1:6443"
}
resource "terraform_data" "network" {
  input = "net-new"
}
provider "mesh" {
  clusters = {
    fresh = {
      kubernetes = {
        host  = terraform_data.endpoint.output
        token = "not-used-at-plan"
      }
      network           = terraform_data.network.output
      east_west_gateway = { address = terraform_data.endpoint.output }
    }
  }
}
resource "mesh_cluster" "fresh" {
  name             = "fresh"
  mtls_mode        = "STRICT"
  expose_east_west = true
}
`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:             config,
			PlanOnly:           true,
			ExpectNonEmptyPlan: true,
		}},
	})
}

// A cluster that is down during apply: the error names it, the state that
// failed apply wrote lists exactly what exists (read from the state file,
// without a refresh, which would hide an object the apply dropped), and
// the next apply converges.
func TestAccMeshCluster_clusterDownDuringApply(t *testing.T) {
	two := meshClusterConfig("east", `  expose_east_west = true`) + meshClusterConfig("onprem", `  expose_east_west = true`)
	twoStrict := meshClusterConfig("east", `  expose_east_west = true
  mtls_mode = "STRICT"`) + meshClusterConfig("onprem", `  expose_east_west = true
  mtls_mode = "STRICT"`)
	restart := func() {
		if err := testMesh.StartCluster("onprem"); err != nil {
			t.Fatalf("restarting onprem: %v", err)
		}
	}
	w := newRelTF(t)
	relCleanup(t, w, restart, engine.Owner{Kind: "cluster", Name: "east"}, engine.Owner{Kind: "cluster", Name: "onprem"})
	w.write(providerConfig(t, "") + two)
	w.apply()
	before := w.inventory("mesh_cluster.onprem").entries

	if err := testMesh.StopCluster("onprem"); err != nil {
		t.Fatal(err)
	}
	w.write(providerConfig(t, `request_timeout = "5s"`) + twoStrict)
	out := strings.Join(strings.Fields(w.applyFails()), " ")
	if !regexp.MustCompile(`in cluster onprem.*(unreachable|did not answer)`).MatchString(out) {
		t.Fatalf("the failure does not name onprem as unreachable:\n%s", out)
	}
	// Right after the failure, as the failed apply left the state: east's
	// new PeerAuthentication is listed and exists; onprem keeps exactly
	// what it had (its Gateway), nothing dropped, nothing added.
	east := w.inventory("mesh_cluster.east")
	if !east.present || len(east.entries) != 2 {
		t.Fatalf("mesh_cluster.east in state: %+v, want its Gateway and PeerAuthentication", east)
	}
	if got, live := relKeys(east.entries), liveOwnedIn(t, []string{"east"}, "cluster", "east"); strings.Join(got, ",") != strings.Join(live, ",") {
		t.Fatalf("east: state %v, cluster %v", got, live)
	}
	onprem := w.inventory("mesh_cluster.onprem")
	if !onprem.present || fmt.Sprint(onprem.entries) != fmt.Sprint(before) || len(before) != 1 || !strings.Contains(before[0].Key, "/Gateway/") {
		t.Fatalf("mesh_cluster.onprem in state after the failure: %+v, before it: %v (want its Gateway, unchanged)", onprem, before)
	}

	restart()
	w.write(providerConfig(t, "") + twoStrict)
	w.apply()
	for _, c := range []string{"east", "onprem"} {
		if err := checkPeerAuth(t, c, "STRICT")(nil); err != nil {
			t.Fatal(err)
		}
		w.requireExact("mesh_cluster."+c, "cluster", c)
	}
	w.planIsEmpty()
}

// logStateSize reports the bytes of state per owned object.
func logStateSize(t *testing.T, addr string) resource.TestCheckFunc {
	return func(s *terraform.State) error {
		rs := s.RootModule().Resources[addr]
		n := 0
		for k, v := range rs.Primary.Attributes {
			if regexp.MustCompile(`^objects\.\d+\.`).MatchString(k) {
				n += len(k) + len(v)
			}
		}
		objs, _ := stateObjects(s, addr)
		if len(objs) > 0 {
			t.Logf("state: %d bytes of objects inventory for %d objects (%d bytes per object, as flatmap)", n, len(objs), n/len(objs))
		}
		return nil
	}
}
