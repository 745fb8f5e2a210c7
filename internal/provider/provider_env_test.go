package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// providerTopologyOnly registers the local clusters with their topology and
// no kubernetes settings at all.
func providerTopologyOnly() string {
	var b strings.Builder
	b.WriteString("provider \"mesh\" {\n  clusters = {\n")
	for _, c := range testClusters {
		fmt.Fprintf(&b, "    %s = {\n      %s\n    }\n", c, testTopology[c])
	}
	b.WriteString("  }\n}\n")
	return b.String()
}

const envIntents = `
resource "mesh_virtual_destination" "env" {
  name     = "rel-env"
  hostname = "rel-env.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "west", namespace = "users", service = "user", priority = 1 },
  ]
  clients = { clusters = ["east", "west", "onprem"] }
}

resource "mesh_access_policy" "env" {
  name        = "rel-env"
  destination = { virtual_destination = mesh_virtual_destination.env.hostname }
  sources     = [{ namespace = "accounts", service_account = "account" }]
}
`

// With no kubernetes settings in the configuration, KUBE_CONFIG_PATH (and
// KUBE_CONFIG_PATHS) name the kubeconfig and each cluster takes the
// context named like it: plan and apply reach every cluster, the objects
// land where the registry says (east's in east), and the plan after is
// empty. Without the variable the same configuration is a plan error
// naming each cluster.
func TestAccProvider_environmentOnly(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	config := providerTopologyOnly() + envIntents

	bare := newRelTF(t)
	bare.env = withoutKubeconfigEnv(bare.env)
	bare.write(config)
	out, code := bare.run("plan")
	flat := strings.Join(strings.Fields(out), " ")
	if code == 0 || !strings.Contains(flat, "No way to connect") || !strings.Contains(flat, `clusters["west"]`) {
		t.Fatalf("without settings or environment the plan does not fail naming the clusters (exit %d):\n%s", code, out)
	}

	for _, variable := range []string{envConfigPath, envConfigPaths} {
		t.Run(variable, func(t *testing.T) {
			w := newRelTF(t)
			relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: "rel-env"}, engine.Owner{Kind: "access-policy", Name: "rel-env"})
			value := testMesh.Kubeconfig()
			if variable == envConfigPaths {
				// A first file that knows none of the clusters: the
				// merge must still find each cluster's context.
				other := filepath.Join(t.TempDir(), "other")
				if err := os.WriteFile(other, []byte("apiVersion: v1\nkind: Config\npreferences: {}\n"), 0o600); err != nil {
					t.Fatal(err)
				}
				value = other + string(os.PathListSeparator) + value
			}
			w.env = append(withoutKubeconfigEnv(w.env), variable+"="+value)
			w.write(config)
			w.apply()
			w.requireExact("mesh_virtual_destination.env", "virtual-destination", "rel-env")
			w.requireExact("mesh_access_policy.env", "access-policy", "rel-env")
			for _, c := range testClusters {
				if getObject(t, c, gvrSE, "istio-system", "vd-rel-env") == nil {
					t.Errorf("cluster %s has no client ServiceEntry: its context was not used", c)
				}
			}
			w.planIsEmpty()
		})
	}
}

// The HCP Terraform recipe, as far as it runs here: cluster addresses and
// short-lived tokens come from a data source (in HCP Terraform, the cloud
// provider's cluster and token data sources, or dynamic credentials; here
// terraform_remote_state, which needs no download), with no exec plugin
// and no kubeconfig. Plan and apply reach every cluster with those tokens,
// and the plan after is empty.
func TestAccProvider_tokenFromDataSource(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: "rel-env"}, engine.Owner{Kind: "access-policy", Name: "rel-env"})

	creds := map[string]map[string]string{}
	for _, c := range testClusters {
		token, err := testMesh.ServiceAccountToken(context.Background(), c, "terraform", "hcp-runner", "cluster-admin")
		if err != nil {
			t.Fatal(err)
		}
		creds[c] = map[string]string{"host": testMesh.Server(c), "token": token, "ca": string(testMesh.CA(c))}
	}
	state := map[string]any{
		"version": 4, "terraform_version": "1.11.4", "serial": 1, "lineage": "mesh-intent-test",
		"outputs": map[string]any{"clusters": map[string]any{
			"value":     creds,
			"type":      []any{"map", []any{"object", map[string]string{"host": "string", "token": "string", "ca": "string"}}},
			"sensitive": true,
		}},
		"resources": []any{},
	}
	raw, err := json.Marshal(state)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(w.dir, "platform.tfstate"), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	b.WriteString(`
data "terraform_remote_state" "platform" {
  backend = "local"
  config  = { path = "platform.tfstate" }
}

locals {
  creds = data.terraform_remote_state.platform.outputs.clusters
}

provider "mesh" {
  clusters = {
`)
	for _, c := range testClusters {
		fmt.Fprintf(&b, `    %[1]s = {
      kubernetes = {
        host                   = local.creds[%[1]q].host
        token                  = local.creds[%[1]q].token
        cluster_ca_certificate = local.creds[%[1]q].ca
      }
      %[2]s
    }
`, c, testTopology[c])
	}
	b.WriteString("  }\n}\n")
	w.write(b.String() + envIntents)
	w.apply()
	w.requireExact("mesh_virtual_destination.env", "virtual-destination", "rel-env")
	w.requireExact("mesh_access_policy.env", "access-policy", "rel-env")
	w.planIsEmpty()
}

// withoutKubeconfigEnv drops the kubeconfig variables the test run may have
// inherited.
func withoutKubeconfigEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		if name, _, _ := strings.Cut(kv, "="); name != envConfigPath && name != envConfigPaths && name != "KUBECONFIG" {
			out = append(out, kv)
		}
	}
	return out
}
