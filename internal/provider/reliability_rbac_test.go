package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
)

// relExampleRole reads the ClusterRole of examples/rbac/clusterrole.yaml,
// with the Rules of its Role in the records namespace appended as the
// Role (relRecordsRole).
func relExampleRole(t *testing.T) *rbacv1.ClusterRole {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "rbac", "clusterrole.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cluster *rbacv1.ClusterRole
	var records *rbacv1.Role
	for _, doc := range regexp.MustCompile(`(?m)^---\s*$`).Split(string(raw), -1) {
		var role rbacv1.ClusterRole
		if err := yaml.Unmarshal([]byte(doc), &role); err != nil {
			t.Fatal(err)
		}
		switch role.Kind {
		case "ClusterRole":
			cluster = &role
		case "Role":
			var r rbacv1.Role
			if err := yaml.UnmarshalStrict([]byte(doc), &r); err != nil {
				t.Fatal(err)
			}
			records = &r
		}
	}
	if cluster == nil || records == nil || records.Namespace != localmesh.RecordsNamespace || records.Name != cluster.Name {
		t.Fatalf("examples/rbac/clusterrole.yaml needs a ClusterRole and a Role of the same name in %s", localmesh.RecordsNamespace)
	}
	relRecordsRoles[cluster.Name] = records.Rules
	return cluster
}

// relRecordsRoles holds, by name, the rules of the Role in the records
// namespace that goes with a ClusterRole of that name.
var relRecordsRoles = map[string][]rbacv1.PolicyRule{}

// relInstallRole creates or replaces a ClusterRole in every local cluster,
// and the Role of the same name in the records namespace that goes with it.
func relInstallRole(t *testing.T, role *rbacv1.ClusterRole) {
	t.Helper()
	for _, c := range testClusters {
		cs := kubernetes.NewForConfigOrDie(testMesh.RESTConfig(c))
		if rules, ok := relRecordsRoles[role.Name]; ok {
			r := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: localmesh.RecordsNamespace, Name: role.Name}, Rules: rules}
			_, err := cs.RbacV1().Roles(r.Namespace).Create(context.Background(), r, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				_, err = cs.RbacV1().Roles(r.Namespace).Update(context.Background(), r, metav1.UpdateOptions{})
			}
			if err != nil {
				t.Fatalf("installing Role %s in %s: %v", role.Name, c, err)
			}
		}
		r := role.DeepCopy()
		r.ResourceVersion = ""
		_, err := cs.RbacV1().ClusterRoles().Create(context.Background(), r, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			old, gerr := cs.RbacV1().ClusterRoles().Get(context.Background(), r.Name, metav1.GetOptions{})
			if gerr != nil {
				t.Fatal(gerr)
			}
			r.ResourceVersion = old.ResourceVersion
			_, err = cs.RbacV1().ClusterRoles().Update(context.Background(), r, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Fatalf("installing ClusterRole %s in %s: %v", role.Name, c, err)
		}
	}
}

// relTokenConnection returns host + token + CA connections for a service
// account bound to clusterRole in every cluster.
func relTokenConnection(t *testing.T, account, clusterRole string) func(*testing.T, string) string {
	t.Helper()
	tokens := map[string]string{}
	for _, c := range testClusters {
		tok, err := testMesh.ServiceAccountToken(context.Background(), c, "mesh-rbac", account, clusterRole)
		if err != nil {
			t.Fatal(err)
		}
		tokens[c] = tok
	}
	return func(_ *testing.T, c string) string {
		return fmt.Sprintf("host                   = %q\n      token                  = %q\n      cluster_ca_certificate = %q",
			testMesh.Server(c), tokens[c], testMesh.CA(c))
	}
}

// relWithoutVerb is role (and its records Role) without one verb, under
// another name.
func relWithoutVerb(role *rbacv1.ClusterRole, verb string) *rbacv1.ClusterRole {
	r := role.DeepCopy()
	r.Name = role.Name + "-without-" + verb
	for i := range r.Rules {
		r.Rules[i].Verbs = slices.DeleteFunc(r.Rules[i].Verbs, func(v string) bool { return v == verb })
	}
	if rules, ok := relRecordsRoles[role.Name]; ok {
		var out []rbacv1.PolicyRule
		for _, rule := range rules {
			rule = *rule.DeepCopy()
			rule.Verbs = slices.DeleteFunc(rule.Verbs, func(v string) bool { return v == verb })
			out = append(out, rule)
		}
		relRecordsRoles[r.Name] = out
	}
	return r
}

