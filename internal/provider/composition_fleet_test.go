package provider

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
)

// Kubernetes limits a composed object must stay within (apimachinery's
// validation: ValidateAnnotations' total, DNS subdomain names, label
// values, and the API server's field manager length).
const (
	maxAnnotationBytes = 256 << 10
	maxNameLength      = 253
	maxLabelValue      = 63
	maxManagerLength   = 128
)

var gvrNamespace = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// fleetClusters are the clusters of the fleet test's own local mesh.
var fleetClusters = []string{"f1", "f2", "f3", "f4", "f5"}

// Five states, each with its roster and the provider left at its defaults
// (all five are workspace "default"), each declare four traffic policies on
// one hostname backed in five real clusters (each with Istio's validation
// webhook): twenty policies compose on the hostname's VirtualService in
// every cluster. After the applies every contribution is on every
// cluster's object, every object stays within every Kubernetes limit, and
// every state's plan is empty.
func TestAccComposition_fleet(t *testing.T) {
	requireMesh(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	fleet, err := localmesh.Start(ctx, localmesh.Options{Clusters: fleetClusters, Dir: t.TempDir(), BinDir: os.Getenv("LOCAL_MESH_BIN")})
	cancel()
	if err != nil {
		t.Fatalf("starting the fleet's local mesh: %v", err)
	}
	t.Cleanup(func() {
		if err := fleet.Stop(); err != nil {
			t.Errorf("stopping the fleet's local mesh: %v", err)
		}
	})
	for _, c := range fleetClusters {
		d, err := dynamic.NewForConfig(fleet.RESTConfig(c))
		if err != nil {
			t.Fatal(err)
		}
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "users"}}}
		if _, err := d.Resource(gvrNamespace).Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating namespace users in %s: %v", c, err)
		}
	}
	provider := fleetProvider(fleet)
	const host = "ledger.fleet.global"
	var backends []string
	for _, c := range fleetClusters {
		backends = append(backends, fmt.Sprintf(`{ cluster = %q, namespace = "users", service = "ledger", priority = %d }`, c, len(backends)))
	}
	states := make([]*relTF, 5)
	var want []string
	for s := range states {
		states[s] = newRelTF(t)
		config := provider
		if s == 0 {
			config += `
resource "mesh_virtual_destination" "ledger" {
  name     = "fleet-ledger"
  hostname = "` + host + `"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [` + strings.Join(backends, ", ") + `]
}
`
		}
		var names []string
		for p := range 4 {
			name := fmt.Sprintf("team%d-caller%d", s, p)
			names = append(names, name)
			want = append(want, name)
			dependsOn := ""
			if s == 0 {
				dependsOn = "depends_on  = [mesh_virtual_destination.ledger]"
			}
			config += fmt.Sprintf(`
resource "mesh_traffic_policy" "p%d" {
  %s
  name        = %q
  destination = { virtual_destination = %q }
  sources     = { namespaces = ["team%d-ns%d"] }
  timeout     = "%ds"
  headers     = { request = { set = { "x-caller" = %q } } }
}
`, p, dependsOn, name, host, s, p, 2+p, name)
		}
		config += `
resource "mesh_workspace" "this" {
  traffic_policies = [` + `"` + strings.Join(names, `", "`) + `"` + `]
}
`
		states[s].write(config)
	}
	t.Cleanup(func() {
		for s := len(states) - 1; s >= 0; s-- {
			if out, code := states[s].run("destroy", "-auto-approve"); code != 0 {
				t.Errorf("cleanup: destroying state %d failed:\n%s", s, out)
			}
		}
	})
	for _, w := range states {
		w.apply()
	}
	sort.Strings(want)
	for _, c := range fleetClusters {
		d, err := dynamic.NewForConfig(fleet.RESTConfig(c))
		if err != nil {
			t.Fatal(err)
		}
		vs, err := d.Resource(gvrVS).Namespace("istio-system").Get(context.Background(), "tp-"+host, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the composed VirtualService in %s: %v", c, err)
		}
		var got []string
		for _, k := range contributionsIn(vs.Object) {
			if name, ok := strings.CutSuffix(k, " (annotations)"); ok {
				got = append(got, name)
			}
		}
		if strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("contributions on the VirtualService in %s: %v, want the 20 policies %v", c, got, want)
		}
		for _, gvr := range allOwnedGVRs {
			list, err := d.Resource(gvr).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range list.Items {
				requireWithinLimits(t, c, &list.Items[i])
			}
		}
	}
	for _, w := range states {
		w.planIsEmpty()
	}
}

// requireWithinLimits fails the test when an object breaks a Kubernetes
// limit that a write must respect.
func requireWithinLimits(t *testing.T, cluster string, o *unstructured.Unstructured) {
	t.Helper()
	where := fmt.Sprintf("%s %s/%s in %s", o.GetKind(), o.GetNamespace(), o.GetName(), cluster)
	total := 0
	for k, v := range o.GetAnnotations() {
		total += len(k) + len(v)
	}
	if total > maxAnnotationBytes {
		t.Fatalf("%s: annotations of %d bytes, over the %d Kubernetes allows", where, total, maxAnnotationBytes)
	}
	if len(o.GetName()) > maxNameLength {
		t.Fatalf("%s: name of %d characters, over %d", where, len(o.GetName()), maxNameLength)
	}
	for k, v := range o.GetLabels() {
		if len(v) > maxLabelValue {
			t.Fatalf("%s: label %s has a value of %d characters, over %d", where, k, len(v), maxLabelValue)
		}
	}
	for _, mf := range o.GetManagedFields() {
		if len(mf.Manager) > maxManagerLength {
			t.Fatalf("%s: field manager %q is over %d characters", where, mf.Manager, maxManagerLength)
		}
	}
}

// fleetProvider registers the fleet's clusters, each its own network.
func fleetProvider(fleet *localmesh.Mesh) string {
	var b strings.Builder
	b.WriteString("provider \"mesh\" {\n  clusters = {\n")
	for i, c := range fleetClusters {
		fmt.Fprintf(&b, `    %s = {
      kubernetes = {
        config_path    = %q
        config_context = %q
      }
      network           = "net-%s"
      trust_domain      = "%s.mesh"
      east_west_gateway = { address = "203.0.113.%d" }
    }
`, c, fleet.Kubeconfig(), c, c, c, 100+i)
	}
	b.WriteString("  }\n}\n")
	return b.String()
}
