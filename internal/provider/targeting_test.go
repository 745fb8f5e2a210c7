package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// Targeting: a registered cluster is never reached through another
// cluster's kubeconfig context or API server by fallback. The unit tests
// (no cluster: the servers are unroutable) show the plan errors; the
// acceptance tests show that nothing reaches the local clusters.

// words matches text as Terraform prints it, which may wrap a line at any
// space.
func words(text string) string {
	parts := strings.Fields(text)
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return strings.Join(parts, `\s+`)
}

// mustMatchAll builds a regexp that matches when every part appears, in
// order.
func mustMatchAll(parts ...string) *regexp.Regexp {
	for i, p := range parts {
		parts[i] = words(p)
	}
	return regexp.MustCompile(strings.Join(parts, `[\s\S]*`))
}

// writeKubeconfigFile writes a kubeconfig with one context per entry
// (context -> server), a token user and the given current context.
func writeKubeconfigFile(t *testing.T, p, current string, contexts map[string]string) string {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.AuthInfos["u"] = &clientcmdapi.AuthInfo{Token: "t"}
	for name, server := range contexts {
		cfg.Clusters["c-"+name] = &clientcmdapi.Cluster{Server: server, InsecureSkipTLSVerify: true}
		cfg.Contexts[name] = &clientcmdapi.Context{Cluster: "c-" + name, AuthInfo: "u"}
	}
	cfg.CurrentContext = current
	if err := clientcmd.WriteToFile(*cfg, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func planFails(t *testing.T, config string, want *regexp.Regexp) {
	t.Helper()
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps:                    []resource.TestStep{{Config: config, PlanOnly: true, ExpectError: want}},
	})
}

const arnEast = "arn:aws:eks:us-east-1:111122223333:cluster/east"
const gkeWest = "gke_proj_us-west1_west"

// Clusters registered with a kubeconfig they share and no config_context,
// whose contexts are named otherwise (as EKS and GKE name them), fail at
// plan: each is named with the attribute path of its entry, the file's
// contexts are listed, and the fix is config_context. A cluster whose
// context is named like it is fine.
func TestPlanRefusesClustersWithoutContextInASharedKubeconfig(t *testing.T) {
	kc := writeKubeconfigFile(t, filepath.Join(t.TempDir(), "config"), "onprem", map[string]string{
		arnEast: "https://127.0.0.1:1", gkeWest: "https://127.0.0.1:2", "onprem": "https://127.0.0.1:3",
	})
	config := fmt.Sprintf(`
provider "mesh" {
  clusters = {
    east   = { kubernetes = { config_path = %[1]q } }
    west   = { kubernetes = { config_path = %[1]q } }
    onprem = { kubernetes = { config_path = %[1]q } }
  }
}
data "mesh_clusters" "all" {}
`, kc)
	contexts := fmt.Sprintf(`its contexts are %q, %q, "onprem" (current: "onprem")`, arnEast, gkeWest)
	for _, c := range []struct{ cluster, others string }{{"east", `"onprem", "west"`}, {"west", `"east", "onprem"`}} {
		planFails(t, config, mustMatchAll("No kubeconfig context for the cluster",
			fmt.Sprintf(`Attribute clusters[%q].kubernetes: Cluster %q has no config_context, and the kubeconfig %s, which clusters %s read too, has no context named %q;`, c.cluster, c.cluster, kc, c.others, c.cluster),
			contexts, "Set config_context to this cluster's context"))
	}
	// The same with the kubeconfig from the environment and no kubernetes
	// block: the entry is the cluster.
	t.Setenv(envConfigPath, kc)
	t.Setenv(envConfigPaths, "")
	planFails(t, `
provider "mesh" {
  clusters = {
    east = {}
    west = {}
  }
}
data "mesh_clusters" "all" {}
`, mustMatchAll(`Attribute clusters["east"]: Cluster "east" has no config_context`, contexts, `Attribute clusters["west"]: Cluster "west" has no config_context`))
}

// A config_context the kubeconfig lacks fails at plan, listing the
// contexts there are.
func TestPlanRefusesAMissingContext(t *testing.T) {
	kc := writeKubeconfigFile(t, filepath.Join(t.TempDir(), "config"), arnEast, map[string]string{arnEast: "https://127.0.0.1:1"})
	planFails(t, fmt.Sprintf(`
provider "mesh" {
  clusters = {
    east = { kubernetes = { config_path = %q, config_context = "east" } }
  }
}
data "mesh_clusters" "all" {}
`, kc), mustMatchAll("Kubeconfig context not found", `Attribute clusters["east"].kubernetes.config_context: Cluster "east": the kubeconfig`, `has no context "east"; its contexts are "`+arnEast+`"`))
}

