package provider

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/terraform"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// testTopology is the registry topology of the local clusters: three
// networks, two public clouds and an on-premises site.
var testTopology = map[string]string{
	"east": `network = "net-east"
      region = "us-east-1"
      zone = "us-east-1a"
      trust_domain = "east.mesh"
      labels = { cloud = "aws", env = "prod" }
      east_west_gateway = { address = "203.0.113.10", port = 15443 }`,
	"west": `network = "net-west"
      region = "us-west-2"
      zone = "us-west-2b"
      trust_domain = "west.mesh"
      labels = { cloud = "gcp", env = "prod" }
      east_west_gateway = { address = "203.0.113.20" }`,
	"onprem": `network = "net-onprem"
      region = "dc1"
      trust_domain = "onprem.mesh"
      labels = { cloud = "onprem", env = "prod" }
      east_west_gateway = { address = "ew.onprem.example.com", port = 15443 }`,
}

// kubeconfigConnection reaches a local cluster through the mesh's kubeconfig.
func kubeconfigConnection(t *testing.T, cluster string) string {
	t.Helper()
	requireMesh(t)
	return fmt.Sprintf("config_path = %q\n      config_context = %q", testMesh.Kubeconfig(), cluster)
}

// providerConfig writes a provider block for the local clusters; extra is
// added inside the block (field_manager, force_conflicts, ...).
func providerConfig(t *testing.T, extra string) string {
	t.Helper()
	return providerConfigWith(t, extra, kubeconfigConnection)
}

func providerConfigWith(t *testing.T, extra string, conn func(*testing.T, string) string) string {
	t.Helper()
	return providerConfigOf(t, testClusters, extra, conn)
}

// providerConfigOf writes a provider block registering some of the local
// clusters.
func providerConfigOf(t *testing.T, clusters []string, extra string, conn func(*testing.T, string) string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("provider \"mesh\" {\n  clusters = {\n")
	for _, c := range clusters {
		fmt.Fprintf(&b, "    %s = {\n      kubernetes = {\n      %s\n      }\n      %s\n    }\n", c, conn(t, c), testTopology[c])
	}
	b.WriteString("  }\n")
	if extra != "" {
		b.WriteString("  " + extra + "\n")
	}
	b.WriteString("}\n")
	return b.String()
}

func requireMesh(t *testing.T) {
	t.Helper()
	if os.Getenv("TF_ACC") == "" {
		t.Skip("acceptance test: runs with TF_ACC=1 against the local mesh (make test)")
	}
	if testMesh == nil {
		t.Fatal("the local mesh is not running: acceptance tests run with TF_ACC=1 through 'make test'")
	}
}

// dyn returns a dynamic client of a local cluster, with admin rights.
func dyn(t *testing.T, cluster string) dynamic.Interface {
	t.Helper()
	requireMesh(t)
	d, err := dynamic.NewForConfig(testMesh.RESTConfig(cluster))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var (
	gvrGateway   = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "gateways"}
	gvrPeerAuth  = schema.GroupVersionResource{Group: "security.istio.io", Version: "v1", Resource: "peerauthentications"}
	gvrAuthz     = schema.GroupVersionResource{Group: "security.istio.io", Version: "v1", Resource: "authorizationpolicies"}
	gvrSE        = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}
	gvrDR        = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "destinationrules"}
	gvrVS        = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}
	gvrConfigMap = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// allOwnedGVRs are the kinds the provider may write, for sweeping checks.
var allOwnedGVRs = []schema.GroupVersionResource{gvrGateway, gvrPeerAuth, gvrAuthz, gvrSE, gvrDR, gvrVS, gvrConfigMap}

// getObject reads one object from a cluster; nil when it does not exist.
func getObject(t *testing.T, cluster string, gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	t.Helper()
	o, err := dyn(t, cluster).Resource(gvr).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		t.Fatalf("reading %s %s/%s in %s: %v", gvr.Resource, ns, name, cluster, err)
	}
	return o
}

// liveOwned lists, in every local cluster, the objects labelled as owned by
// the given intent (or by any intent when kind is empty), as sorted keys
// "cluster/Kind/namespace/name".
func liveOwned(t *testing.T, kind, name string) []string {
	t.Helper()
	return liveOwnedIn(t, testClusters, kind, name)
}

// liveOwnedIn is liveOwned over some clusters only.
func liveOwnedIn(t *testing.T, clusters []string, kind, name string) []string {
	t.Helper()
	sel := engine.LabelManagedBy + "=" + engine.ManagedByValue
	if kind != "" {
		sel += "," + engine.LabelOwnerKind + "=" + kind + "," + engine.LabelOwnerName + "=" + name
	}
	var out []string
	for _, c := range clusters {
		for _, gvr := range allOwnedGVRs {
			list, err := dyn(t, c).Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				t.Fatalf("listing %s in %s: %v", gvr.Resource, c, err)
			}
			for _, o := range list.Items {
				out = append(out, fmt.Sprintf("%s/%s/%s/%s", c, o.GetKind(), o.GetNamespace(), o.GetName()))
			}
		}
	}
	sort.Strings(out)
	return out
}