var relRBACConfig = relInterruptConfig("") + `
data "mesh_clusters" "all" {}
`

// The ClusterRole of examples/rbac is enough: a service account bound to
// exactly it (host + token + CA) applies every kind of intent across three
// clusters, refreshes with empty plans, restores a field edited out of
// band, prunes, imports and destroys. Every resource the role names is
// written, so none is there for nothing.
func TestAccReliability_leastPrivilegeSuffices(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	role := relExampleRole(t)
	relInstallRole(t, role)
	w := newRelTF(t)
	relCleanup(t, w, nil, relInterruptOwners...)
	provider := providerConfigWith(t, "", relTokenConnection(t, "provider", role.Name))
	w.write(provider + relRBACConfig)

	w.apply()
	requireNoOrphans(t, w)
	w.requireExact("mesh_virtual_destination.int", "virtual-destination", "rel-int")
	w.requireExact("mesh_access_policy.int", "access-policy", "rel-int")
	for _, c := range testClusters {
		w.requireExact("mesh_cluster."+c, "cluster", c)
	}
	// Every resource the roles grant was written (ConfigMaps: the records,
	// in the records namespace).
	for _, rule := range append(append([]rbacv1.PolicyRule(nil), role.Rules...), relRecordsRoles[role.Name]...) {
		for _, group := range rule.APIGroups {
			for _, res := range rule.Resources {
				gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: res}
				found := false
				for _, c := range testClusters {
					list, err := dyn(t, c).Resource(gvr).List(context.Background(), metav1.ListOptions{LabelSelector: "app.kubernetes.io/managed-by=terraform-provider-mesh"})
					if err != nil {
						t.Fatalf("listing %s in %s: %v", gvr, c, err)
					}
					found = found || len(list.Items) > 0
				}
				if !found {
					t.Errorf("the ClusterRole grants %s, which no intent wrote: remove it", gvr.GroupResource())
				}
			}
		}
	}
	w.refreshOnly()
	w.planIsEmpty()

	// A record planted outside the records namespace (by anyone who may
	// create a ConfigMap in "users") that claims rel-int.global has its
	// backends elsewhere changes nothing: a change of the access policy
	// alone re-plans it from the records, and it keeps the real backends.
	planted := relPlantRecord(t, "users", "rel-int.global")
	w.write(provider + strings.Replace(relRBACConfig, `rules       = [{ methods = ["GET"] }]`, `rules       = [{ methods = ["GET", "POST"] }]`, 1))
	w.apply()
	if backends := relStateAttribute(t, w, "mesh_access_policy.int", "destination_backends"); strings.Contains(backends, "planted") || !strings.Contains(backends, "users") {
		t.Fatalf("the access policy's backends come from the planted record: %s", backends)
	}
	w.requireExact("mesh_access_policy.int", "access-policy", "rel-int")
	relForceDelete(t, planted)

	// Drift: a kubectl-edit-style change of a field we own is restored.
	patchAs(t, "east", "mesh-cross-network", "kubectl-edit", types.MergePatchType,
		`{"spec":{"servers":[{"port":{"number":15443,"name":"tls","protocol":"TLS"},"tls":{"mode":"AUTO_PASSTHROUGH"},"hosts":["*"]}]}}`, false)
	if out, code := w.run("plan", "-detailed-exitcode"); code != 2 {
		t.Fatalf("the edited Gateway is not shown as drift (exit %d):\n%s", code, out)
	}
	w.apply()
	if err := checkGateway(t, "east", "*.global")(nil); err != nil {
		t.Fatalf("drift not restored: %v", err)
	}

	// Prune: onprem stops being a client of the virtual destination.
	w.write(provider + strings.Replace(relRBACConfig, `clients = { clusters = ["east", "west", "onprem"] }`, `clients = { clusters = ["east", "west"] }`, 1))
	w.apply()
	w.requireExact("mesh_virtual_destination.int", "virtual-destination", "rel-int")
	if getObject(t, "onprem", gvrSE, "istio-system", "vd-rel-int") != nil {
		t.Fatal("onprem's client ServiceEntry was not pruned")
	}

	// Import reads the intent back from the cluster.
	if out, code := w.run("state", "rm", "mesh_cluster.west"); code != 0 {
		t.Fatalf("state rm: %s", out)
	}
	if out, code := w.run("import", "mesh_cluster.west", "west"); code != 0 {
		t.Fatalf("import with the least-privileged identity failed:\n%s", out)
	}
	w.requireExact("mesh_cluster.west", "cluster", "west")
	w.planIsEmpty()

	w.destroy()
	if left := relAllOwned(t); len(left) > 0 {
		t.Fatalf("left after destroy: %v", left)
	}
}

