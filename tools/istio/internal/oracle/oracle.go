// Package oracle holds what the Istio oracles (tools/istio/simulation and
// tools/istio/analyze) share: the checked-in tables they compare Istio's
// answers with, and the stand-in for a virtual destination that a policy
// case names without carrying its objects.
package oracle

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
)

// Compare checks got against the file at path, or rewrites the file when
// update is set. rewrite tells the reader how to regenerate it.
func Compare(t *testing.T, path, got string, update bool, rewrite string) {
	t.Helper()
	if update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run `%s` to write it, and review it)", err, rewrite)
	}
	if string(want) != got {
		t.Errorf("Istio's answer for this case changed; review it and rewrite %s with `%s`.\n--- want\n%s\n--- got\n%s", path, rewrite, want, got)
	}
}

// VirtualDestinationStandIn declares a virtual destination's hostname and
// its per-cluster hosts (<cluster>.cluster.<hostname>) as the virtual
// destination's own objects would, for a policy case that names it: one
// ServiceEntry per host in istio-system, HTTP on 8080, exported to the
// client namespaces (none: every namespace).
func VirtualDestinationStandIn(hostname string, clusters, clientNamespaces []string) []string {
	hosts := []string{hostname}
	for _, c := range clusters {
		hosts = append(hosts, c+".cluster."+hostname)
	}
	exportTo := `"*"`
	if len(clientNamespaces) > 0 {
		exportTo = strings.Join(clientNamespaces, ", ")
	}
	var docs []string
	for i, h := range hosts {
		docs = append(docs, fmt.Sprintf(`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: vd-stand-in-%d-%d, namespace: istio-system}
spec:
  exportTo: [%s]
  hosts: [%s]
  location: MESH_INTERNAL
  resolution: DNS
  ports: [{number: 8080, name: http-8080, protocol: HTTP}]
  endpoints: [{address: backend.example, labels: {security.istio.io/tlsMode: istio}}]`, len(hostname), i, exportTo, h))
	}
	return docs
}

// SortedKeys returns the keys of m in order.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// GoldenDir is the golden directory of an intent ("cluster",
// "virtual-destination", "traffic-policy", "access-policy"): the testdata
// folder of the translator package of that intent, relative to a package
// directory of this module (tools/istio/<pkg>).
func GoldenDir(intent string) string {
	return "../../../internal/translate/" + strings.ReplaceAll(intent, "-", "") + "/testdata"
}