// stateObjects returns the objects attribute of a resource in state as the
// same sorted keys liveOwned returns.
func stateObjects(s *terraform.State, addr string) ([]string, error) {
	rs, ok := s.RootModule().Resources[addr]
	if !ok {
		return nil, fmt.Errorf("%s is not in state", addr)
	}
	var out []string
	for k, v := range rs.Primary.Attributes {
		key, ok := strings.CutPrefix(k, "objects.")
		if !ok || key == "%" {
			continue
		}
		e, err := engine.EntryFromStateKey(key, v)
		if err != nil {
			return nil, err
		}
		out = append(out, liveKey(e))
	}
	sort.Strings(out)
	return out, nil
}

// checkInventoryMatches asserts that state lists exactly the objects the
// intent owns in the clusters: nothing missing, nothing orphaned.
func checkInventoryMatches(t *testing.T, addr, kind, name string) func(*terraform.State) error {
	return func(s *terraform.State) error {
		want, err := stateObjects(s, addr)
		if err != nil {
			return err
		}
		got := liveOwned(t, kind, name)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			return fmt.Errorf("state and clusters disagree for %s\nstate:    %v\nclusters: %v", addr, want, got)
		}
		return nil
	}
}

// checkNothingOwned is a CheckDestroy: no object carrying our managed-by
// label is left in any cluster.
func checkNothingOwned(t *testing.T) func(*terraform.State) error {
	return func(*terraform.State) error {
		if left := liveOwned(t, "", ""); len(left) > 0 {
			return fmt.Errorf("objects left behind after destroy: %v", left)
		}
		return nil
	}
}

// ensureNamespace creates a namespace in a local cluster if it is missing
// (the local clusters have only the namespaces an API server creates and
// istio-system).
func ensureNamespace(t *testing.T, cluster, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name},
	}}
	_, err := dyn(t, cluster).Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).
		Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating namespace %s in %s: %v", name, cluster, err)
	}
}

// versions maps "cluster/Kind/namespace/name" to resourceVersion for every
// object an intent owns.
type versions map[string]string

func snapshotVersions(t *testing.T, kind, name string, into versions) func(*terraform.State) error {
	return func(*terraform.State) error {
		for k := range into {
			delete(into, k)
		}
		got, err := ownedVersions(t, kind, name)
		for k, v := range got {
			into[k] = v
		}
		return err
	}
}

// ownedVersions lists the objects an intent owns (any intent's when kind
// is empty) in every local cluster, with their resourceVersions.
func ownedVersions(t *testing.T, kind, name string) (versions, error) {
	sel := engine.LabelManagedBy + "=" + engine.ManagedByValue
	if kind != "" {
		sel = engine.LabelOwnerKind + "=" + kind + "," + engine.LabelOwnerName + "=" + name
	}
	out := versions{}
	for _, c := range testClusters {
		for _, gvr := range allOwnedGVRs {
			list, err := dyn(t, c).Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: sel})
			if err != nil {
				return out, err
			}
			for _, o := range list.Items {
				out[fmt.Sprintf("%s/%s/%s/%s", c, o.GetKind(), o.GetNamespace(), o.GetName())] = o.GetResourceVersion()
			}
		}
	}
	return out, nil
}

// changedExactly asserts that between two snapshots exactly the listed
// objects were written, added or removed, and every other kept its
// resourceVersion.
func changedExactly(before, after versions, changed ...string) func(*terraform.State) error {
	return func(*terraform.State) error {
		want := map[string]bool{}
		for _, c := range changed {
			want[c] = true
		}
		keys := map[string]bool{}
		for k := range before {
			keys[k] = true
		}
		for k := range after {
			keys[k] = true
		}
		var problems []string
		for k := range keys {
			b, inB := before[k]
			a, inA := after[k]
			differs := !inB || !inA || a != b
			switch {
			case differs && !want[k]:
				problems = append(problems, "unexpectedly written/added/removed: "+k)
			case !differs && want[k]:
				problems = append(problems, "expected a change to: "+k)
			}
		}
		sort.Strings(problems)
		if len(problems) > 0 {
			return fmt.Errorf("%s\nbefore: %v\nafter:  %v", strings.Join(problems, "\n"), before, after)
		}
		return nil
	}
}

// liveKey is an entry as liveOwned names objects: cluster/Kind/namespace/name.
func liveKey(e engine.Entry) string {
	return fmt.Sprintf("%s/%s/%s/%s", e.Cluster, e.Kind, e.Namespace, e.Name)
}
