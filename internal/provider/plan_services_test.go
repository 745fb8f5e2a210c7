package provider

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

var gvrService = schema.GroupVersionResource{Version: "v1", Resource: "services"}

// createTestService creates a Service in a local cluster, deleted at the
// end of the test.
func createTestService(t *testing.T, cluster, namespace, name string) {
	t.Helper()
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": name, "namespace": namespace},
		"spec":     map[string]any{"ports": []any{map[string]any{"port": int64(8080)}}},
	}}
	ri := dyn(t, cluster).Resource(gvrService).Namespace(namespace)
	if _, err := ri.Create(context.Background(), svc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := ri.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting Service %s/%s in %s: %v", namespace, name, cluster, err)
		}
	})
}

const svcCheckConfig = `
resource "mesh_virtual_destination" "user" {
  name     = "rel-svc"
  hostname = "rel-svc.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "rel-svc" },
    { cluster = "west", namespace = "users", service = "rel-svc", priority = 1 },
  ]
}
`

// A backend Service that does not exist (issue 38) is a plan warning on
// the attribute that names it (backends[1].service), naming the Service
// and the cluster, with a kubectl command that, pasted as printed, lists
// that cluster's Services of the namespace (west has rel-svc-v2, the name
// meant; east has rel-svc). The apply goes on (Istio accepts a backend
// without endpoints). Under the documented ClusterRole, which does not
// grant reading Services, the plan gives no such warning, and its DEBUG
// log says the Service was not checked.
func TestAccPlanChecks_backendServiceMissing(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	createTestService(t, "east", "users", "rel-svc")
	createTestService(t, "west", "users", "rel-svc-v2")
	owner := engine.Owner{Kind: "virtual-destination", Name: "rel-svc"}
	w := newRelTF(t)
	relCleanup(t, w, nil, owner)
	w.write(providerConfig(t, "") + svcCheckConfig)

	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 2 {
		t.Fatalf("plan: exit %d, want 2:\n%s", code, out)
	}
	for _, want := range []string{"Warning: Backend Service missing in cluster west", "Attribute backends[1].service: Service users/rel-svc does not exist in cluster west"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	if strings.Contains(flat, "Backend Service missing in cluster east") {
		t.Errorf("the plan warns about east, whose Service exists:\n%s", out)
	}
	var hint string
	for _, cmd := range printedHints(out) {
		if strings.Contains(cmd, " get services ") {
			hint = cmd
		}
	}
	if hint == "" || !strings.Contains(hint, "--context west ") {
		t.Fatalf("the warning gives no kubectl command for west (%q):\n%s", hint, out)
	}
	// Pasted in a shell with no kubeconfig of its own, it lists west's
	// Services of users.
	cmd := exec.Command("sh", "-c", hint)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+t.TempDir())
	listed, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(listed), "rel-svc-v2") || strings.Contains(strings.ReplaceAll(string(listed), "rel-svc-v2", ""), "rel-svc") {
		t.Fatalf("the hint %q, pasted: %v, want west's rel-svc-v2 alone:\n%s", hint, err, listed)
	}

	w.apply()
	w.requireExact("mesh_virtual_destination.user", owner.Kind, owner.Name)

	// The documented ClusterRole: Services are not read, nothing is said
	// at WARN, the DEBUG log says why.
	role := relExampleRole(t)
	relInstallRole(t, role)
	w.write(providerConfigWith(t, "", relTokenConnection(t, "provider", role.Name)) + svcCheckConfig)
	logPath := filepath.Join(t.TempDir(), "plan.log")
	w.logPath, w.logLevel = logPath, "DEBUG"
	out, code = w.run("plan", "-detailed-exitcode")
	w.logPath, w.logLevel = "", ""
	if code == 1 {
		t.Fatalf("plan under the documented ClusterRole failed:\n%s", out)
	}
	if strings.Contains(out, "Backend Service missing") {
		t.Fatalf("the plan warns about a Service it may not read:\n%s", out)
	}
	logs, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{"east", "west"} {
		if !relLogHas(logs, "engine: backend Service not checked: the provider may not read Services", "cluster="+c, "service=users/rel-svc") {
			t.Errorf("the DEBUG log does not say that users/rel-svc was not checked in %s", c)
		}
	}
}

// Each backend's Service is checked on its own attribute
// (backends[i].service); a backend with a value not known yet is not.
func TestBackendServicesNameTheirAttribute(t *testing.T) {
	m := virtualDestinationModel{Backends: []vdBackendModel{
		{Cluster: "east", Namespace: "users", Service: "user"},
		{Cluster: "west", Namespace: translate.Unknown("backends[1].namespace"), Service: "user"},
		{Cluster: "onprem", Namespace: "ledger", Service: "ledger"},
	}}
	var got []string
	for _, s := range m.backendServices() {
		got = append(got, s.Ref.Cluster+" "+s.Ref.String()+" at "+s.At.String())
	}
	want := "east users/user at backends[0].service; onprem ledger/ledger at backends[2].service"
	if strings.Join(got, "; ") != want {
		t.Fatalf("backendServices = %q, want %q", strings.Join(got, "; "), want)
	}
}

// A traffic or access policy whose destination is a Service (not a
// virtual destination) checks that Service in every cluster it writes an
// object to, as a virtual destination checks its backends: one missing
// is a warning on destination.service naming the Service and the cluster,
// with the kubectl command for that cluster.
func TestPolicyDestinationServiceChecked(t *testing.T) {
	ctx := context.Background()
	service, namespace := "user", "users"
	tp := trafficPolicyModel{Name: "user-timeout", Destination: tpDestinationModel{Service: &service, Namespace: &namespace}}
	ap := accessPolicyModel{Name: "to-user", Destination: apDestinationModel{Service: &service, Namespace: &namespace}}
	for name, check := range map[string]*serviceCheck{"traffic policy": tp.destinationServiceCheck(), "access policy": ap.destinationServiceCheck()} {
		if check == nil || check.Ref.String() != "users/user" || check.At.String() != "destination.service" {
			t.Fatalf("the %s's destination Service to check: %+v, want users/user at destination.service", name, check)
		}
	}
	f := newFakeClusterSet(t, "east", "west")
	svc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "spec": map[string]any{}}}
	svc.SetNamespace("users")
	svc.SetName("user")
	if err := f["east"].Tracker().Create(gvrService, svc, "users"); err != nil {
		t.Fatal(err)
	}
	data := recordsData(f)
	desired := []engine.Desired{
		{Entry: engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "users", Name: "tp-user"}},
		{Entry: engine.Entry{Cluster: "west", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "users", Name: "tp-user"}},
	}
	diags := checkServices(ctx, data, intentSpec{Owner: engine.Owner{Kind: "traffic-policy", Name: "user-timeout"}, DestinationService: tp.destinationServiceCheck()}, desired)
	if len(diags) != 1 || diags.HasError() {
		t.Fatalf("want one warning, for west, got %q", diagText(diags))
	}
	d := diags[0]
	withPath, _ := d.(interface{ Path() path.Path })
	if d.Summary() != "Backend Service missing in cluster west" || !strings.Contains(d.Detail(), "Attribute destination.service: Service users/user does not exist in cluster west") ||
		!strings.Contains(d.Detail(), "--context west get services --namespace users") || withPath == nil || withPath.Path().String() != "destination" {
		t.Fatalf("the warning: %s: %s (on %v)", d.Summary(), d.Detail(), withPath)
	}
}