// Two clusters that reach one API server fail at plan naming both, the
// copied entry whose config_context was not changed as much as two hosts
// that differ only in how they are written.
func TestPlanRefusesTwoClustersOnOneAPIServer(t *testing.T) {
	kc := writeKubeconfigFile(t, filepath.Join(t.TempDir(), "config"), "east", map[string]string{"east": "https://127.0.0.1:1", "west": "https://127.0.0.1:2"})
	planFails(t, fmt.Sprintf(`
provider "mesh" {
  clusters = {
    east = { kubernetes = { config_path = %[1]q, config_context = "east" } }
    west = { kubernetes = { config_path = %[1]q, config_context = "east" } }
  }
}
data "mesh_clusters" "all" {}
`, kc), mustMatchAll("Two clusters on one API server", `Attribute clusters["west"].kubernetes: Clusters "east" and "west" both reach the API server https://127.0.0.1:1`, "Nothing was written to any cluster."))
	planFails(t, `
provider "mesh" {
  clusters = {
    east = { kubernetes = { host = "https://API.example.com", token = "a" } }
    west = { kubernetes = { host = "https://api.example.com:443/", token = "b" } }
  }
}
data "mesh_clusters" "all" {}
`, mustMatchAll(`Clusters "east" and "west" both reach the API server https://api.example.com:443`))
}

// A kubeconfig of its own per cluster (aws eks update-kubeconfig
// --kubeconfig, one file per GKE cluster) keeps using its current context,
// whatever its name: each cluster is reached at the server of its own
// file (here refused, so the probe's error names the address).
func TestOwnKubeconfigPerClusterUsesItsCurrentContext(t *testing.T) {
	dir := t.TempDir()
	east := writeKubeconfigFile(t, filepath.Join(dir, "east"), arnEast, map[string]string{arnEast: "https://127.0.0.1:1"})
	west := writeKubeconfigFile(t, filepath.Join(dir, "west"), gkeWest, map[string]string{gkeWest: "https://127.0.0.1:2"})
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: fmt.Sprintf(`
provider "mesh" {
  clusters = {
    east = { kubernetes = { config_path = %q } }
    west = { kubernetes = { config_paths = [%q] } }
  }
}
data "mesh_clusters" "all" {}
`, east, west),
			Check: resource.ComposeAggregateTestCheckFunc(
				resource.TestCheckResourceAttr("data.mesh_clusters.all", "clusters.0.name", "east"),
				resource.TestMatchResourceAttr("data.mesh_clusters.all", "clusters.0.error", regexp.MustCompile(`127\.0\.0\.1:1\b`)),
				resource.TestCheckResourceAttr("data.mesh_clusters.all", "clusters.1.name", "west"),
				resource.TestMatchResourceAttr("data.mesh_clusters.all", "clusters.1.error", regexp.MustCompile(`127\.0\.0\.1:2\b`)),
			),
		}},
	})
}

// istioSnapshot is every object of the kinds the provider writes, in every
// local cluster, with its resource version: two equal snapshots mean
// nothing was written in between.
func istioSnapshot(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, c := range testClusters {
		for _, gvr := range allOwnedGVRs {
			list, err := dyn(t, c).Resource(gvr).List(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("listing %s in %s: %v", gvr.Resource, c, err)
			}
			for _, o := range list.Items {
				out[fmt.Sprintf("%s/%s/%s/%s", c, o.GetKind(), o.GetNamespace(), o.GetName())] = o.GetResourceVersion()
			}
		}
	}
	return out
}

func requireNothingWritten(t *testing.T, before map[string]string) {
	t.Helper()
	after := istioSnapshot(t)
	for k, v := range after {
		if before[k] != v {
			t.Errorf("%s was written (resource version %q, before %q)", k, v, before[k])
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			t.Errorf("%s was deleted", k)
		}
	}
}

// targetingIntents writes objects in every registered cluster: each
// cluster's mesh_cluster, and a virtual destination with its records.
func targetingIntents(clusters ...string) string {
	var b strings.Builder
	for _, c := range clusters {
		fmt.Fprintf(&b, "resource \"mesh_cluster\" %[1]q {\n  name = %[1]q\n  mtls_mode = \"STRICT\"\n}\n", c)
	}
	fmt.Fprintf(&b, `
resource "mesh_virtual_destination" "target" {
  name     = "rel-target"
  hostname = "rel-target.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [{ cluster = %q, namespace = "users", service = "user" }]
}
`, clusters[0])
	return b.String()
}

