package provider

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func vsObject(o *unstructured.Unstructured) map[string]any {
	if o == nil {
		return nil
	}
	return o.Object
}

// renameRoot is a virtual destination with two traffic policies composed
// on it, referring to it by its hostname attribute.
func renameRoot(t *testing.T, name, host string) string {
	return providerConfig(t, `workspace = "rename"`) + `
resource "mesh_virtual_destination" "ledger" {
  name     = "` + name + `"
  hostname = "` + host + `"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "ledger", priority = 0 },
    { cluster = "west", namespace = "users", service = "ledger", priority = 1 },
  ]
}

resource "mesh_traffic_policy" "web" {
  name        = "ledger-web"
  destination = { virtual_destination = mesh_virtual_destination.ledger.hostname }
  sources     = { namespaces = ["web"] }
  timeout     = "3s"
}

resource "mesh_traffic_policy" "pool" {
  name            = "ledger-pool"
  destination     = { virtual_destination = mesh_virtual_destination.ledger.hostname }
  connection_pool = { http = { max_requests_per_connection = 10 } }
}

resource "mesh_traffic_policy" "batch" {
  name        = "ledger-batch"
  destination = { virtual_destination = mesh_virtual_destination.ledger.hostname }
  sources     = { namespaces = ["batch"] }
  timeout     = "30s"
}
`
}

// A virtual destination with composed policies is renamed, then given a
// new hostname: each in one apply, without error or tainted resource, the
// plan after is empty, what the clusters hold is exactly what the state
// lists, and destroy leaves nothing.
func TestAccComposition_renameDestination(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil)
	steps := []struct{ name, host string }{
		{"ledger", "ledger.global"},
		{"ledger-v2", "ledger.global"},
		{"ledger-v2", "ledger.payments.global"},
	}
	for i, s := range steps {
		w.write(renameRoot(t, s.name, s.host))
		w.apply() // fails the test unless the apply succeeds
		for _, addr := range []string{"mesh_virtual_destination.ledger", "mesh_traffic_policy.web", "mesh_traffic_policy.batch", "mesh_traffic_policy.pool"} {
			if in := w.inventory(addr); !in.present || in.tainted {
				t.Fatalf("step %d (%s, %s): %s present %v, tainted %v", i, s.name, s.host, addr, in.present, in.tainted)
			}
		}
		w.requireExact("mesh_virtual_destination.ledger", "virtual-destination", s.name)
		requireNoOrphans(t, w)
		w.planIsEmpty()
		vs := getObject(t, "east", gvrVS, "istio-system", "tp-"+s.host)
		if got := contributionsIn(vsObject(vs)); len(got) != 4 {
			t.Fatalf("step %d: the VirtualService of %s carries %v, want both policies", i, s.host, got)
		}
		dr := getObject(t, "east", gvrDR, "istio-system", "vd-"+s.name)
		if got := contributionsIn(vsObject(dr)); len(got) != 2 || dr.Object["spec"].(map[string]any)["host"] != s.host {
			t.Fatalf("step %d: the DestinationRule of %s carries %v (host %v), want the pool policy's settings for %s", i, s.name, got, dr.Object["spec"], s.host)
		}
	}
	w.destroy()
	if left := relAllOwned(t); len(left) > 0 {
		var dump []string
		for _, c := range testClusters {
			if o := getObject(t, c, gvrVS, "istio-system", "tp-"+steps[len(steps)-1].host); o != nil {
				dump = append(dump, fmt.Sprintf("%s: labels %v annotations %v managed %v", c, o.GetLabels(), o.GetAnnotations(), o.GetManagedFields()))
			}
		}
		t.Fatalf("destroy left %v\n%s", left, strings.Join(dump, "\n"))
	}
}

// A policy destroyed while one of its clusters does not answer: the apply
// fails naming the cluster, the contribution is gone from the others, and
// the policy stays in state (not tainted) listing only the cluster where
// its contribution remains. Once the cluster is back, the next apply
// finishes the job: nothing of it is left anywhere, and the plan after is
// empty. A destroy interrupted the same way is finished by the next one.
func TestAccComposition_releaseAfterAPartialFailure(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	proxies := newRelProxies(t)
	w := newRelTF(t)
	relCleanup(t, w, func() { proxies.heal(t) })
	provider := providerConfigWith(t, `workspace = "partial"
  request_timeout = "5s"`, proxies.connection)
	both := renameRoot(t, "ledger", "ledger.global")
	both = both[strings.Index(both, "\nresource "):] // without the provider block
	w.write(provider + both)
	w.apply()
	const web = "mesh_traffic_policy.web"
	withoutWeb := both[:strings.Index(both, `resource "mesh_traffic_policy" "web"`)] + both[strings.Index(both, `resource "mesh_traffic_policy" "pool"`):]

	proxies["onprem"].Refuse()
	w.write(provider + withoutWeb)
	out := w.applyFails()
	relRequireClusterError(t, out, "onprem", `is unreachable`)
	for _, c := range testClusters {
		has := strings.Contains(strings.Join(contributionsIn(vsObject(getObject(t, c, gvrVS, "istio-system", "tp-ledger.global"))), ","), "ledger-web")
		if has != (c == "onprem") {
			t.Fatalf("after the failed release, ledger-web's contribution in %s: %v, want it only where the cluster did not answer", c, has)
		}
	}
	in := w.inventory(web)
	if !in.present || in.tainted {
		t.Fatalf("after the failed release, %s present %v, tainted %v: want it kept, untainted", web, in.present, in.tainted)
	}
	for _, e := range in.entries {
		if !strings.HasPrefix(e.Key, "onprem/") {
			t.Fatalf("the state lists %s, which was released", e.Key)
		}
	}

	proxies.heal(t)
	w.apply()
	for _, c := range testClusters {
		if got := contributionsIn(vsObject(getObject(t, c, gvrVS, "istio-system", "tp-ledger.global"))); strings.Contains(strings.Join(got, ","), "ledger-web") {
			t.Fatalf("ledger-web is still on the VirtualService in %s after the cluster came back: %v", c, got)
		}
	}
	if w.inventory(web).present {
		t.Fatalf("%s is still in state", web)
	}
	requireNoOrphans(t, w)
	w.planIsEmpty()

	proxies["onprem"].Refuse()
	relRequireClusterError(t, func() string {
		out, code := w.run("destroy", "-auto-approve")
		if code == 0 {
			t.Fatalf("destroy with onprem away succeeded:\n%s", out)
		}
		return out
	}(), "onprem", `is unreachable`)
	proxies.heal(t)
	w.destroy()
	if left := relAllOwned(t); len(left) > 0 {
		t.Fatalf("the second destroy left %v", left)
	}
}
