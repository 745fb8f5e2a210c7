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

// caseCluster is one registry cluster as the golden cases write it.
type caseCluster struct {
	Name            string            `json:"name"`
	Network         string            `json:"network,omitempty"`
	Region          string            `json:"region,omitempty"`
	Zone            string            `json:"zone,omitempty"`
	TrustDomain     string            `json:"trustDomain,omitempty"`
	IstioVersion    string            `json:"istioVersion,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	EastWestGateway *caseGateway      `json:"eastWestGateway,omitempty"`
}

type caseGateway struct {
	Address    string   `json:"address"`
	Port       uint32   `json:"port,omitempty"`
	TargetPort uint32   `json:"targetPort,omitempty"`
	Hosts      []string `json:"hosts,omitempty"`
}

// writeCase writes the translator's input of one intent under
// MESH_CASES_DIR, when it is set and the intent says what that input is.
func writeCase(spec intentSpec, reg *translate.Registry) error {
	dir := os.Getenv(CasesDirEnv)
	if dir == "" || spec.Case == nil {
		return nil
	}
	var out struct {
		Registry []caseCluster     `json:"registry"`
		Intent   any               `json:"intent"`
		Routing  routing.Statement `json:"routing,omitempty"`
	}
	for _, name := range reg.Names() {
		c := reg.Cluster(name)
		cc := caseCluster{Name: c.Name, Network: c.Network, Region: c.Region, Zone: c.Zone,
			TrustDomain: c.TrustDomain, IstioVersion: c.IstioVersion, Labels: c.Labels}
		if g := c.EastWestGateway; g != nil {
			cc.EastWestGateway = &caseGateway{Address: g.Address, Port: g.Port, TargetPort: g.TargetPort, Hosts: g.Hosts}
		}
		out.Registry = append(out.Registry, cc)
	}
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
