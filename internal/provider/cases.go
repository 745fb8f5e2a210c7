package provider

import (
	"os"
	"path/filepath"
	"sync"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// CasesDirEnv names a directory into which every plan writes, per intent,
// what the translator was given (the registry and the intent) in the
// format of the translator's golden cases, with the routing statement the
// plan shows: <dir>/<owner kind>/<name>.yaml. tools/istio replays those
// files in Istio's simulation exactly as it replays the golden cases, so
// that the examples under examples/ are judged by Istio too (make test
// plans them with this set; see docs/testing.md).
const CasesDirEnv = "MESH_CASES_DIR"

// writeCase writes the translator's input of one intent under
// MESH_CASES_DIR, when it is set and the intent says what that input is.
func writeCase(spec intentSpec, reg *translate.Registry) error {
	dir := os.Getenv(CasesDirEnv)
	if dir == "" || spec.Case == nil {
		return nil
	}
	var out struct {
		Registry []translate.CaseCluster `json:"registry"`
		Intent   any                     `json:"intent"`
		Routing  routing.Statement       `json:"routing,omitempty"`
	}
	out.Registry = reg.Case()
	out.Intent = spec.Case()
	if spec.Routing != nil {
		st, err := spec.Routing(reg)
		if err != nil {
			return err
		}
		out.Routing = st
	}
	if err := writeCaseFile(dir, spec.Owner.Kind, spec.Owner.Name, out); err != nil {
		return err
	}
	if spec.ComposedCase == nil {
		return nil
	}
	// Each policy planned on a destination rewrites the composed case
	// with every policy planned so far, under one lock, so that the last
	// write holds them all.
	composedCases.Lock()
	defer composedCases.Unlock()
	name, intent := spec.ComposedCase()
	if intent == nil {
		return nil
	}
	out.Intent, out.Routing = intent, nil
	return writeCaseFile(dir, spec.Owner.Kind, name, out)
}

var composedCases sync.Mutex

func writeCaseFile(dir, kind, name string, c any) error {
	raw, err := yaml.Marshal(c)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, kind), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, kind, name+".yaml"), raw, 0o644)
}

// destinationKey names a traffic policy's destination in a file name.
func destinationKey(d trafficpolicy.Destination) string {
	if d.VirtualDestination != "" {
		return d.VirtualDestination
	}
	return d.Service + "." + d.Namespace
}
