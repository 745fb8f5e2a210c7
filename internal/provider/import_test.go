package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// importConfig declares one intent of each kind, as another state wrote it.
const importConfig = `
resource "mesh_cluster" "onprem" {
  name         = "onprem"
  mtls_mode    = "STRICT"
  default_deny = true
}

resource "mesh_virtual_destination" "imp" {
  name     = "rel-imp"
  hostname = "rel-imp.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "west", namespace = "users", service = "user", priority = 1 },
  ]
  clients = { clusters = ["east", "west", "onprem"], namespaces = ["accounts"] }
}

resource "mesh_traffic_policy" "imp" {
  name        = "rel-imp"
  destination = { virtual_destination = mesh_virtual_destination.imp.hostname }
  timeout     = "3s"
  retries     = { attempts = 2, per_try_timeout = "1s", retry_on = ["5xx"] }
}

resource "mesh_access_policy" "imp" {
  name        = "rel-imp"
  destination = { virtual_destination = mesh_virtual_destination.imp.hostname }
  sources     = [{ namespace = "accounts", service_account = "account" }]
  rules       = [{ methods = ["GET"] }]
}
`

const importBlocks = `
import {
  to = mesh_cluster.onprem
  id = "onprem"
}
import {
  to = mesh_virtual_destination.imp
  id = "rel-imp"
}
import {
  to = mesh_traffic_policy.imp
  id = "rel-imp"
}
import {
  to = mesh_access_policy.imp
  id = "rel-imp"
}
`

// liveVersions maps every object of ours in the clusters, but those an
// earlier test left, to its resourceVersion, so that a test can tell that
// an import wrote nothing.
func liveVersions(t *testing.T) map[string]string {
	t.Helper()
	all, err := ownedVersions(t, "", "")
	if err != nil {
		t.Fatal(err)
	}
	foreign := relForeignSet(t)
	for k := range all {
		if foreign[k] {
			delete(all, k)
		}
	}
	return all
}

func requireSameVersions(t *testing.T, what string, before, after map[string]string) {
	t.Helper()
	if fmt.Sprint(before) != fmt.Sprint(after) {
		t.Fatalf("%s changed objects in the clusters:\nbefore: %v\nafter:  %v", what, before, after)
	}
}