// And every verb of the ClusterRole is needed: without it one of apply,
// refresh or destroy fails, with an error (or, for refresh, a warning)
// naming the cluster, the verb and the resource. The role names no verb
// that the provider does not use.
func TestAccReliability_leastPrivilegeEveryVerbIsNeeded(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	role := relExampleRole(t)
	relInstallRole(t, role)
	full := relTokenConnection(t, "provider", role.Name)
	var verbs []string
	for _, r := range append(append([]rbacv1.PolicyRule(nil), role.Rules...), relRecordsRoles[role.Name]...) {
		for _, v := range r.Verbs {
			if !slices.Contains(verbs, v) {
				verbs = append(verbs, v)
			}
		}
	}
	without := map[string]func(*testing.T, string) string{}
	for _, v := range verbs {
		r := relWithoutVerb(role, v)
		relInstallRole(t, r)
		without[v] = relTokenConnection(t, "without-"+v, r.Name)
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, relInterruptOwners...)
	config := func(conn func(*testing.T, string) string) {
		w.write(providerConfigWith(t, "", conn) + relInterruptConfig(""))
	}
	denied := func(out, verb string) {
		t.Helper()
		for _, m := range relForbiddenErrors(out, "without-"+verb) {
			if m.verb == verb {
				t.Logf("without %q: %s in cluster %s: cannot %s resource %q", verb, m.object, m.cluster, m.verb, m.resource)
				requireNoOrphans(t, w)
				return
			}
		}
		t.Fatalf("without %q: no error naming the cluster, the verb and the resource:\n%s", verb, out)
	}
	covered := map[string]bool{}

	// Writing needs get (is the name someone else's?), create and patch
	// (server-side apply, and composed objects).
	for _, v := range []string{"get", "patch", "create"} {
		if without[v] == nil {
			continue
		}
		config(without[v])
		denied(w.applyFails(), v)
		covered[v] = true
	}
	config(full)
	w.apply()
	// Refreshing needs list.
	if without["list"] != nil {
		config(without["list"])
		out, code := w.run("plan")
		if code != 0 {
			t.Fatalf("plan without list: exit %d:\n%s", code, out)
		}
		if !regexp.MustCompile(`Warning: Reading owned objects in cluster (east|west|onprem)\s+(?:with [^\n]*\n[^\n]*\n[^\n]*\n\s*)?Cluster \w+ denied the request \(403\s+Forbidden\):[\s\S]*cannot\s+list\s+resource`).MatchString(out) {
			t.Fatalf("without \"list\": the refresh does not warn naming the cluster and resource:\n%s", out)
		}
		covered["list"] = true
	}
	// Destroying needs delete.
	if without["delete"] != nil {
		config(without["delete"])
		out, code := w.run("destroy", "-auto-approve")
		if code == 0 {
			t.Fatalf("destroy without delete succeeded:\n%s", out)
		}
		denied(out, "delete")
		covered["delete"] = true
	}
	config(full)
	w.destroy()
	for _, v := range verbs {
		if !covered[v] {
			t.Errorf("the ClusterRole grants %q, which no step needed: remove it from examples/rbac/clusterrole.yaml", v)
		}
	}
	if left := relAllOwned(t); len(left) > 0 {
		t.Fatalf("left after destroy: %v", left)
	}
}

