package translate

import (
	"strings"
)

// SupportedIstioVersions are the Istio minor versions the translation is
// tested against (the current and the previous minor): Istio's validation
// and xDS simulation in tools/istio run the pinned istiod, and the shapes
// that break an older one are refused below.
var SupportedIstioVersions = []string{"1.30", "1.31"}

// DefaultIstioVersion is assumed for a cluster that declares none: the
// newest supported minor.
const DefaultIstioVersion = "1.31"

// IstioMinor is the cluster's Istio minor version ("1.30"), from
// istio_version with any patch number dropped; DefaultIstioVersion when it
// is not set, "" when it is not known yet.
func (c *Cluster) IstioMinor() string {
	v := c.IstioVersion
	switch {
	case IsUnknown(v):
		return ""
	case v == "":
		return DefaultIstioVersion
	}
	if parts := strings.SplitN(v, ".", 3); len(parts) >= 2 {
		return parts[0] + "." + parts[1]
	}
	return v
}

// istio130 reports whether the cluster runs Istio 1.30.
func (c *Cluster) istio130() bool { return c.IstioMinor() == "1.30" }

// vdCheckIstioVersion refuses, for one client cluster, a virtual
// destination shape that its Istio version cannot take.
//
// Locality failover puts each endpoint in its cluster's locality, and the
// per-cluster subsets order endpoints with failoverPriority. istiod 1.30
// crash-loops on a DNS-resolved ServiceEntry whose endpoints span more than
// one locality when a DestinationRule on it sets failoverPriority
// (istio/istio#61857, fixed in 1.31). Priority failover keeps every
// endpoint in one locality, so it is safe there.
func vdCheckIstioVersion(p *vdPlan, v *vdView) error {
	if p.mode != FailoverModeLocality || !v.cluster.istio130() || len(v.targets) < 2 {
		return nil
	}
	return Errorf(Root("failover").Attr("mode"), "Shape not supported by Istio 1.30",
		"Client cluster %q runs Istio 1.30 (istio_version %q), whose istiod crash-loops on a DNS ServiceEntry spanning several localities with a failoverPriority DestinationRule (istio/istio#61857), the shape locality failover writes for %s. Use failover mode \"priority\" (the default), or upgrade the cluster to Istio 1.31 and set its istio_version.",
		v.cluster.Name, v.cluster.IstioVersion, p.in.Hostname)
}
