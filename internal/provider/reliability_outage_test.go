package provider

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/faultproxy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
)

// outageCluster is the fourth cluster of the outage test, started for it
// alone next to the shared local mesh: its own API server, etcd and
// Istio webhook, reached through a fault proxy.
const outageCluster = "edge"

const outageTopology = `network = "net-edge"
      region = "eu-central-1"
      zone = "eu-central-1a"
      trust_domain = "edge.mesh"
      labels = { cloud = "aws", env = "prod" }
      east_west_gateway = { address = "203.0.113.40", port = 15443 }`

// startOutageCluster starts the fourth cluster, with the users namespace,
// and a fault proxy in front of it; both stop at the end of the test.
func startOutageCluster(t *testing.T) (dynamic.Interface, *faultproxy.Proxy, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m, err := localmesh.Start(ctx, localmesh.Options{Clusters: []string{outageCluster}, Dir: t.TempDir(), BinDir: os.Getenv(localmesh.EnvBinDir)})
	if err != nil {
		t.Fatalf("starting cluster %s: %v", outageCluster, err)
	}
	t.Cleanup(func() {
		if err := m.Stop(); err != nil {
			t.Errorf("stopping cluster %s: %v", outageCluster, err)
		}
	})
	d, err := dynamic.NewForConfig(m.RESTConfig(outageCluster))
	if err != nil {
		t.Fatal(err)
	}
	createNamespace(t, d, "users")
	p, err := faultproxy.New(strings.TrimSuffix(strings.TrimPrefix(m.Server(outageCluster), "https://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	cfg := m.RESTConfig(outageCluster)
	conn := fmt.Sprintf(`host                   = %q
      tls_server_name        = "localhost"
      cluster_ca_certificate = %q
      client_certificate     = %q
      client_key             = %q`, p.URL(), cfg.CAData, cfg.CertData, cfg.KeyData)
	return d, p, conn
}

// createNamespace creates namespace name through d, if it does not exist.
func createNamespace(t *testing.T, d dynamic.Interface, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := d.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(context.Background(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// outageConfig is the provider with four clusters, a virtual destination
// with a backend in each, and a traffic policy that splits its requests
// across them with the given weights (east, west, onprem, edge).
func outageConfig(t *testing.T, edgeConn string, weights [4]int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("provider \"mesh\" {\n  request_timeout = \"10s\"\n  clusters = {\n")
	for _, c := range testClusters {
		fmt.Fprintf(&b, "    %s = {\n      kubernetes = {\n      %s\n      }\n      %s\n    }\n", c, kubeconfigConnection(t, c), testTopology[c])
	}
	fmt.Fprintf(&b, "    %s = {\n      kubernetes = {\n      %s\n      }\n      %s\n    }\n  }\n}\n", outageCluster, edgeConn, outageTopology)
	fmt.Fprintf(&b, `
resource "mesh_virtual_destination" "user" {
  name     = "rel-outage"
  hostname = "rel-outage.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east",   namespace = "users", service = "user" },
    { cluster = "west",   namespace = "users", service = "user" },
    { cluster = "onprem", namespace = "users", service = "user" },
    { cluster = "edge",   namespace = "users", service = "user" },
  ]
}

resource "mesh_traffic_policy" "shift" {
  name        = "rel-outage"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  traffic_shift = [
    { cluster = "east", weight = %d },
    { cluster = "west", weight = %d },
    { cluster = "onprem", weight = %d },
    { cluster = "edge", weight = %d },
  ]
}
`, weights[0], weights[1], weights[2], weights[3])
	return b.String()
}

// routeWeights returns, per cluster, the sorted route weights of the
// VirtualServices the traffic policy's state lists there, read with admin
// rights (edge directly, not through its proxy).
func routeWeights(t *testing.T, w *relTF, edge dynamic.Interface) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range w.mustInventory("mesh_traffic_policy.shift") {
		parts := strings.SplitN(e.Key, "/", 4) // cluster/Kind/namespace/name
		if parts[1] != "VirtualService" {
			continue
		}
		cluster, d := parts[0], edge
		if cluster != outageCluster {
			d = dyn(t, cluster)
		}
		vs, err := d.Resource(gvrVS).Namespace(parts[2]).Get(context.Background(), parts[3], metav1.GetOptions{})
		if err != nil {
			t.Fatalf("reading %s: %v", e.Key, err)
		}
		var weights []int
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case map[string]any:
				for k, c := range x {
					if n, ok := c.(int64); ok && k == "weight" {
						weights = append(weights, int(n))
					}
					walk(c)
				}
			case []any:
				for _, c := range x {
					walk(c)
				}
			}
		}
		walk(vs.Object["spec"])
		sort.Ints(weights)
		out[cluster] = fmt.Sprint(weights)
	}
	return out
}

// liveOwnedEdge lists the objects an intent owns in the fourth cluster, as
// liveOwned keys.
func liveOwnedEdge(t *testing.T, edge dynamic.Interface, o engine.Owner) []string {
	t.Helper()
	sel := engine.LabelManagedBy + "=" + engine.ManagedByValue + "," + engine.LabelOwnerKind + "=" + o.Kind + "," + engine.LabelOwnerName + "=" + o.Name
	var out []string
	for _, gvr := range allOwnedGVRs {
		list, err := edge.Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatalf("listing %s in %s: %v", gvr.Resource, outageCluster, err)
		}
		for _, it := range list.Items {
			out = append(out, fmt.Sprintf("%s/%s/%s/%s", outageCluster, it.GetKind(), it.GetNamespace(), it.GetName()))
		}
	}
	sort.Strings(out)
	return out
}

// requireExactEverywhere checks that state lists exactly the objects each
// intent owns, in the three shared clusters and in edge. A traffic
// policy's objects are composed (found by its contribution, not by owner
// labels): each of its entries must name an object that exists, and it
// must have one in every cluster.
func requireExactEverywhere(t *testing.T, w *relTF, edge dynamic.Interface, addrs map[string]engine.Owner) {
	t.Helper()
	for addr, o := range addrs {
		if o.Kind == "traffic-policy" {
			entries := w.mustInventory(addr)
			seen, listed := map[string]bool{}, map[string]bool{}
			for _, e := range entries {
				parts := strings.SplitN(e.Key, "/", 4)
				d := edge
				if parts[0] != outageCluster {
					d = dyn(t, parts[0])
				}
				gvr := gvrVS
				if parts[1] == "DestinationRule" {
					gvr = gvrDR
				}
				o, err := d.Resource(gvr).Namespace(parts[2]).Get(context.Background(), parts[3], metav1.GetOptions{})
				if err != nil {
					t.Fatalf("%s lists %s, which cannot be read: %v", addr, e.Key, err)
				}
				if _, ok := o.GetAnnotations()["traffic-policy.mesh-intent.io/rel-outage"]; !ok {
					t.Fatalf("%s lists %s, which holds no contribution of it: %v", addr, e.Key, o.GetAnnotations())
				}
				seen[parts[0]] = true
				listed[e.Key] = true
			}
			if len(seen) != 4 {
				t.Fatalf("%s has objects in %v, want all four clusters", addr, seen)
			}
			// And nothing holds its contribution that state does not list.
			for _, c := range append(append([]string(nil), testClusters...), outageCluster) {
				d := edge
				if c != outageCluster {
					d = dyn(t, c)
				}
				for _, gvr := range []schema.GroupVersionResource{gvrVS, gvrDR} {
					list, err := d.Resource(gvr).List(context.Background(), metav1.ListOptions{})
					if err != nil {
						t.Fatal(err)
					}
					for _, it := range list.Items {
						key := fmt.Sprintf("%s/%s/%s/%s", c, it.GetKind(), it.GetNamespace(), it.GetName())
						if _, ok := it.GetAnnotations()["traffic-policy.mesh-intent.io/rel-outage"]; ok && !listed[key] {
							t.Fatalf("%s holds a contribution of %s that state does not list", key, addr)
						}
					}
				}
			}
			continue
		}
		w.requireExactIn(addr, o.Kind, o.Name, testClusters...)
		want := keysIn(relKeys(w.mustInventory(addr)), outageCluster)
		if got := liveOwnedEdge(t, edge, o); strings.Join(got, " ") != strings.Join(want, " ") {
			t.Fatalf("state and cluster %s disagree for %s\nstate:    %v\ncluster:  %v", outageCluster, addr, want, got)
		}
	}
}

// requireNotTainted fails the test if state marks any instance tainted.
func requireNotTainted(t *testing.T, w *relTF) {
	t.Helper()
	s, _ := w.stateFile()
	for _, r := range s.Resources {
		for _, in := range r.Instances {
			if in.Status == "tainted" {
				t.Fatalf("%s.%s is tainted: the next apply would delete and re-create its objects in every cluster", r.Type, r.Name)
			}
		}
	}
}

// One cluster of four is down while traffic is shifted (issue 38): a
// virtual destination with a backend in each of four clusters, and a
// traffic policy that splits its requests across them. Edge stops
// accepting connections. The plan is not empty and warns naming edge.
// The apply of a weight change warns that the virtual destination, which
// does not change, was kept as in state in edge, so the traffic policy
// that depends on it is applied: east, west and onprem route with the new
// weights, edge keeps the old ones, the apply fails naming edge alone,
// nothing is tainted, and state lists exactly what exists. The plan after
// it still warns about edge and is not empty. Once edge answers, one
// apply converges, edge routes with the new weights, and the plan is
// empty.
func TestAccReliability_clusterDownShiftReachesTheOthers(t *testing.T) {
	requireMesh(t)
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	edge, proxy, edgeConn := startOutageCluster(t)
	vd := engine.Owner{Kind: "virtual-destination", Name: "rel-outage"}
	tp := engine.Owner{Kind: "traffic-policy", Name: "rel-outage"}
	addrs := map[string]engine.Owner{"mesh_virtual_destination.user": vd, "mesh_traffic_policy.shift": tp}
	w := newRelTF(t)
	relCleanup(t, w, func() {
		if err := proxy.Heal(); err != nil {
			t.Errorf("healing the proxy of %s: %v", outageCluster, err)
		}
	}, vd, tp)

	before, after := [4]int{40, 30, 20, 10}, [4]int{70, 10, 10, 10}
	w.write(outageConfig(t, edgeConn, before))
	w.apply()
	requireExactEverywhere(t, w, edge, addrs)
	w.planIsEmpty()
	old := routeWeights(t, w, edge)
	if len(old) != 4 || old[outageCluster] != "[10 20 30 40]" {
		t.Fatalf("the traffic policy's VirtualServices %v: want one in each of the four clusters with weights [10 20 30 40]", old)
	}

	// Edge goes down; the weights change.
	proxy.Refuse()
	w.write(outageConfig(t, edgeConn, after))
	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 2 || !strings.Contains(flat, "Warning: Cluster edge could not be read") || strings.Contains(flat, "No changes") {
		t.Fatalf("plan with edge down: exit %d, want 2 with a warning naming edge:\n%s", code, out)
	}

	out = w.applyFails()
	flat = strings.Join(strings.Fields(out), " ")
	if !strings.Contains(flat, `Warning: Cluster edge could not be reached: mesh_virtual_destination "rel-outage" unchanged there, kept as in state`) {
		t.Errorf("the apply does not warn that the virtual destination was kept unchanged in edge:\n%s", out)
	}
	errorBlocks := strings.Split(out, "Error: ")[1:]
	if len(errorBlocks) == 0 {
		t.Fatalf("the apply reports no error, although the weight change did not reach edge:\n%s", out)
	}
	for _, e := range errorBlocks {
		e, _, _ = strings.Cut(e, "Warning: ") // the block ends where the next diagnostic starts
		if !strings.Contains(e, "edge") || strings.Contains(e, `mesh_virtual_destination.user`) {
			t.Errorf("an error is not about the traffic policy in edge:\nError: %s", e)
		}
	}
	got := routeWeights(t, w, edge)
	for _, c := range testClusters {
		if got[c] != "[10 10 10 70]" {
			t.Errorf("%s routes with weights %s, want the new [10 10 10 70]: the change did not reach a healthy cluster", c, got[c])
		}
	}
	if got[outageCluster] != "[10 20 30 40]" {
		t.Errorf("edge routes with weights %s, want the old [10 20 30 40]: it was down", got[outageCluster])
	}
	requireNotTainted(t, w)
	requireExactEverywhere(t, w, edge, addrs)
	if out, code := w.run("plan", "-detailed-exitcode"); code != 2 || !strings.Contains(out, "Cluster edge could not be read") {
		t.Fatalf("plan after the apply, edge still down: exit %d, want 2 naming edge:\n%s", code, out)
	}

	// Edge is back: one apply converges.
	if err := proxy.Heal(); err != nil {
		t.Fatal(err)
	}
	w.apply()
	got = routeWeights(t, w, edge)
	for _, c := range append(append([]string(nil), testClusters...), outageCluster) {
		if got[c] != "[10 10 10 70]" {
			t.Errorf("%s routes with weights %s after edge came back, want [10 10 10 70]", c, got[c])
		}
	}
	requireExactEverywhere(t, w, edge, addrs)
	w.planIsEmpty()
	w.destroy()
	if left := liveOwnedEdge(t, edge, vd); len(left) > 0 {
		t.Fatalf("destroy left %v in edge", left)
	}
	if left := liveOwnedEdge(t, edge, tp); len(left) > 0 {
		t.Fatalf("destroy left %v in edge", left)
	}
}
