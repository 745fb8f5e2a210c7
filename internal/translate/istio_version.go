package translate

import (
	"strings"

	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"
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
func (c *Cluster) IsIstio130() bool { return c.IstioMinor() == "1.30" }

// CheckIstioVersionShapes refuses objects that a cluster's Istio version is
// known to break, naming the upstream issue. It runs on the translator's
// output, so a shape is caught whichever intent produced it.
//
// Istio 1.30: istiod crash-loops on a DNS-resolved ServiceEntry whose
// endpoints span more than one locality when a DestinationRule for its host
// sets failoverPriority (istio/istio#61857, fixed in 1.31). The virtual
// destination translation never writes endpoint localities (locality
// failover is written as failoverPriority ranks), so this guards the
// translation rather than the user's input.
func CheckIstioVersionShapes(objs []Object, reg *Registry) error {
	type hostKey struct{ cluster, host string }
	localities := map[hostKey]map[string]bool{}
	failoverPriority := map[hostKey]bool{}
	for _, o := range objs {
		c := reg.Cluster(o.Cluster)
		if c == nil || !c.IsIstio130() {
			continue
		}
		switch r := o.Resource.(type) {
		case *networking.ServiceEntry:
			if r.Spec.Resolution != networkingapi.ServiceEntry_DNS {
				continue
			}
			for _, h := range r.Spec.Hosts {
				k := hostKey{o.Cluster, h}
				if localities[k] == nil {
					localities[k] = map[string]bool{}
				}
				for _, ep := range r.Spec.Endpoints {
					localities[k][ep.Locality] = true
				}
			}
		case *networking.DestinationRule:
			k := hostKey{o.Cluster, r.Spec.Host}
			failoverPriority[k] = failoverPriority[k] || len(r.Spec.GetTrafficPolicy().GetLoadBalancer().GetLocalityLbSetting().GetFailoverPriority()) > 0
			for _, sub := range r.Spec.Subsets {
				failoverPriority[k] = failoverPriority[k] || len(sub.GetTrafficPolicy().GetLoadBalancer().GetLocalityLbSetting().GetFailoverPriority()) > 0
			}
		}
	}
	for k, locs := range localities {
		if len(locs) > 1 && failoverPriority[k] {
			return Errorf(Root("failover"), "Shape not supported by Istio 1.30",
				"Cluster %q runs Istio 1.30 (istio_version %q), whose istiod crash-loops on a DNS ServiceEntry for %s with endpoints in several localities and a DestinationRule that sets failoverPriority (istio/istio#61857). Upgrade the cluster to Istio 1.31 and set its istio_version.",
				k.cluster, reg.Cluster(k.cluster).IstioVersion, k.host)
		}
	}
	return nil
}
