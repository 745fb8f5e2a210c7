package provider

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// Team B's state: two virtual destinations, an access policy, and a
// traffic policy on its own destination.
func relStateB(provider, b2Clients, timeout string) string {
	return provider + fmt.Sprintf(`
resource "mesh_virtual_destination" "b" {
  name     = "rel-b"
  hostname = "rel-b.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east",   namespace = "users", service = "b", priority = 0 },
    { cluster = "onprem", namespace = "users", service = "b", priority = 1 },
  ]
  clients = { clusters = ["east", "west"] }
}

resource "mesh_virtual_destination" "b2" {
  name     = "rel-b2"
  hostname = "rel-b2.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [{ cluster = "west", namespace = "users", service = "b2" }]
  clients  = { clusters = %s }
}

resource "mesh_access_policy" "b" {
  name        = "rel-b"
  destination = { virtual_destination = mesh_virtual_destination.b.hostname }
  sources     = [{ clusters = ["west"], namespace = "accounts", service_account = "account" }]
  rules       = [{ methods = ["GET"] }]
}

resource "mesh_traffic_policy" "b" {
  name        = "rel-b-timeout"
  destination = { virtual_destination = mesh_virtual_destination.b.hostname }
  sources     = { clusters = ["east"] }
  timeout     = %q
}
`, b2Clients, timeout)
}

// Team A's state: a cluster bootstrap, its own virtual destination, and a
// traffic policy on team B's destination (found through B's record), which
// composes with B's policy into one shared VirtualService.
func relStateA(provider string) string {
	return provider + `
resource "mesh_cluster" "west" {
  name         = "west"
  default_deny = true
}

resource "mesh_virtual_destination" "a" {
  name     = "rel-a"
  hostname = "rel-a.global"
  ports    = [{ number = 9090, protocol = "GRPC" }]
  backends = [{ cluster = "west", namespace = "users", service = "a" }]
  clients  = { clusters = ["east", "onprem"] }
}

resource "mesh_traffic_policy" "a" {
  name        = "rel-a-retries"
  destination = { virtual_destination = "rel-b.global" }
  sources     = { clusters = ["east"] }
  retries     = { attempts = 2, per_try_timeout = "1s", retry_on = ["5xx"] }
}
`
}

// relSharedVS returns the contributions (annotation names) and route names
// of the VirtualService both states' traffic policies meet in.
func relSharedVS(t *testing.T) (contributions, routes []string) {
	vs := getObject(t, "east", gvrVS, "istio-system", "tp-rel-b.global")
	if vs == nil {
		return nil, nil
	}
	for k := range vs.GetAnnotations() {
		if strings.HasPrefix(k, "traffic-policy.mesh-intent.io/") {
			contributions = append(contributions, strings.TrimPrefix(k, "traffic-policy.mesh-intent.io/"))
		}
	}
	sort.Strings(contributions)
	http, _, _ := unstructured.NestedSlice(vs.Object, "spec", "http")
	for _, r := range http {
		name, _, _ := unstructured.NestedString(r.(map[string]any), "name")
		timeout, _, _ := unstructured.NestedString(r.(map[string]any), "timeout")
		routes = append(routes, name+"@"+timeout)
	}
	return contributions, routes
}

// relSnapshot records the resourceVersions of the objects of some intents.
func relSnapshot(t *testing.T, owners ...engine.Owner) versions {
	all := versions{}
	for _, o := range owners {
		v := versions{}
		if err := snapshotVersions(t, o.Kind, o.Name, v)(nil); err != nil {
			t.Fatal(err)
		}
		for k, rv := range v {
			all[k] = rv
		}
	}
	return all
}

