package simulation

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/tools/istio/internal/oracle"
	"sigs.k8s.io/yaml"
)

// registryCluster is one cluster of a case's registry, as the cases
// write it, with the simulation's own methods.
type registryCluster struct {
	oracle.RegistryCluster
}

// withNetworks gives every cluster without a network one of its own,
// net-<name>, with an east-west gateway at 192.0.2.<n>:15443, so that a
// case written for one network (a policy's, whose translator ignores
// networks) runs in a multi-network mesh: a request for another
// cluster's pod goes through that cluster's east-west gateway, as in a
// real multi-network mesh, never to its pod address.
func withNetworks(reg []registryCluster) []registryCluster {
	out := append([]registryCluster(nil), reg...)
	for i := range out {
		if out[i].Network == "" {
			out[i].Network = "net-" + out[i].Name
			if out[i].EastWestGateway == nil {
				out[i].EastWestGateway = &oracle.Gateway{Address: fmt.Sprintf("192.0.2.%d", i+1), Port: 15443}
			}
		}
	}
	return out
}

// oracleRegistry is the case's registry for the provider's translator.
func (g *goldenCase) oracleRegistry() []oracle.RegistryCluster {
	out := make([]oracle.RegistryCluster, len(g.registry))
	for i, c := range g.registry {
		out[i] = c.RegistryCluster
	}
	return out
}

// gatewayPort is the cluster's east-west gateway port (15443 by default).
func (c registryCluster) gatewayPort() uint32 {
	if c.EastWestGateway != nil && c.EastWestGateway.Port != 0 {
		return c.EastWestGateway.Port
	}
	return 15443
}

// gatewayListenPort is the port the cluster's east-west gateway pods
// listen on, where mesh_cluster's Gateway server binds: the registry's
// target_port, or its port.
func (c registryCluster) gatewayListenPort() uint32 {
	if c.EastWestGateway != nil && c.EastWestGateway.TargetPort != 0 {
		return c.EastWestGateway.TargetPort
	}
	return c.gatewayPort()
}

// placement is the intent's cluster placement.
type placement struct {
	Clusters        []string          `json:"clusters,omitempty"`
	ClusterSelector map[string]string `json:"clusterSelector,omitempty"`
}

// selects reports whether the placement selects c; an empty placement
// selects every cluster.
func (p placement) selects(c registryCluster) bool {
	if len(p.Clusters) > 0 {
		for _, n := range p.Clusters {
			if n == c.Name {
				return true
			}
		}
		return false
	}
	for k, v := range p.ClusterSelector {
		if c.Labels[k] != v {
			return false
		}
	}
	return true
}

func (p placement) empty() bool { return len(p.Clusters) == 0 && len(p.ClusterSelector) == 0 }

// vdIntent is the part of a virtual destination intent the expectations
// need.
type vdIntent struct {
	Name      string `json:"name"`
	Hostname  string `json:"hostname"`
	Namespace string `json:"namespace,omitempty"`
	Ports     []struct {
		Number     uint32 `json:"number"`
		Protocol   string `json:"protocol"`
		TargetPort uint32 `json:"targetPort"`
	} `json:"ports"`
	Backends []struct {
		Cluster    string    `json:"cluster"`
		Namespace  string    `json:"namespace"`
		Service    string    `json:"service"`
		Priority   int       `json:"priority"`
		Weight     *uint32   `json:"weight"`
		ExcludeFor placement `json:"excludeFor"`
	} `json:"backends"`
	Failover *struct {
		Mode string `json:"mode"`
	} `json:"failover,omitempty"`
	Clients struct {
		placement
		Namespaces []string `json:"namespaces,omitempty"`
	} `json:"clients"`
}

// namespace holds the client objects, and the east-west gateway.
func (in vdIntent) namespace() string {
	if in.Namespace == "" {
		return "istio-system"
	}
	return in.Namespace
}

// goldenCase is one translator case: its input and, per cluster, the YAML
// documents of its golden output.
type goldenCase struct {
	name     string
	registry []registryCluster
	intent   vdIntent
	objects  map[string][]string // cluster -> YAML documents
	raw      json.RawMessage     // the intent, for the routing statement
	failed   string              // the golden holds this error instead of objects
	// planned is the routing statement a plan showed for this intent (an
	// example's case, written under MESH_CASES_DIR); nil for golden cases.
	planned routing.Statement
}

func (g *goldenCase) cluster(name string) registryCluster {
	for _, c := range g.registry {
		if c.Name == name {
			return c
		}
	}
	return registryCluster{oracle.RegistryCluster{Name: name}}
}

// loadCases reads every case of testdata/<dir>.
func loadCases(t testing.TB, dir string) ([]*goldenCase, error) {
	return loadCasesIn(t, dir, oracle.GoldenDir(dir))
}

