package translate

// CaseCluster is one cluster of a registry as the translator's golden
// cases write it (internal/translate/<intent>/testdata/<case>.yaml), and
// as a plan writes the registry it translated with when MESH_CASES_DIR is
// set (internal/provider/cases.go), so that tools/istio replays either.
type CaseCluster struct {
	Name            string            `json:"name"`
	Network         string            `json:"network,omitempty"`
	Region          string            `json:"region,omitempty"`
	Zone            string            `json:"zone,omitempty"`
	TrustDomain     string            `json:"trustDomain,omitempty"`
	IstioVersion    string            `json:"istioVersion,omitempty"`
	Labels          map[string]string `json:"labels,omitempty"`
	EastWestGateway *CaseGateway      `json:"eastWestGateway,omitempty"`
}

// CaseGateway is an east-west gateway as a case writes it (Gateway's
// known fields).
type CaseGateway struct {
	Address    string   `json:"address"`
	Port       uint32   `json:"port,omitempty"`
	TargetPort uint32   `json:"targetPort,omitempty"`
	Hosts      []string `json:"hosts,omitempty"`
}

// Cluster is the registry cluster the case describes.
func (c CaseCluster) Cluster() Cluster {
	out := Cluster{Name: c.Name, Network: c.Network, Region: c.Region, Zone: c.Zone,
		TrustDomain: c.TrustDomain, IstioVersion: c.IstioVersion, Labels: c.Labels}
	if g := c.EastWestGateway; g != nil {
		out.EastWestGateway = &Gateway{Address: g.Address, Port: g.Port, TargetPort: g.TargetPort, Hosts: g.Hosts}
	}
	return out
}

// CaseRegistry is the registry of a case.
func CaseRegistry(cs []CaseCluster) *Registry {
	out := make([]Cluster, len(cs))
	for i, c := range cs {
		out[i] = c.Cluster()
	}
	return NewRegistry(out...)
}

// Case is the registry as a case writes it, in name order.
func (r *Registry) Case() []CaseCluster {
	out := make([]CaseCluster, 0, len(r.names))
	for _, name := range r.names {
		c := r.byName[name]
		cc := CaseCluster{Name: c.Name, Network: c.Network, Region: c.Region, Zone: c.Zone,
			TrustDomain: c.TrustDomain, IstioVersion: c.IstioVersion, Labels: c.Labels}
		if g := c.EastWestGateway; g != nil {
			cc.EastWestGateway = &CaseGateway{Address: g.Address, Port: g.Port, TargetPort: g.TargetPort, Hosts: g.Hosts}
		}
		out = append(out, cc)
	}
	return out
}