// The state that wrote one intent of each kind is lost. A new state with
// the same configuration imports all four by name (import blocks): the plan
// is imports only, the apply writes nothing, and the plan after it is
// empty with state and clusters in agreement. Then that state is lost too,
// and a third one holding nothing but import blocks generates the
// configuration with -generate-config-out; that configuration imports
// with no change either.
func TestAccImport_lostState(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	owners := []engine.Owner{{Kind: "cluster", Name: "onprem"}, {Kind: "virtual-destination", Name: "rel-imp"}, {Kind: "access-policy", Name: "rel-imp"}}
	first, second, third := newRelTF(t), newRelTF(t), newRelTF(t)
	relCleanup(t, third, nil, owners...)

	first.write(providerConfig(t, "") + importConfig)
	first.apply()
	written := liveVersions(t)
	if len(written) < 10 {
		t.Fatalf("the configuration wrote only %v", written)
	}
	loseState(t, first)

	second.write(providerConfig(t, "") + importConfig + importBlocks)
	out, code := second.run("plan")
	if code != 0 || !strings.Contains(out, "Plan: 4 to import, 0 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("importing into the same configuration does not plan four imports and nothing else (exit %d):\n%s", code, out)
	}
	second.apply()
	requireSameVersions(t, "importing", written, liveVersions(t))
	second.planIsEmpty()
	second.requireExact("mesh_cluster.onprem", "cluster", "onprem")
	second.requireExact("mesh_virtual_destination.imp", "virtual-destination", "rel-imp")
	second.requireExact("mesh_access_policy.imp", "access-policy", "rel-imp")
	if got := len(second.mustInventory("mesh_traffic_policy.imp")); got == 0 {
		t.Fatal("the imported traffic policy lists no composed objects")
	}
	requireNoOrphans(t, second)
	loseState(t, second)

	third.write(providerConfig(t, "") + importBlocks)
	out, code = third.run("plan", "-generate-config-out=generated.tf")
	if code != 0 {
		t.Fatalf("plan -generate-config-out failed (exit %d):\n%s", code, out)
	}
	generated, err := os.ReadFile(filepath.Join(third.dir, "generated.tf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`hostname = "rel-imp.global"`, `virtual_destination = "rel-imp.global"`, `service_account = "account"`, `mtls_mode = "STRICT"`} {
		if !strings.Contains(strings.Join(strings.Fields(string(generated)), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("the generated configuration lacks %s:\n%s", want, generated)
		}
	}
	out, code = third.run("plan")
	if code != 0 || !strings.Contains(out, "Plan: 4 to import, 0 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("the generated configuration does not import with no change (exit %d):\n%s\n%s", code, out, generated)
	}
	third.apply()
	requireSameVersions(t, "importing the generated configuration", written, liveVersions(t))
	third.planIsEmpty()
	requireNoOrphans(t, third)
}

// loseState deletes a working directory's state, as a lost state would.
func loseState(t *testing.T, w *relTF) {
	t.Helper()
	for _, f := range []string{"terraform.tfstate", "terraform.tfstate.backup"} {
		if err := os.Remove(filepath.Join(w.dir, f)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
	}
}

// adoptConfig is an access policy whose one AuthorizationPolicy someone
// wrote by hand before.
func adoptConfig(adopt string) string {
	return `
resource "mesh_access_policy" "adopt" {
  name        = "rel-adopt"
  destination = { service = "user", namespace = "users", clusters = ["east"] }
  sources     = [{ namespace = "accounts", service_account = "account" }]
  ` + adopt + `
}
`
}

// Hand-written Istio objects with the names an intent would write are not
// imported by name (the error says what was found and how to adopt), and
// an apply without adopt_existing leaves them untouched; an import with
// the id adopt:<name> and adopt_existing = true takes them over in place
// (same UID), and the plan after it is empty.
func TestAccImport_adoptsPlainObjects(t *testing.T) {
	ensureNamespace(t, "east", "users")
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "access-policy", Name: "rel-adopt"})
	ri := dyn(t, "east").Resource(gvrAuthz).Namespace("users")
	plain := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
		"metadata": map[string]any{"name": "ap-rel-adopt", "namespace": "users", "labels": map[string]any{"team": "accounts"}},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "user"}},
			"action":   "ALLOW",
			"rules":    []any{map[string]any{"from": []any{map[string]any{"source": map[string]any{"principals": []any{"cluster.local/ns/legacy/sa/old"}}}}}},
		},
	}}
	created, err := ri.Create(context.Background(), plain, metav1.CreateOptions{FieldManager: "kubectl-client-side-apply"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ri.Delete(context.Background(), "ap-rel-adopt", metav1.DeleteOptions{}) })

	w.write(providerConfig(t, "") + adoptConfig("") + `
import {
  to = mesh_access_policy.adopt
  id = "rel-adopt"
}
`)
	out, code := w.run("plan")
	flat := strings.Join(strings.Fields(out), " ")
	if code == 0 || !strings.Contains(flat, "Nothing to import") || !strings.Contains(flat, "AuthorizationPolicy users/ap-rel-adopt in east") || !strings.Contains(flat, `"adopt:rel-adopt"`) {
		t.Fatalf("importing hand-written objects by name is not refused with what was found and how to adopt (exit %d):\n%s", code, out)
	}

	w.write(providerConfig(t, "") + adoptConfig(""))
	out = w.applyFails()
	if !regexp.MustCompile(`ap-rel-adopt in cluster east already exists\s+and\s+was\s+not\s+created\s+by\s+terraform-provider-mesh`).MatchString(out) || !strings.Contains(out, "adopt_existing") {
		t.Fatalf("an apply without adopt_existing does not refuse the hand-written object, naming the way out:\n%s", out)
	}
	if o := getObject(t, "east", gvrAuthz, "users", "ap-rel-adopt"); o.GetResourceVersion() != created.GetResourceVersion() {
		t.Fatal("the refused apply changed the hand-written object")
	}

	// The create failed before writing anything (at plan, or in the
	// apply's check): no instance is left in state, tainted or not, so
	// what follows is an import.
	if st := w.inventory("mesh_access_policy.adopt"); st.present {
		t.Fatalf("the refused create left mesh_access_policy.adopt in state (tainted: %v)", st.tainted)
	}
	w.write(providerConfig(t, "") + adoptConfig("adopt_existing = true") + `
import {
  to = mesh_access_policy.adopt
  id = "adopt:rel-adopt"
}
`)
	out, code = w.run("plan")
	if code != 0 || !strings.Contains(out, "Plan: 1 to import, 0 to add, 1 to change, 0 to destroy.") {
		t.Fatalf("importing with adopt: does not plan an import and an in-place change (exit %d):\n%s", code, out)
	}
	w.apply()
	got := getObject(t, "east", gvrAuthz, "users", "ap-rel-adopt")
	if got == nil || got.GetUID() != created.GetUID() {
		t.Fatalf("the adopted object was replaced, not taken over in place: %v", got)
	}
	if got.GetLabels()[engine.LabelOwnerName] != "rel-adopt" {
		t.Fatalf("the adopted object does not carry the owner labels: %v", got.GetLabels())
	}
	principals, _, _ := unstructured.NestedSlice(got.Object, "spec", "rules")
	if strings.Contains(fmt.Sprint(principals), "legacy") {
		t.Fatalf("the adopted object keeps the hand-written rule: %v", principals)
	}
	w.requireExact("mesh_access_policy.adopt", "access-policy", "rel-adopt")
	w.planIsEmpty()
}

// Import searches every registered cluster, so one that does not answer
// is an error naming it, for intents and clusters alike.
func TestAccImport_unreachableClusterIsAnError(t *testing.T) {
	w := newRelTF(t)
	provider := strings.Replace(providerConfig(t, ""), "  clusters = {\n", `  clusters = {
    gone = {
      kubernetes = {
        host     = "https://127.0.0.1:1"
        token    = "x"
        insecure = true
      }
      network = "net-gone"
    }
`, 1)
	for _, tc := range []struct{ resource, id, want string }{
		{"mesh_virtual_destination", "rel-imp", "Import could not search every cluster"},
		{"mesh_access_policy", "rel-imp", "Import could not search every cluster"},
		{"mesh_traffic_policy", "rel-imp", "Import could not search every cluster"},
		{"mesh_cluster", "gone", "Cannot import cluster gone"},
	} {
		w.write(provider + fmt.Sprintf("import {\n  to = %s.x\n  id = %q\n}\n", tc.resource, tc.id))
		_ = os.Remove(filepath.Join(w.dir, "generated.tf")) // absent unless an import succeeded
		out, code := w.run("plan", "-generate-config-out=generated.tf")
		flat := strings.Join(strings.Fields(out), " ")
		if code == 0 || !strings.Contains(flat, tc.want) || !strings.Contains(flat, "gone") {
			t.Errorf("importing %s with a cluster down is not an error naming it (exit %d):\n%s", tc.resource, code, out)
		}
	}
}