// loadCasesIn reads every case of folder, cases of intent dir.
func loadCasesIn(t testing.TB, dir, folder string) ([]*goldenCase, error) {
	inputs, err := filepath.Glob(filepath.Join(folder, "*.yaml"))
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("no cases in %s", folder)
	}
	var out []*goldenCase
	for _, in := range inputs {
		if strings.HasSuffix(in, ".golden.yaml") {
			continue
		}
		c, err := loadCase(t, dir, in)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", in, err)
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out, nil
}

func loadCase(t testing.TB, dir, input string) (*goldenCase, error) {
	raw, err := os.ReadFile(input)
	if err != nil {
		return nil, err
	}
	var in struct {
		Registry []registryCluster `json:"registry"`
		Intent   vdIntent          `json:"intent"`
	}
	if err := yaml.Unmarshal(raw, &in); err != nil {
		return nil, err
	}
	var rawIntent struct {
		Intent  json.RawMessage   `json:"intent"`
		Routing routing.Statement `json:"routing"`
	}
	if err := yaml.Unmarshal(raw, &rawIntent); err != nil {
		return nil, err
	}
	c := &goldenCase{name: strings.TrimSuffix(filepath.Base(input), ".yaml"), registry: in.Registry, intent: in.Intent, raw: rawIntent.Intent, planned: rawIntent.Routing}
	if dir == "traffic-policy" || dir == "access-policy" {
		c.registry = withNetworks(c.registry)
	}
	// The objects are the provider's translator's answer now, not the
	// golden file: a translator bug reaches Istio (see oracle.Translate).
	out := oracle.Translate(t, dir, input)
	c.objects, c.failed = out.Objects, out.Failed
	if c.objects == nil {
		c.objects = map[string][]string{}
	}
	return c, nil
}

// forEachCase runs check as a subtest for every case of testdata/<dir>
// whose golden holds objects and that keep accepts (nil: all), with the
// case's intent decoded into an I, and compares the table it returns with
// the case's <case>.traffic.txt.
func forEachCase[I any](t *testing.T, dir string, keep func(*goldenCase, I) bool, check func(*testing.T, *goldenCase, I) string) {
	t.Helper()
	forEachCaseIn(t, dir, oracle.GoldenDir(dir), true, keep, check)
}

// forEachCaseIn is forEachCase on the cases of folder, comparing the
// tables (<folder>/<case>.traffic.txt) only when withTables is set.
func forEachCaseIn[I any](t *testing.T, dir, folder string, withTables bool, keep func(*goldenCase, I) bool, check func(*testing.T, *goldenCase, I) string) {
	t.Helper()
	cases, err := loadCasesIn(t, dir, folder)
	if err != nil {
		t.Fatal(err)
	}
	ran, planErrors, empty, left := 0, 0, 0, 0
	defer func() {
		t.Logf("%s: %d cases simulated, %d plan errors (the golden file's too), %d writing nothing, %d not this test's", folder, ran, planErrors, empty, left)
	}()
	for _, g := range cases {
		if g.failed != "" || len(g.objects) == 0 {
			if g.failed != "" {
				planErrors++
			} else {
				empty++
			}
			if !withTables && (g.failed != "" || dir != "cluster") {
				// An example's case: its plan succeeded and wrote objects
				// (a mesh_cluster may have nothing to write), so a
				// translation that fails here, or writes nothing, would
				// let the case pass unchecked.
				t.Errorf("%s/%s: translated here to %q with %d clusters' objects; its plan wrote objects", folder, g.name, g.failed, len(g.objects))
			}
			continue // a plan error, or nothing written: nothing reaches Istio
		}
		raw, err := os.ReadFile(filepath.Join(folder, g.name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var input struct {
			Intent I `json:"intent"`
		}
		if err := yaml.Unmarshal(raw, &input); err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		if keep != nil && !keep(g, input.Intent) {
			left++
			continue
		}
		ran++
		t.Run(g.name, func(t *testing.T) {
			table := check(t, g, input.Intent)
			if withTables {
				compareTable(t, filepath.Join(folder, g.name+".traffic.txt"), table)
			}
		})
	}
}

// isCluster reports whether name is a cluster of the case's registry.
func (g *goldenCase) isCluster(name string) bool {
	for _, c := range g.registry {
		if subsetName(c.Name) == name {
			return true
		}
	}
	return false
}

// istioDocs keeps the documents of Istio kinds (records are ConfigMaps).
func istioDocs(docs []string) []string {
	var out []string
	for _, d := range docs {
		if strings.Contains(d, "apiVersion: networking.istio.io/") || strings.Contains(d, "apiVersion: security.istio.io/") {
			out = append(out, d)
		}
	}
	return out
}
