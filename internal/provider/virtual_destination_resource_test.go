package provider

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

func vdConfig(backends, clients string) string {
	return fmt.Sprintf(`
resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
%s
  ]
  failover = {
    mode              = "priority"
    outlier_detection = { consecutive_5xx_errors = 5, interval = "10s", base_ejection_time = "30s" }
  }
  clients = %s
}
`, backends, clients)
}

const (
	eastBackend   = `    { cluster = "east", namespace = "users", service = "user", priority = 0 },`
	onpremBackend = `    { cluster = "onprem", namespace = "users", service = "user", priority = 1 },`
	westBackend   = `    { cluster = "west", namespace = "users", service = "user", priority = 2 },`
)

// checkServiceEntryEndpoints asserts the addresses of the client-side
// ServiceEntry in a cluster.
func checkServiceEntryEndpoints(t *testing.T, cluster string, want ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		se := getObject(t, cluster, gvrSE, "istio-system", "vd-user")
		if se == nil {
			return fmt.Errorf("no ServiceEntry istio-system/vd-user in %s", cluster)
		}
		eps, _, _ := unstructured.NestedSlice(se.Object, "spec", "endpoints")
		var got []string
		for _, e := range eps {
			addr, _, _ := unstructured.NestedString(e.(map[string]any), "address")
			got = append(got, addr)
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("ServiceEntry endpoints in %s: %v, want %v", cluster, got, want)
		}
		if hosts, _, _ := unstructured.NestedStringSlice(se.Object, "spec", "hosts"); len(hosts) != 1 || hosts[0] != "user.global" {
			return fmt.Errorf("ServiceEntry hosts %v", hosts)
		}
		return nil
	}
}

func TestAccVirtualDestination_placementAndUpdates(t *testing.T) {
	requireMesh(t)
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	v1, v2, v3, v4 := versions{}, versions{}, versions{}, versions{}
	clientsEastWest := `{ clusters = ["east", "west"] }`
	clientsEast := `{ clusters = ["east"] }`
	movedGateway := strings.Replace(providerConfig(t, ""), `address = "ew.onprem.example.com"`, `address = "198.51.100.7"`, 1)

	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkNothingOwned(t),
		Steps: []resource.TestStep{
			{
				// east and west call user; it runs in east and onprem.
				Config: providerConfig(t, "") + vdConfig(eastBackend+"\n"+onpremBackend, clientsEastWest),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkInventoryMatches(t, "mesh_virtual_destination.user", "virtual-destination", "user"),
					checkServiceEntryEndpoints(t, "east", "user.users.svc.cluster.local", "ew.onprem.example.com"),
					checkServiceEntryEndpoints(t, "west", "203.0.113.10", "ew.onprem.example.com"),
					// onprem is only a backend: no client objects, but the
					// gateway-side objects in the service's namespace.
					func(*terraform.State) error {
						if getObject(t, "onprem", gvrSE, "istio-system", "vd-user") != nil {
							return fmt.Errorf("onprem is not a client but has the client ServiceEntry")
						}
						if getObject(t, "onprem", gvrSE, "users", "vd-user-backend") == nil {
							return fmt.Errorf("onprem backs user.global but has no backend ServiceEntry")
						}
						return nil
					},
					resource.TestCheckResourceAttrSet("mesh_virtual_destination.user", "vip"),
					snapshotVersions(t, "virtual-destination", "user", v1),
				),
			},
			{
				Config: providerConfig(t, "") + vdConfig(eastBackend+"\n"+onpremBackend, clientsEastWest),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				// Removing the client cluster west deletes its objects and
				// touches nothing else.
				Config: providerConfig(t, "") + vdConfig(eastBackend+"\n"+onpremBackend, clientsEast),
				Check: resource.ComposeAggregateTestCheckFunc(
					snapshotVersions(t, "virtual-destination", "user", v2),
					func(s *terraform.State) error {
						// east's gateway-side objects served only west, so they go too.
						// The records of the intent change wherever it has objects.
						return changedExactly(v1, v2, "west/ServiceEntry/istio-system/vd-user", "west/DestinationRule/istio-system/vd-user",
							"west/ServiceEntry/istio-system/vd-user.clusters", "west/DestinationRule/istio-system/vd-user.east",
							"west/DestinationRule/istio-system/vd-user.onprem",
							"east/ServiceEntry/users/vd-user-backend", "east/DestinationRule/users/vd-user-backend",
							"east/ServiceEntry/users/vd-user-backend.clusters",
							"east/ConfigMap/mesh-intent-records/vd-user", "west/ConfigMap/mesh-intent-records/vd-user", "onprem/ConfigMap/mesh-intent-records/vd-user")(s)
					},
					checkInventoryMatches(t, "mesh_virtual_destination.user", "virtual-destination", "user"),
				),
			},
			{
				// A new backend cluster: it gets the backend objects, the
				// client's ServiceEntries and DestinationRules change (west
				// gets a host of its own, and every cluster's host a new
				// place in its order), and so does onprem's backend
				// ServiceEntry of cluster hosts (a request for west's host
				// may fail over to onprem); onprem's others do not change.
				Config: providerConfig(t, "") + vdConfig(eastBackend+"\n"+onpremBackend+"\n"+westBackend, clientsEast),
				Check: resource.ComposeAggregateTestCheckFunc(
					snapshotVersions(t, "virtual-destination", "user", v3),
					func(s *terraform.State) error {
						return changedExactly(v2, v3,
							"east/ServiceEntry/istio-system/vd-user", "east/DestinationRule/istio-system/vd-user",
							"east/ServiceEntry/istio-system/vd-user.clusters", "east/DestinationRule/istio-system/vd-user.east",
							"east/DestinationRule/istio-system/vd-user.onprem", "east/DestinationRule/istio-system/vd-user.west",
							"west/ServiceEntry/users/vd-user-backend", "west/DestinationRule/users/vd-user-backend",
							"west/ServiceEntry/users/vd-user-backend.clusters", "onprem/ServiceEntry/users/vd-user-backend.clusters",
							"east/ConfigMap/mesh-intent-records/vd-user", "west/ConfigMap/mesh-intent-records/vd-user", "onprem/ConfigMap/mesh-intent-records/vd-user")(s)
					},
					checkServiceEntryEndpoints(t, "east", "user.users.svc.cluster.local", "ew.onprem.example.com", "203.0.113.20"),
				),
			},
			{
				// onprem's gateway moves: only the client ServiceEntries that
				// point at it change.
				Config: movedGateway + vdConfig(eastBackend+"\n"+onpremBackend+"\n"+westBackend, clientsEast),
				Check: resource.ComposeAggregateTestCheckFunc(
					snapshotVersions(t, "virtual-destination", "user", v4),
					func(s *terraform.State) error {
						return changedExactly(v3, v4, "east/ServiceEntry/istio-system/vd-user", "east/ServiceEntry/istio-system/vd-user.clusters")(s)
					},
					checkServiceEntryEndpoints(t, "east", "user.users.svc.cluster.local", "198.51.100.7", "203.0.113.20"),
				),
			},
		},
	})
}

