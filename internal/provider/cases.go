package provider

import (
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
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
	raw, err := yaml.Marshal(out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Join(dir, spec.Owner.Kind), 0o755); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, spec.Owner.Kind, spec.Owner.Name+".yaml"), raw, 0o644)
}