// targetingProvider registers clusters with the given kubernetes bodies.
func targetingProvider(conns map[string]string, order ...string) string {
	var b strings.Builder
	b.WriteString("provider \"mesh\" {\n  clusters = {\n")
	for _, c := range order {
		fmt.Fprintf(&b, "    %s = {\n      kubernetes = { %s }\n      %s\n    }\n", c, conns[c], testTopology[c])
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

// cloudKubeconfig writes, from the local mesh's kubeconfig, one with the
// same clusters and credentials whose contexts are named as EKS and GKE
// name them, except onprem, which is also the current context: the
// cluster every unnamed cluster landed in before.
func cloudKubeconfig(t *testing.T) string {
	t.Helper()
	raw, err := clientcmd.LoadFromFile(testMesh.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]string{"east": arnEast, "west": gkeWest, "onprem": "onprem"}
	out := clientcmdapi.NewConfig()
	for c, ctx := range names {
		out.Clusters[c] = raw.Clusters[c]
		out.AuthInfos[c] = raw.AuthInfos[c]
		out.Contexts[ctx] = &clientcmdapi.Context{Cluster: c, AuthInfo: c}
	}
	out.CurrentContext = "onprem"
	p := filepath.Join(t.TempDir(), "config")
	if err := clientcmd.WriteToFile(*out, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// The case end to end: east and west registered by config_path
// alone, against a kubeconfig whose contexts have other names and whose
// current context is onprem. Plan and apply fail naming both clusters and
// listing the contexts, and nothing is written to any cluster, onprem (the
// current context's cluster) included.
func TestAccTargeting_sharedKubeconfigWithoutContexts(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: "rel-target"})
	kc := cloudKubeconfig(t)
	path := fmt.Sprintf("config_path = %q", kc)
	w.write(targetingProvider(map[string]string{"east": path, "west": path, "onprem": path}, testClusters...) + targetingIntents(testClusters...))
	before := istioSnapshot(t)

	want := []*regexp.Regexp{
		mustMatchAll(`Attribute clusters["east"].kubernetes: Cluster "east" has no config_context`, `has no context named "east"`, fmt.Sprintf(`its contexts are %q, %q, "onprem" (current: "onprem")`, arnEast, gkeWest), "Set config_context"),
		mustMatchAll(`Attribute clusters["west"].kubernetes: Cluster "west" has no config_context`, `has no context named "west"`, fmt.Sprintf(`its contexts are %q, %q, "onprem"`, arnEast, gkeWest)),
	}
	out, code := w.run("plan")
	for _, re := range want {
		if code == 0 || !re.MatchString(out) {
			t.Fatalf("plan (exit %d) does not fail with %s:\n%s", code, re, out)
		}
	}
	if strings.Contains(out, `Cluster "onprem" has no`) {
		t.Errorf("onprem, whose context is named like it, is refused:\n%s", out)
	}
	out = w.applyFails()
	for _, re := range want {
		if !re.MatchString(out) {
			t.Fatalf("apply does not fail with %s:\n%s", re, out)
		}
	}
	requireNothingWritten(t, before)
	if left := relAllOwned(t); len(left) > 0 {
		t.Errorf("objects written: %v", left)
	}
}

// A copied cluster entry whose config_context was not changed: east and
// west both reach east's API server. Plan and apply fail naming both, and
// nothing is written to east (or anywhere).
func TestAccTargeting_twoClustersOnOneAPIServer(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: "rel-target"})
	conn := fmt.Sprintf("config_path = %q, config_context = \"east\"", testMesh.Kubeconfig())
	w.write(targetingProvider(map[string]string{"east": conn, "west": conn}, "east", "west") + targetingIntents("east", "west"))
	before := istioSnapshot(t)

	want := mustMatchAll("Two clusters on one API server", `Attribute clusters["west"].kubernetes: Clusters "east" and "west" both reach the API server `+strings.TrimSuffix(testMesh.Server("east"), "/"), "Nothing was written to any cluster.")
	out, code := w.run("plan")
	if code == 0 || !want.MatchString(out) {
		t.Fatalf("plan (exit %d) does not fail with %s:\n%s", code, want, out)
	}
	out = w.applyFails()
	if !want.MatchString(out) {
		t.Fatalf("apply does not fail with %s:\n%s", want, out)
	}
	requireNothingWritten(t, before)
	if left := relAllOwned(t); len(left) > 0 {
		t.Errorf("objects written: %v", left)
	}
}

