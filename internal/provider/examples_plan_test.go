package provider

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Every example is planned against the local mesh: its configuration as
// published, with one change only, the `kubernetes` connection of each
// registered cluster, which becomes the local mesh's kubeconfig (whose
// contexts are named east, west and onprem, like the examples' clusters).
// The resource and data source examples have no provider block of their
// own: they are planned against examples/provider/provider.tf, the
// registry the documentation shows, so every cluster and label they name
// must be declared there. A plan must succeed and propose changes.

// examplePlan says how one example directory is planned.
type examplePlan struct {
	// registry: plan with examples/provider/provider.tf beside the files.
	registry bool
	// vars is written to terraform.tfvars; KUBECONFIG stands for the local
	// mesh's kubeconfig.
	vars string
	// override is written to zz_override.tf (Terraform's override files):
	// what the plan cannot reach offline, such as another workspace's
	// remote state.
	override string
	// after: the plan runs while this example directory is applied (its
	// import blocks left out) in its own state, because the example reads
	// what it writes (a record, an object to import).
	after []string
	// extra is written to zz_extra.tf: a resource that uses a provider
	// block that is an example of its own.
	extra string
	// prepare runs before the plan, with the local mesh: objects a guide
	// says already exist.
	prepare func(t *testing.T)
	// want is a line the plan must print.
	want string
	// warns are the warnings the example shows on purpose (by summary);
	// any other warning fails the test.
	warns []string
}

// examplePlans holds every example directory that has .tf files;
// TestExamplesArePlanned fails when one is missing.
var examplePlans = map[string]examplePlan{
	"data-sources/mesh_clusters":            {registry: true, want: "Changes to Outputs"},
	"data-sources/mesh_rendered_objects":    {registry: true, want: "Plan: 1 to add"},
	"data-sources/mesh_virtual_destination": {registry: true, after: []string{"resources/mesh_virtual_destination"}, want: "Plan: 1 to add"},
	"demo":                                  {vars: "kubeconfig = \"KUBECONFIG\"\n", prepare: exampleNamespaces, want: "Plan: 9 to add"},
	"guides/environments": {vars: `clusters = {
  east = { endpoint = "", ca_certificate = "", token = "", network = "net-east", region = "us-east-1", gateway_address = "203.0.113.10" }
  west = { endpoint = "", ca_certificate = "", token = "", network = "net-west", region = "us-west-2", gateway_address = "203.0.113.20" }
}
`, want: "Plan: 3 to add"},
	// The guide's registry does not exist: the plan says it could not read
	// onprem's records from the artifact, and plans anyway.
	"guides/clusters-unreachable": {vars: "registry_token = \"t\"\n", want: "Plan: 1 to add", warns: []string{"Hostname not checked in every cluster"}},
	"guides/cluster-outage":       {prepare: exampleNamespaces, want: "Plan: 2 to add"},
	"guides/getting-started":      {want: "to add"},
	"guides/hcp-terraform": {
		vars: "tfc_kubernetes_dynamic_credentials = { default = { token_path = \"\" }, aliases = {} }\n",
		// The platform workspace's outputs, from a local state file
		// (written by the test) instead of HCP Terraform.
		override: `data "terraform_remote_state" "platform" {
  backend = "local"
  config  = { path = "platform.tfstate" }
}
`,
		want: "Plan: 1 to add",
	},
	"functions/routing_summary": {registry: true, prepare: exampleNamespaces, want: "failover mesh_virtual_destination \"user\":"},
	"guides/migrating":          {prepare: migratingObject, want: "1 to import", warns: []string{"Objects to adopt"}},
	"guides/migrating-routes": {prepare: migratingRoutes, want: "2 to import", warns: []string{
		"Adoption decided by the plan", `Hand-written Istio objects adopted by mesh_virtual_destination "user"`,
		`Hand-written Istio objects adopted by mesh_traffic_policy "user-timeout"`, `Hand-written Istio objects on the host of mesh_virtual_destination "user"`, `Hand-written Istio objects on the host of mesh_traffic_policy "user-timeout"`}},
	"guides/team-modules/accounts": {after: []string{"guides/team-modules/payments"}, want: "to add", warns: []string{"Traffic also shaped by another workspace"}},
	"guides/team-modules/payments": {want: "to add"},
	"guides/prerequisites":         {want: "Plan: 2 to add"},
	"guides/reviewing-plans":       {prepare: exampleNamespaces, want: "Plan: 1 to add"},
	"guides/upgrading":             {want: "Plan: 1 to add"},
	"guides/troubleshooting":       {want: "No changes"},
	"modules/team": {registry: true, vars: `team = "payments"
service = "ledger"
namespace = "payments"
clusters = ["east", "onprem"]
callers = [{ namespace = "accounts", service_account = "account" }]
`, want: "Plan: 3 to add"},
	"provider": {vars: "onprem_token = \"\"\n", extra: `resource "mesh_cluster" "east" {
  name = "east"
}
`, want: "Plan: 1 to add"},
	"resources/mesh_access_policy":       {registry: true, want: "Plan: 2 to add"},
	"resources/mesh_cluster":             {registry: true, want: "Plan: 1 to add"},
	"resources/mesh_traffic_policy":      {registry: true, want: "Plan: 4 to add"},
	"resources/mesh_virtual_destination": {registry: true, after: []string{"resources/mesh_virtual_destination"}, want: "1 to import"},
	"resources/mesh_workspace":           {registry: true, want: "Plan: 4 to add"},
}