// Bad input fails at plan with the attribute path, and nothing is written.
func TestAccVirtualDestination_planErrors(t *testing.T) {
	cases := map[string]struct{ backends, want string }{
		"unknown cluster":   {`    { cluster = "wine", namespace = "users", service = "user" },`, `Unknown cluster[\s\S]*"wine"`},
		"duplicate backend": {eastBackend + "\n" + eastBackend, `backends\[1\]`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			resource.Test(t, resource.TestCase{
				ProtoV6ProviderFactories: protoV6ProviderFactories,
				CheckDestroy:             checkNothingOwned(t),
				Steps: []resource.TestStep{{
					Config:      providerConfig(t, "") + vdConfig(c.backends, `{ clusters = ["east"] }`),
					PlanOnly:    true,
					ExpectError: regexp.MustCompile(c.want),
				}},
			})
			if left := liveOwned(t, "", ""); len(left) > 0 {
				t.Fatalf("the failed plan left objects in the clusters: %v", left)
			}
		})
	}
}

// Two virtual destinations with one VIP fail at plan, naming both, and
// nothing is written to any cluster: sidecars would give them one listener.
func TestAccVirtualDestination_duplicateVIP(t *testing.T) {
	other := fmt.Sprintf(`
resource "mesh_virtual_destination" "other" {
  name     = "other"
  hostname = "other.global"
  vip      = %q
  ports    = [{ number = 9090, protocol = "TCP" }]
  backends = [{ cluster = "east", namespace = "other", service = "other" }]
  clients  = { clusters = ["east"] }
}
`, virtualdestination.VIP("user.global"))
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkNothingOwned(t),
		Steps: []resource.TestStep{{
			Config:      providerConfig(t, "") + vdConfig(eastBackend, `{ clusters = ["east"] }`) + other,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`Duplicate VIP[\s\S]*virtual destinations "(user|other)" and "(other|user)"[\s\S]*` + regexp.QuoteMeta(virtualdestination.VIP("user.global"))),
		}, {
			// The same configuration with a VIP of its own plans and
			// applies; before it, nothing was written.
			PreConfig: func() {
				if left := liveOwned(t, "", ""); len(left) > 0 {
					t.Fatalf("the failed plan wrote objects: %v", left)
				}
			},
			Config: providerConfig(t, "") + vdConfig(eastBackend, `{ clusters = ["east"] }`) +
				strings.Replace(other, virtualdestination.VIP("user.global"), "241.0.0.7", 1),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("mesh_virtual_destination.other", "vip", "241.0.0.7"),
				resource.TestCheckResourceAttr("mesh_virtual_destination.user", "vip", virtualdestination.VIP("user.global")),
			),
		}},
	})
}