// Two Terraform states manage different intents in the same clusters, and
// their traffic policies even share one VirtualService. Neither prunes,
// overwrites or reports drift on the other's objects: plans are empty in
// both after both applied, an update in one leaves the other's objects
// untouched, and destroying one leaves the other's objects as they were.
func TestAccReliability_twoStates(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	provider := providerConfig(t, "")
	ownersA := []engine.Owner{{Kind: "cluster", Name: "west"}, {Kind: "virtual-destination", Name: "rel-a"}}
	ownersB := []engine.Owner{{Kind: "virtual-destination", Name: "rel-b"}, {Kind: "virtual-destination", Name: "rel-b2"}, {Kind: "access-policy", Name: "rel-b"}}
	a, b := newRelTF(t), newRelTF(t)
	// Cleanups run last-registered first: A goes before B, whose
	// destination A's policy needs.
	relCleanup(t, b, nil, ownersB...)
	relCleanup(t, a, nil, ownersA...)

	b.write(relStateB(provider, `["east", "west", "onprem"]`, "5s"))
	b.apply()
	a.write(relStateA(provider))
	a.apply()

	requireExact := func() {
		t.Helper()
		a.requireExact("mesh_cluster.west", "cluster", "west")
		a.requireExact("mesh_virtual_destination.a", "virtual-destination", "rel-a")
		b.requireExact("mesh_virtual_destination.b", "virtual-destination", "rel-b")
		b.requireExact("mesh_virtual_destination.b2", "virtual-destination", "rel-b2")
		b.requireExact("mesh_access_policy.b", "access-policy", "rel-b")
		requireNoOrphans(t, a, b)
	}
	requireExact()
	// The shared VirtualService carries both policies, in one route.
	contribs, routes := relSharedVS(t)
	if strings.Join(contribs, ",") != "rel-a-retries,rel-b-timeout" || strings.Join(routes, ",") != "rel-a-retries+rel-b-timeout@5s" {
		t.Fatalf("shared VirtualService: contributions %v, routes %v", contribs, routes)
	}
	// Both states list it, each for its own contribution.
	for _, w := range []*relTF{a, b} {
		if got := relKeys(w.mustInventory(map[*relTF]string{a: "mesh_traffic_policy.a", b: "mesh_traffic_policy.b"}[w])); strings.Join(got, ",") != "east/VirtualService/istio-system/tp-rel-b.global" {
			t.Fatalf("traffic policy inventory %v", got)
		}
	}
	// No drift either way: each plan (with refresh) is empty.
	a.planIsEmpty()
	b.planIsEmpty()

	// B changes: a destination's clients shrink, so B prunes its objects
	// in onprem and east, next to A's, and its policy's timeout changes, so
	// the shared VirtualService is recomposed. A's objects are not
	// written, and A's part of the shared object stays.
	beforeA := relSnapshot(t, ownersA...)
	b.write(relStateB(provider, `["west"]`, "6s"))
	out := b.apply()
	if !strings.Contains(out, "mesh_virtual_destination.b2: Modifications complete") {
		t.Fatalf("B's update did not change rel-b2:\n%s", out)
	}
	if err := changedExactly(beforeA, relSnapshot(t, ownersA...))(nil); err != nil {
		t.Fatalf("B's apply touched A's objects: %v", err)
	}
	if contribs, routes = relSharedVS(t); strings.Join(contribs, ",") != "rel-a-retries,rel-b-timeout" || strings.Join(routes, ",") != "rel-a-retries+rel-b-timeout@6s" {
		t.Fatalf("after B's update the shared VirtualService has contributions %v, routes %v", contribs, routes)
	}
	requireExact()
	a.planIsEmpty()
	b.planIsEmpty()

	// A is destroyed: B's objects are not written, the shared
	// VirtualService keeps B's part only, and B sees no drift.
	beforeB := relSnapshot(t, ownersB...)
	a.destroy()
	if err := changedExactly(beforeB, relSnapshot(t, ownersB...))(nil); err != nil {
		t.Fatalf("destroying A touched B's objects: %v", err)
	}
	for _, o := range ownersA {
		if left := liveOwned(t, o.Kind, o.Name); len(left) > 0 {
			t.Fatalf("A's %s left %v", o, left)
		}
	}
	if contribs, routes = relSharedVS(t); strings.Join(contribs, ",") != "rel-b-timeout" || strings.Join(routes, ",") != "rel-b-timeout@6s" {
		t.Fatalf("after destroying A the shared VirtualService has contributions %v, routes %v", contribs, routes)
	}
	b.requireExact("mesh_virtual_destination.b", "virtual-destination", "rel-b")
	b.requireExact("mesh_virtual_destination.b2", "virtual-destination", "rel-b2")
	b.requireExact("mesh_access_policy.b", "access-policy", "rel-b")
	requireNoOrphans(t, b)
	b.planIsEmpty()
	b.destroy()
	if left := relAllOwned(t); len(left) > 0 {
		t.Fatalf("left after destroying both: %v", left)
	}
}