// examplesCoveredElsewhere are the files under examples/ that are no
// Terraform configuration, and the test that runs each.
var examplesCoveredElsewhere = map[string]string{
	"demo/workloads.yaml":   "TestAccDemo_istioAnalyzeClean applies it next to the demo",
	"rbac/clusterrole.yaml": "TestAccReliability_* (reliability_rbac_test.go) run the provider with exactly these rights",
	"resources/mesh_virtual_destination/import-by-identity.hcl":   identityExampleCoverage,
	"resources/mesh_traffic_policy/import-by-identity.hcl":        identityExampleCoverage,
	"resources/mesh_access_policy/import-by-identity.hcl":         identityExampleCoverage,
	"resources/mesh_cluster/import-by-identity.hcl":               identityExampleCoverage,
	"resources/mesh_workspace/import-by-identity.hcl":             identityExampleCoverage,
	"list-resources/mesh_virtual_destination/example.tfquery.hcl": listExampleCoverage,
	"list-resources/mesh_traffic_policy/example.tfquery.hcl":      listExampleCoverage,
	"list-resources/mesh_access_policy/example.tfquery.hcl":       listExampleCoverage,
}

// exampleFiles lists every file under examples/, relative to it.
func exampleFiles(t *testing.T) []string {
	t.Helper()
	root := filepath.Join("..", "..", "examples")
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

var importCommand = regexp.MustCompile(`(?m)^terraform import (\S+) (\S+)$`)

// Every file under examples/ is planned by TestAccExamplesPlan (its .tf
// files), checked here (import.sh: the address it imports is a resource
// its directory declares) or run by the test examplesCoveredElsewhere
// names. A new example directory or file fails this test until it is
// covered.
func TestExamplesArePlanned(t *testing.T) {
	planned := map[string]bool{}
	for _, f := range exampleFiles(t) {
		dir, base := filepath.ToSlash(filepath.Dir(f)), filepath.Base(f)
		switch {
		case strings.HasSuffix(base, ".tf"):
			if _, ok := examplePlans[dir]; !ok {
				t.Errorf("examples/%s is planned by no test: add %q to examplePlans", f, dir)
			}
			planned[dir] = true
		case base == "import.sh":
			b, err := os.ReadFile(filepath.Join("..", "..", "examples", f))
			if err != nil {
				t.Fatal(err)
			}
			cmds := importCommand.FindAllStringSubmatch(string(b), -1)
			if len(cmds) == 0 {
				t.Errorf("examples/%s has no terraform import command", f)
			}
			for _, c := range cmds {
				typ, name, _ := strings.Cut(c[1], ".")
				tf, err := os.ReadFile(filepath.Join("..", "..", "examples", dir, "resource.tf"))
				if err != nil {
					t.Fatalf("examples/%s: %v", f, err)
				}
				if !strings.Contains(string(tf), fmt.Sprintf("resource %q %q", typ, name)) {
					t.Errorf("examples/%s imports %s, which examples/%s/resource.tf does not declare", f, c[1], dir)
				}
			}
		default:
			if _, ok := examplesCoveredElsewhere[f]; !ok {
				t.Errorf("examples/%s is run by no test: plan it, or name the test that runs it in examplesCoveredElsewhere", f)
			}
		}
	}
	for dir := range examplePlans {
		if !planned[dir] {
			t.Errorf("examplePlans lists %s, which has no .tf file under examples/", dir)
		}
	}
	for f := range examplesCoveredElsewhere {
		if _, err := os.Stat(filepath.Join("..", "..", "examples", f)); err != nil {
			t.Errorf("examplesCoveredElsewhere lists %s: %v", f, err)
		}
	}
}

// kubernetesConnection matches the start of a cluster's connection.
var kubernetesConnection = regexp.MustCompile(`kubernetes\s*=\s*\{`)

// localConnections replaces every `kubernetes = { ... }` of a
// configuration with the local mesh's kubeconfig.
func localConnections(t *testing.T, src string) string {
	t.Helper()
	var b strings.Builder
	for {
		loc := kubernetesConnection.FindStringIndex(src)
		if loc == nil {
			b.WriteString(src)
			return b.String()
		}
		depth, end := 0, -1
		for i := loc[1] - 1; i < len(src) && end < 0; i++ {
			switch src[i] {
			case '{':
				depth++
			case '}':
				depth--
				if depth == 0 {
					end = i + 1
				}
			}
		}
		if end < 0 {
			t.Fatalf("unbalanced kubernetes connection in:\n%s", src)
		}
		fmt.Fprintf(&b, "%skubernetes = { config_path = %q }", src[:loc[0]], testMesh.Kubeconfig())
		src = src[end:]
	}
}

// exampleWorkdir copies one example directory into a new working
// directory, as examplePlans says, and returns it, with `terraform get`
// run when the example uses modules.
func exampleWorkdir(t *testing.T, dir string) *relTF {
	t.Helper()
	p := examplePlans[dir]
	w := newRelTF(t)
	// Modules are referred to by relative paths: the copy keeps the tree.
	root := filepath.Dir(w.dir)
	if err := os.CopyFS(filepath.Join(root, "examples"), os.DirFS(filepath.Join("..", "..", "examples"))); err != nil {
		t.Fatal(err)
	}
	w.dir = filepath.Join(root, "examples", filepath.FromSlash(dir))
	files, err := filepath.Glob(filepath.Join(w.dir, "*.tf"))
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
		if err := os.WriteFile(f, []byte(localConnections(t, string(b))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	extra := map[string]string{"terraform.tfvars": strings.ReplaceAll(p.vars, "KUBECONFIG", testMesh.Kubeconfig()), "zz_override.tf": p.override, "zz_extra.tf": p.extra}
	if p.registry {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "provider", "provider.tf"))
		if err != nil {
			t.Fatal(err)
		}
		extra["zz_registry.tf"] = localConnections(t, string(b))
		if !strings.Contains(all.String(), "onprem_token") {
			extra["terraform.tfvars"] += "onprem_token = \"\"\n"
		}
	}
	if !strings.Contains(all.String(), "required_providers") {
		extra["zz_versions.tf"] = relRequiredProviders
	}
	if strings.Contains(all.String(), "terraform_remote_state") {
		extra["platform.tfstate"] = platformState
	}
	for name, content := range extra {
		if content == "" {
			continue
		}
		if err := os.WriteFile(filepath.Join(w.dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if strings.Contains(all.String(), "module \"") {
		if out, code := w.run("get", "-no-color"); code != 0 {
			t.Fatalf("terraform get in examples/%s failed (exit %d):\n%s", dir, code, out)
		}
	}
	return w
}

// platformState is the state of the platform workspace the HCP Terraform
// guide reads: its outputs only.
const platformState = `{
  "version": 4, "terraform_version": "1.5.0", "serial": 1, "lineage": "platform",
  "outputs": {
    "east_endpoint": {"value": "", "type": "string"},
    "east_ca": {"value": "", "type": "string"},
    "east_gateway": {"value": "203.0.113.10", "type": "string"},
    "west_endpoint": {"value": "", "type": "string"},
    "west_ca": {"value": "", "type": "string"},
    "west_gateway": {"value": "203.0.113.20", "type": "string"}
  },
  "resources": []
}
`

// migratingObject is the hand-written AuthorizationPolicy the migrating
// guide adopts: users/ap-user in east, with no labels of ours.
func migratingObject(t *testing.T) {
	t.Helper()
	ensureNamespace(t, "east", "users")
	o := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
		"metadata": map[string]any{"name": "ap-user", "namespace": "users"},
		"spec": map[string]any{
			"selector": map[string]any{"matchLabels": map[string]any{"app": "user"}},
			"action":   "ALLOW",
			"rules":    []any{map[string]any{"from": []any{map[string]any{"source": map[string]any{"principals": []any{"east.mesh/ns/accounts/sa/account"}}}}}},
		},
	}}
	_, err := dyn(t, "east").Resource(gvrAuthz).Namespace("users").Create(context.Background(), o, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating the hand-written AuthorizationPolicy: %v", err)
	}
	t.Cleanup(func() {
		err := dyn(t, "east").Resource(gvrAuthz).Namespace("users").Delete(context.Background(), "ap-user", metav1.DeleteOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting the hand-written AuthorizationPolicy: %v", err)
		}
	})
}

// migratingRoutes writes the hand-written VirtualService and
// DestinationRule of user.global that the migrating-routes guide adopts.
func migratingRoutes(t *testing.T) {
	t.Helper()
	ensureNamespace(t, "east", "users")
	for _, o := range []struct {
		gvr  schema.GroupVersionResource
		kind string
		name string
		spec map[string]any
	}{
		{gvrVS, "VirtualService", "user-routes", map[string]any{"hosts": []any{"user.global"}, "http": []any{map[string]any{
			"timeout": "2s", "route": []any{map[string]any{"destination": map[string]any{"host": "user.global"}}}}}}},
		{gvrDR, "DestinationRule", "user-dr", map[string]any{"host": "user.global", "trafficPolicy": map[string]any{"tls": map[string]any{"mode": "ISTIO_MUTUAL"}}}},
	} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": o.kind,
			"metadata": map[string]any{"name": o.name, "namespace": "users"}, "spec": o.spec}}
		ri := dyn(t, "east").Resource(o.gvr).Namespace("users")
		if _, err := ri.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatalf("creating the hand-written %s: %v", o.kind, err)
		}
		t.Cleanup(func() {
			if err := ri.Delete(context.Background(), o.name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting the hand-written %s: %v", o.kind, err)
			}
		})
	}
}