// A token bound to a role without the ClusterRole (Kubernetes' "view", or
// one that may only read namespaces) fails with a forbidden error that
// names the cluster and the resource, and writes nothing.
func TestAccReliability_forbiddenNamesClusterAndResource(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	relInstallRole(t, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "mesh-rbac-namespaces-only"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"namespaces"}, Verbs: []string{"get"}}},
	})
	for _, tc := range []struct{ account, role string }{{"viewer", "view"}, {"namespaces-only", "mesh-rbac-namespaces-only"}} {
		t.Run(tc.role, func(t *testing.T) {
			w := newRelTF(t)
			relCleanup(t, w, nil, relInterruptOwners...)
			w.write(providerConfigWith(t, "", relTokenConnection(t, tc.account, tc.role)) + relInterruptConfig(""))
			out := w.applyFails()
			errs := relForbiddenErrors(out, tc.account)
			if len(errs) == 0 {
				t.Fatalf("no forbidden error naming the cluster, the identity, the verb and the resource:\n%s", out)
			}
			clusters := map[string]bool{}
			for _, m := range errs {
				clusters[m.cluster] = true
			}
			if len(clusters) != len(testClusters) {
				t.Errorf("forbidden errors name clusters %v, want all of %v", clusters, testClusters)
			}
			if n := strings.Count(out, "Error: "); n != len(errs) {
				t.Errorf("%d errors, of which %d are forbidden errors naming cluster and resource:\n%s", n, len(errs), out)
			}
			t.Logf("%d forbidden errors, e.g. %s in cluster %s: cannot %s resource %q", len(errs), errs[0].object, errs[0].cluster, errs[0].verb, errs[0].resource)
			if !strings.Contains(out, "Grant the provider's identity the ClusterRole") {
				t.Errorf("the forbidden error does not say how to fix it:\n%s", out)
			}
			if left := relAllOwned(t); len(left) > 0 {
				t.Fatalf("a forbidden apply wrote %v", left)
			}
			requireNoOrphans(t, w)
		})
	}
}

// relForbidden is one forbidden error in Terraform's output.
type relForbidden struct{ object, cluster, verb, resource string }

// relForbiddenErrors finds the errors that name the object and cluster
// (summary), and the cluster, service account, verb and resource
// (detail), consistently.
func relForbiddenErrors(out, account string) []relForbidden {
	re := regexp.MustCompile(`Error: \w+ (\S+ \S+) in cluster (east|west|onprem)\s+(?:with [^\n]*\n[^\n]*\n[^\n]*\n\s*)?` +
		`Cluster (east|west|onprem) denied the request \(403\s+Forbidden\):\s+\S+\s+"[^"]*"\s+is\s+forbidden:\s+` +
		`User\s+"system:serviceaccount:mesh-rbac:` + regexp.QuoteMeta(account) + `"\s+cannot\s+(\w+)\s+resource\s+"(\w+)"`)
	var errs []relForbidden
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		if m[2] == m[3] {
			errs = append(errs, relForbidden{object: m[1], cluster: m[2], verb: m[4], resource: m[5]})
		}
	}
	return errs
}

// relPlantRecord creates, in namespace of every cluster, a ConfigMap that
// looks like the record of the virtual destination hostname but sends it
// to backends in namespace "planted". It returns the keys to delete.
func relPlantRecord(t *testing.T, namespace, hostname string) []string {
	t.Helper()
	intent := fmt.Sprintf(`{"name":"planted","hostname":%q,"ports":[{"number":8080,"protocol":"HTTP"}],"backends":[{"cluster":"west","namespace":"planted","service":"evil","priority":0}]}`, hostname)
	var keys []string
	for _, c := range testClusters {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "vd-planted", "namespace": namespace, "labels": map[string]any{
				engine.LabelManagedBy: engine.ManagedByValue, engine.LabelOwnerKind: "virtual-destination", engine.LabelOwnerName: "planted"}},
			"data": map[string]any{"hostname": hostname, "intent": intent},
		}}
		if _, err := dyn(t, c).Resource(gvrConfigMap).Namespace(namespace).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatalf("planting a record in %s: %v", c, err)
		}
		keys = append(keys, fmt.Sprintf("%s/ConfigMap/%s/vd-planted", c, namespace))
	}
	return keys
}

// relStateAttribute returns an attribute of a managed resource in the
// state file, as JSON.
func relStateAttribute(t *testing.T, w *relTF, addr, attr string) string {
	t.Helper()
	s, _ := w.stateFile()
	typ, name, _ := strings.Cut(addr, ".")
	for _, r := range s.Resources {
		if r.Mode == "managed" && r.Type == typ && r.Name == name && len(r.Instances) > 0 {
			raw, err := json.Marshal(r.Instances[0].Attributes[attr])
			if err != nil {
				t.Fatal(err)
			}
			return string(raw)
		}
	}
	t.Fatalf("%s is not in state", addr)
	return ""
}
