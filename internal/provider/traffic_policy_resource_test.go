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
)

// user.global runs in all three clusters; callers in east (aws) send 20%
// of their traffic to onprem and keep the rest local.
const trafficVD = `
resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "west", namespace = "users", service = "user", priority = 0 },
    { cluster = "onprem", namespace = "users", service = "user", priority = 1 },
  ]
}
`

func shiftPolicy(timeout string) string {
	return fmt.Sprintf(`
resource "mesh_traffic_policy" "shift" {
  name          = "shift"
  destination   = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources       = { cluster_selector = { cloud = "aws" } }
  timeout       = %q
  retries       = { attempts = 3, per_try_timeout = "500ms", retry_on = ["5xx", "connect-failure"] }
  traffic_shift = [{ local = true, weight = 80 }, { cluster = "onprem", weight = 20 }]
  connection_pool = {
    tcp = { max_connections = 100, connect_timeout = "1s", keepalive = { time = "60s", interval = "10s" } }
  }
}
`, timeout)
}

const canaryPolicy = `
resource "mesh_traffic_policy" "canary_fault" {
  name        = "canary-fault"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = { clusters = ["east"], namespaces = ["accounts"] }
  match       = [{ uri_prefix = "/v2", headers = { "x-canary" = "true" } }]
  fault       = { abort = { percent = 1, http_status = 503 } }
  headers     = { request = { set = { "x-mesh" = "1" }, remove = ["x-debug"] } }
}
`

const conflictingPolicy = `
resource "mesh_traffic_policy" "slow" {
  name        = "slow"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = { clusters = ["east"] }
  timeout     = "9s"
}
`

// routes returns the route names and timeouts of the composed
// VirtualService in a cluster, nil when it does not exist.
func routes(t *testing.T, cluster string) []string {
	vs := getObject(t, cluster, gvrVS, "istio-system", "tp-user.global")
	if vs == nil {
		return nil
	}
	http, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
	var out []string
	for _, r := range http {
		name, _, _ := unstructured.NestedString(r.(map[string]any), "name")
		timeout, _, _ := unstructured.NestedString(r.(map[string]any), "timeout")
		out = append(out, name+"@"+timeout)
	}
	return out
}

func checkRoutes(t *testing.T, cluster string, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		if got := routes(t, cluster); strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("routes in %s: %v, want %v", cluster, got, want)
		}
		return nil
	}
}

func checkPool(t *testing.T, cluster string, want int64) resource.TestCheckFunc {
	return func(*terraform.State) error {
		dr := getObject(t, cluster, gvrDR, "istio-system", "vd-user")
		if dr == nil {
			return fmt.Errorf("no DestinationRule vd-user in %s", cluster)
		}
		got, _, _ := unstructured.NestedInt64(dr.Object, "spec", "trafficPolicy", "connectionPool", "tcp", "maxConnections")
		if got != want {
			return fmt.Errorf("maxConnections in %s: %d, want %d", cluster, got, want)
		}
		// The virtual destination's failover settings are still there.
		if _, ok, _ := unstructured.NestedMap(dr.Object, "spec", "trafficPolicy", "outlierDetection"); !ok {
			return fmt.Errorf("the DestinationRule in %s lost its outlier detection", cluster)
		}
		return nil
	}
}