// TestAccExamplesPlan plans every example of examplePlans against the
// local mesh: first those that read nothing, then, for each example others
// read, that example applied in its own state, the examples that read it,
// and its destroy, so that no plan meets another state's objects by
// accident (two states' virtual destinations on one hostname).
func TestAccExamplesPlan(t *testing.T) {
	requireMesh(t)
	for _, ns := range []string{"users", "bar", "payments", "accounts"} {
		for _, c := range testClusters {
			ensureNamespace(t, c, ns)
		}
	}
	t.Cleanup(func() {
		if left := relAllOwned(t); len(left) > 0 {
			t.Errorf("cleanup: objects left: %v; deleting them", left)
			relForceDelete(t, left)
		}
	})
	dirs := make([]string, 0, len(examplePlans))
	readers := map[string][]string{} // example applied -> examples that read it
	for d, p := range examplePlans {
		dirs = append(dirs, d)
		for _, a := range p.after {
			readers[a] = append(readers[a], d)
		}
	}
	sort.Strings(dirs)
	planned := map[string]bool{}
	plan := func(dir string) {
		planned[dir] = true
		p := examplePlans[dir]
		t.Run(dir, func(t *testing.T) {
			if p.prepare != nil {
				p.prepare(t)
			}
			w := exampleWorkdir(t, dir)
			if cases := os.Getenv(exampleCasesEnv); cases != "" {
				// Istio replays what each intent of the example was
				// translated from (make test: simulation-examples).
				w.env = append(w.env, CasesDirEnv+"="+filepath.Join(cases, filepath.FromSlash(dir)))
			}
			out, code := w.run("plan", "-detailed-exitcode")
			// An example with a provider block only (troubleshooting)
			// plans no changes: exit 0; every other one adds: exit 2.
			wantCode := 2
			if p.want == "No changes" {
				wantCode = 0
			}
			if code != wantCode {
				t.Fatalf("terraform plan of examples/%s exited %d, want %d:\n%s", dir, code, wantCode, out)
			}
			if !strings.Contains(out, p.want) {
				t.Fatalf("terraform plan of examples/%s does not say %q:\n%s", dir, p.want, out)
			}
			for _, w := range regexp.MustCompile(`Warning: (.*)`).FindAllStringSubmatch(out, -1) {
				// The local mesh runs no workloads: the Services the
				// examples' backends name do not exist there, which a
				// user's clusters have (TestAccPlanChecks_backendServiceMissing
				// shows that warning).
				if strings.HasPrefix(w[1], "Backend Service missing in cluster ") {
					continue
				}
				if !strings.Contains(w[1], "Provider development overrides") && !slices.Contains(p.warns, strings.TrimSpace(w[1])) {
					t.Errorf("terraform plan of examples/%s warns: %s\n%s", dir, w[1], out)
				}
			}
		})
	}
	for _, d := range dirs {
		if len(examplePlans[d].after) == 0 {
			plan(d)
		}
	}
	for _, a := range sortedKeys(setOf(readers)) {
		w := exampleWorkdir(t, a)
		// What the readers read, without its import blocks.
		imports, err := filepath.Glob(filepath.Join(w.dir, "import*.tf"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range imports {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		destroyed := false
		t.Cleanup(func() {
			if !destroyed {
				w.run("destroy", "-auto-approve")
			}
		})
		w.apply()
		readers := readers[a]
		sort.Strings(readers)
		for _, d := range readers {
			plan(d)
		}
		w.destroy()
		destroyed = true
	}
	if got := sortedKeys(planned); !slices.Equal(got, dirs) {
		t.Fatalf("planned %v, want %v", got, dirs)
	}
}

// exampleCasesEnv names a directory into which TestAccExamplesPlan has
// each example's plan write its intents' translator input
// (MESH_CASES_DIR), one subdirectory per example; tools/istio's
// TestExamplesAgree then replays them in Istio's simulation.
const exampleCasesEnv = "MESH_EXAMPLE_CASES"

// setOf is the set of a map's keys.
func setOf[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// exampleNamespaces creates the namespaces the examples' backends run in,
// in every local cluster: the plan checks that a backend's namespace
// exists (engine.MissingNamespaces), as the user's clusters have them.
func exampleNamespaces(t *testing.T) {
	for _, c := range testClusters {
		for _, ns := range []string{"ledger", "users", "accounts"} {
			ensureNamespace(t, c, ns)
		}
	}
}
