package provider

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	"github.com/hashicorp/terraform-plugin-testing/plancheck"
	"github.com/hashicorp/terraform-plugin-testing/terraform"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

const accessVD = `
resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "onprem", namespace = "users", service = "user", priority = 1 },
  ]
}
`

// The seed case: the account service in the public cloud (aws) may call
// user in east but not on-prem; on-prem's own account service may call
// both.
func accessPolicyConfig(methods string) string {
	return fmt.Sprintf(`
resource "mesh_cluster" "east" {
  name         = "east"
  default_deny = true
}
resource "mesh_access_policy" "account_to_user" {
  name        = "account-to-user"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources = [
    {
      cluster_selector     = { cloud = "aws" }
      namespace            = "accounts"
      service_account      = "account"
      destination_clusters = { clusters = ["east"] }
    },
    { clusters = ["onprem"], namespace = "accounts", service_account = "account" },
  ]
  rules = [{ methods = %s, paths = ["/users/*"], ports = [8080] }]
}
`, methods)
}

// checkPrincipals asserts the principals and methods of the
// AuthorizationPolicy in one backend cluster.
func checkPrincipals(t *testing.T, cluster string, methods []string, principals ...string) resource.TestCheckFunc {
	return func(*terraform.State) error {
		ap := getObject(t, cluster, gvrAuthz, "users", "ap-account-to-user")
		if principals == nil {
			if ap != nil {
				return fmt.Errorf("%s has an AuthorizationPolicy but no source may call it there", cluster)
			}
			return nil
		}
		if ap == nil {
			return fmt.Errorf("no AuthorizationPolicy users/ap-account-to-user in %s", cluster)
		}
		if action, _, _ := unstructured.NestedString(ap.Object, "spec", "action"); action != "ALLOW" {
			return fmt.Errorf("action %q", action)
		}
		if app, _, _ := unstructured.NestedString(ap.Object, "spec", "selector", "matchLabels", "app"); app != "user" {
			return fmt.Errorf("selector app=%q", app)
		}
		rules, _, _ := unstructured.NestedSlice(ap.Object, "spec", "rules")
		var got, gotMethods []string
		for _, r := range rules {
			from, _, _ := unstructured.NestedSlice(r.(map[string]any), "from")
			for _, f := range from {
				p, _, _ := unstructured.NestedStringSlice(f.(map[string]any), "source", "principals")
				got = append(got, p...)
			}
			to, _, _ := unstructured.NestedSlice(r.(map[string]any), "to")
			for _, o := range to {
				m, _, _ := unstructured.NestedStringSlice(o.(map[string]any), "operation", "methods")
				gotMethods = append(gotMethods, m...)
			}
		}
		sort.Strings(got)
		want := append([]string(nil), principals...)
		sort.Strings(want)
		if strings.Join(got, ",") != strings.Join(want, ",") {
			return fmt.Errorf("principals in %s: %v, want %v", cluster, got, want)
		}
		if strings.Join(gotMethods, ",") != strings.Join(methods, ",") {
			return fmt.Errorf("methods in %s: %v, want %v", cluster, gotMethods, methods)
		}
		return nil
	}
}

func TestAccAccessPolicy_seedCase(t *testing.T) {
	requireMesh(t)
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkNothingOwned(t),
		Steps: []resource.TestStep{
			{
				Config: providerConfig(t, "") + accessVD + accessPolicyConfig(`["GET"]`),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkPrincipals(t, "east", []string{"GET"}, "east.mesh/ns/accounts/sa/account", "onprem.mesh/ns/accounts/sa/account"),
					checkPrincipals(t, "onprem", []string{"GET"}, "onprem.mesh/ns/accounts/sa/account"),
					checkPrincipals(t, "west", nil),
					resource.TestCheckResourceAttr("mesh_access_policy.account_to_user", "destination_backends.#", "2"),
					resource.TestCheckResourceAttr("mesh_access_policy.account_to_user", "objects.%", "2"),
					checkInventoryMatches(t, "mesh_access_policy.account_to_user", "access-policy", "account-to-user"),
					// default deny and the allow policy live side by side.
					func(*terraform.State) error {
						if getObject(t, "east", gvrAuthz, "istio-system", "mesh-default-deny") == nil {
							return fmt.Errorf("no default deny in east")
						}
						return nil
					},
				),
			},
			{
				Config: providerConfig(t, "") + accessVD + accessPolicyConfig(`["GET"]`),
				ConfigPlanChecks: resource.ConfigPlanChecks{
					PreApply: []plancheck.PlanCheck{plancheck.ExpectEmptyPlan()},
				},
			},
			{
				Config: providerConfig(t, "") + accessVD + accessPolicyConfig(`["GET", "POST"]`),
				Check: resource.ComposeAggregateTestCheckFunc(
					checkPrincipals(t, "east", []string{"GET", "POST"}, "east.mesh/ns/accounts/sa/account", "onprem.mesh/ns/accounts/sa/account"),
					checkPrincipals(t, "onprem", []string{"GET", "POST"}, "onprem.mesh/ns/accounts/sa/account"),
				),
			},
		},
	})
}

// west shares east's trust domain: a policy that allows aws callers (east)
// but not gcp ones (west) cannot be enforced, and plan says so.
func TestAccAccessPolicy_trustDomainCollision(t *testing.T) {
	requireMesh(t)
	for _, c := range testClusters {
		ensureNamespace(t, c, "users") // else the destination's plan fails first, on its namespace
	}
	shared := strings.Replace(providerConfig(t, ""), `trust_domain = "west.mesh"`, `trust_domain = "east.mesh"`, 1)
	resource.Test(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		CheckDestroy:             checkNothingOwned(t),
		Steps: []resource.TestStep{{
			Config: shared + accessVD + `
resource "mesh_access_policy" "aws_only" {
  name        = "aws-only"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = [{ cluster_selector = { cloud = "aws" }, namespace = "accounts", service_account = "account" }]
}
`,
			ExpectError: regexp.MustCompile(`sources\[0\][\s\S]*east\.mesh[\s\S]*(west|east)`),
		}},
	})
}