func TestAccTrafficPolicy_composition(t *testing.T) {
	requireMesh(t)
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkNothingOwned(t),
		Steps: []resource.TestStep{
			{
				Config: providerConfig(t, "") + trafficVD + shiftPolicy("2s"),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRoutes(t, "east", "shift@2s"),
					// Only source clusters get the policy.
					checkRoutes(t, "west"),
					checkRoutes(t, "onprem"),
					checkPool(t, "east", 100),
					resource.TestCheckResourceAttr("mesh_traffic_policy.shift", "objects.%", "2"),
				),
			},
			{
				Config: providerConfig(t, "") + trafficVD + shiftPolicy("2s"),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// A second, compatible policy composes into the same
				// VirtualService: the overlap carries both.
				Config: providerConfig(t, "") + trafficVD + shiftPolicy("2s") + canaryPolicy,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRoutes(t, "east", "canary-fault+shift@2s", "shift@2s"),
					checkPool(t, "east", 100),
				),
			},
			{
				Config: providerConfig(t, "") + trafficVD + shiftPolicy("2s") + canaryPolicy,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Someone edits a composed route: the plan shows it, apply
				// restores the composition.
				PreConfig: func() {
					_, err := dyn(t, "east").Resource(gvrVS).Namespace("istio-system").Patch(context.Background(), "tp-user.global",
						types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/http/1/timeout","value":"300s"}]`), metav1.PatchOptions{FieldManager: "kubectl-edit"})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: providerConfig(t, "") + trafficVD + shiftPolicy("2s") + canaryPolicy,
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectResourceAction("mesh_traffic_policy.shift", plancheck.ResourceActionUpdate)},
				},
				Check: checkRoutes(t, "east", "canary-fault+shift@2s", "shift@2s"),
			},
			{
				// Updating one policy recomposes; the other stays.
				Config: providerConfig(t, "") + trafficVD + shiftPolicy("3s") + canaryPolicy,
				Check:  checkRoutes(t, "east", "canary-fault+shift@3s", "shift@3s"),
			},
			{
				// The same setting with another value on the same requests
				// fails at plan, naming both policies; nothing changes.
				Config:      providerConfig(t, "") + trafficVD + shiftPolicy("3s") + canaryPolicy + conflictingPolicy,
				PlanOnly:    true,
				ExpectError: regexp.MustCompile(`Conflicting traffic policies[\s\S]*"shift"[\s\S]*"slow"|Conflicting traffic policies[\s\S]*"slow"[\s\S]*"shift"`),
			},
			{
				// Removing a policy takes its part out and keeps the rest.
				// Before it: the failed plan changed nothing in the
				// clusters (the same routes; no contribution of "slow").
				PreConfig: func() {
					if err := checkRoutes(t, "east", "canary-fault+shift@3s", "shift@3s")(nil); err != nil {
						t.Fatalf("after the failed plan: %v", err)
					}
					for _, c := range testClusters {
						vs := getObject(t, c, gvrVS, "istio-system", "tp-user.global")
						if vs != nil && vs.GetAnnotations()["traffic-policy.mesh-intent.io/slow"] != "" {
							t.Fatalf("the failed plan wrote the contribution of \"slow\" in %s", c)
						}
					}
				},
				Config: providerConfig(t, "") + trafficVD + canaryPolicy,
				Check: resource.ComposeAggregateTestCheckFunc(
					checkRoutes(t, "east", "canary-fault@", "default@"),
					checkPool(t, "east", 0),
				),
			},
		},
	})
}

// A field another tool applied in the virtual destination's DestinationRule
// (which the traffic policies' settings share) is drift, not a silent
// takeover: the refresh warns naming the tool and the field, and the apply
// removes it and composes the policy's setting.
func TestAccTrafficPolicy_fieldOfAnotherToolIsDrift(t *testing.T) {
	requireMesh(t)
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	pool := `
resource "mesh_traffic_policy" "pool" {
  name            = "pool"
  destination     = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources         = { clusters = ["east"] }
  connection_pool = { tcp = { max_connections = 100 } }
}
`
	gitops := `{"apiVersion":"networking.istio.io/v1","kind":"DestinationRule","metadata":{"name":"vd-user","namespace":"istio-system"},
"spec":{"host":"user.global","trafficPolicy":{"connectionPool":{"tcp":{"maxConnections":5}}}}}`
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkNothingOwned(t),
		Steps: []resource.TestStep{
			{Config: providerConfig(t, "") + trafficVD},
			{
				PreConfig: func() {
					force := true
					_, err := dyn(t, "east").Resource(gvrDR).Namespace("istio-system").Patch(context.Background(), "vd-user",
						types.ApplyPatchType, []byte(gitops), metav1.PatchOptions{FieldManager: "gitops", Force: &force})
					if err != nil {
						t.Fatal(err)
					}
				},
				Config: providerConfig(t, "") + trafficVD + pool,
				// Without the drift rule this apply fails with a conflict with
				// "gitops"; with it the tool's value is removed and the
				// policy's composed.
				Check: checkPool(t, "east", 100),
			},
		},
	})
}