// One kubeconfig file per cluster (the EKS and GKE pattern), each with a
// current context named otherwise and the credentials of another cluster
// it has no context for: plan and apply reach each cluster through its own file's
// current context, every cluster's objects land in it alone, and the plan
// after is empty.
func TestAccTargeting_ownKubeconfigPerCluster(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: "rel-target"}, engine.Owner{Kind: "cluster", Name: "east"}, engine.Owner{Kind: "cluster", Name: "west"})
	raw, err := clientcmd.LoadFromFile(testMesh.Kubeconfig())
	if err != nil {
		t.Fatal(err)
	}
	conns := map[string]string{}
	for c, decoy := range map[string]string{"east": "onprem", "west": "east"} {
		out := clientcmdapi.NewConfig()
		current := "prod-" + c + "-admin"
		for _, k := range []string{c, decoy} {
			out.Clusters[k], out.AuthInfos[k] = raw.Clusters[k], raw.AuthInfos[k]
		}
		out.Contexts[current] = &clientcmdapi.Context{Cluster: c, AuthInfo: c}
		out.CurrentContext = current
		p := filepath.Join(t.TempDir(), "kubeconfig-"+c)
		if err := clientcmd.WriteToFile(*out, p); err != nil {
			t.Fatal(err)
		}
		conns[c] = fmt.Sprintf("config_path = %q", p)
	}
	w.write(targetingProvider(conns, "east", "west") + targetingIntents("east", "west"))
	w.apply()
	for _, c := range []string{"east", "west"} {
		if getObject(t, c, gvrPeerAuth, "istio-system", "default") == nil {
			t.Errorf("cluster %s has no PeerAuthentication of its mesh_cluster", c)
		}
		// Every cluster listed: an object of east's in another cluster
		// would show there under that cluster's name.
		w.requireExact("mesh_cluster."+c, "cluster", c)
	}
	w.requireExact("mesh_virtual_destination.target", "virtual-destination", "rel-target")
	for _, k := range relAllOwned(t) {
		if strings.HasPrefix(k, "onprem/") {
			t.Errorf("%s written in onprem, which no registered cluster uses", k)
		}
	}
	w.planIsEmpty()
}

// terraform validate needs no credentials: a cluster without a kubernetes
// block, with no KUBE_* variable set, validates (the environment is checked
// at plan).
func TestValidateNeedsNoCredentials(t *testing.T) {
	tf := terraformCLI(t)
	root := t.TempDir()
	dir := filepath.Join(root, "work")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(`
terraform {
  required_providers {
    mesh = { source = "mesh-intent/mesh" }
  }
}
provider "mesh" {
  clusters = {
    east = { network = "net-east" }
    west = { kubernetes = { config_context = "west" } }
  }
}
resource "mesh_cluster" "east" {
  name = "east"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := terraformEnv(t, root)
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "KUBE") {
			t.Fatalf("the environment is not scrubbed: %s is set", name)
		}
	}
	runTerraform(t, tf, dir, env, "init", "-backend=false", "-input=false", "-no-color")
	runTerraform(t, tf, dir, env, "validate", "-no-color")
}

// One registered cluster reading a kubeconfig with several contexts (the
// default ~/.kube/config that aws eks update-kubeconfig and gcloud write)
// and no config_context fails at plan, listing the contexts: its current
// context follows kubectl config use-context, and an apply after a switch
// would write the cluster's objects to another API server.
func TestPlanRefusesTheCurrentContextOfSeveral(t *testing.T) {
	home := writeKubeconfigFile(t, filepath.Join(t.TempDir(), "config"), arnEast, map[string]string{arnEast: "https://127.0.0.1:1", gkeWest: "https://127.0.0.1:2"})
	planFails(t, fmt.Sprintf(`
provider "mesh" {
  clusters = {
    east = { kubernetes = { config_path = %q } }
  }
}
data "mesh_clusters" "all" {}
`, home), mustMatchAll(`Attribute clusters["east"].kubernetes: Cluster "east" has no config_context`, "more than one context", fmt.Sprintf(`its contexts are %q, %q (current: %q)`, arnEast, gkeWest, arnEast), "kubectl config use-context", "Set config_context"))
}
