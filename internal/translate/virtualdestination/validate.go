package virtualdestination

import (
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"

	"math"
	"net/netip"
	"strings"
)

// Validate checks what can be checked without the cluster
// registry: names, hostname, ports, protocols, priorities, weights,
// durations, namespaces. It returns every problem, each with the Terraform
// attribute path. Translate runs it first, then the checks
// that need the registry (cluster names, east-west gateways, regions).
func Validate(in Intent) translate.Errors {
	var errs translate.Errors
	if !translate.ValidDNSLabel(in.Name) {
		errs.Add(translate.Errorf(translate.Root("name"), "Invalid name",
			"Name %q must be a DNS-1123 label (lowercase letters, digits and '-', at most 63 characters): it names the objects %s%s.",
			in.Name, ObjectPrefix, in.Name))
	}
	if in.VIP != "" && !translate.IsUnknown(in.VIP) {
		errs.Add(validateVIP(in.VIP))
	}
	switch {
	case !translate.ValidHostname(in.Hostname):
		errs.Add(translate.Errorf(translate.Root("hostname"), "Invalid hostname",
			"Hostname %q must be a lowercase DNS name with at least two labels and no wildcard, e.g. user.global.", in.Hostname))
	case strings.HasSuffix(in.Hostname, ".cluster.local"):
		errs.Add(translate.Errorf(translate.Root("hostname"), "Invalid hostname",
			"Hostname %q is under cluster.local, which belongs to Kubernetes Services; Istio would prefer the Service. Use a global name such as user.global.", in.Hostname))
	}
	if translate.ValidHostname(in.Hostname) {
		errs.Add(validateClusterHosts(in))
	}
	if in.Namespace != "" && !translate.ValidDNSLabel(in.Namespace) {
		errs.Add(translate.Errorf(translate.Root("namespace"), "Invalid namespace", "Namespace %q must be a DNS-1123 label.", in.Namespace))
	}
	errs.Add(validateVDPorts(in.Ports))
	errs.Add(validateVDBackends(in.Backends))
	errs.Add(validateVDFailover(in.Failover))
	errs.Add(validateVDClientNamespaces(in))
	return errs
}

func validateVDPorts(ports []Port) translate.Errors {
	var errs translate.Errors
	if len(ports) == 0 {
		errs.Add(translate.Errorf(translate.Root("ports"), "Missing ports", "Set at least one port, e.g. { number = 8080, protocol = \"HTTP\" }."))
	}
	seen := map[int64]bool{}
	for i, p := range ports {
		at := translate.Root("ports").Index(i)
		switch {
		case !translate.ValidPort(p.Number):
			errs.Add(translate.Errorf(at.Attr("number"), "Invalid port", "Port %d is not between 1 and 65535.", p.Number))
		case seen[p.Number]:
			errs.Add(translate.Errorf(at.Attr("number"), "Duplicate port", "Port %d is listed twice.", p.Number))
		}
		seen[p.Number] = true
		if !validProtocol(p.Protocol) {
			errs.Add(translate.Errorf(at.Attr("protocol"), "Invalid protocol",
				"Protocol %q is not one of %s.", p.Protocol, strings.Join(PortProtocols, ", ")))
		}
		if p.TargetPort != nil && !translate.ValidPort(*p.TargetPort) {
			errs.Add(translate.Errorf(at.Attr("target_port"), "Invalid port", "Target port %d is not between 1 and 65535.", *p.TargetPort))
		}
	}
	return errs
}

// maxBackendWeight bounds a backend's weight; Envoy needs the weights of a
// priority to add up within uint32, with room for Istio's gateway scaling.
const maxBackendWeight = 1000

func validateVDBackends(backends []Backend) translate.Errors {
	var errs translate.Errors
	if len(backends) == 0 {
		errs.Add(translate.Errorf(translate.Root("backends"), "Missing backends", "Set at least one backend { cluster, namespace, service, priority }."))
	}
	seen := map[string]int{}
	for i, b := range backends {
		at := translate.Root("backends").Index(i)
		switch first, dup := seen[b.Cluster]; {
		case b.Cluster == "":
			errs.Add(translate.Errorf(at.Attr("cluster"), "Missing cluster", "Set the cluster that runs this backend."))
		case dup:
			errs.Add(translate.Errorf(at.Attr("cluster"), "Duplicate backend",
				"Cluster %q already has a backend (backends[%d]); a cluster serves the hostname through one Service, and its subset is named after the cluster.",
				b.Cluster, first))
		default:
			seen[b.Cluster] = i
		}
		if !translate.ValidDNSLabel(b.Namespace) {
			errs.Add(translate.Errorf(at.Attr("namespace"), "Invalid namespace", "Namespace %q must be a DNS-1123 label.", b.Namespace))
		}
		if !translate.ValidDNS1035Label(b.Service) {
			errs.Add(translate.Errorf(at.Attr("service"), "Invalid service",
				"Service %q must be a Kubernetes Service name (DNS-1035 label: starts with a letter, lowercase letters, digits and '-').", b.Service))
		}
		if b.Priority < 0 {
			errs.Add(translate.Errorf(at.Attr("priority"), "Invalid priority", "Priority %d is negative; 0 is tried first.", b.Priority))
		}
		if b.Weight != nil && (*b.Weight < 1 || *b.Weight > maxBackendWeight) {
			errs.Add(translate.Errorf(at.Attr("weight"), "Invalid weight", "Weight %d is not between 1 and %d.", *b.Weight, maxBackendWeight))
		}
		if b.ServiceAccount != "" && !translate.ValidDNSSubdomain(b.ServiceAccount) {
			errs.Add(translate.Errorf(at.Attr("service_account"), "Invalid service account", "Service account %q must be a DNS-1123 subdomain.", b.ServiceAccount))
		}
	}
	// The client ServiceEntry's subjectAltNames hold for every endpoint:
	// a list without one backend's identity would refuse that backend.
	for i, b := range backends {
		if b.ServiceAccount == "" && len(backends) > 0 {
			for j, o := range backends {
				if o.ServiceAccount != "" {
					errs.Add(translate.Errorf(translate.Root("backends").Index(i).Attr("service_account"), "Missing service account",
						"backends[%d] names its service account but this one does not. Clients verify the identity of every backend or of none (the ServiceEntry's subjectAltNames hold for all its endpoints): set service_account on every backend, or on none.", j))
					break
				}
			}
		}
	}
	return errs
}

func validateVDFailover(f *Failover) translate.Errors {
	var errs translate.Errors
	if f == nil {
		return nil
	}
	switch f.Mode {
	case "", FailoverModePriority, FailoverModeLocality:
	default:
		errs.Add(translate.Errorf(translate.Root("failover").Attr("mode"), "Invalid failover mode",
			"Mode %q is not %q or %q.", f.Mode, FailoverModePriority, FailoverModeLocality))
	}
	o := f.OutlierDetection
	if o == nil {
		return errs
	}
	at := translate.Root("failover").Attr("outlier_detection")
	if o.Consecutive5xxErrors != nil && (*o.Consecutive5xxErrors < 1 || *o.Consecutive5xxErrors > math.MaxUint32) {
		errs.Add(translate.Errorf(at.Attr("consecutive_5xx_errors"), "Invalid outlier detection",
			"consecutive_5xx_errors %d must be at least 1: with 0 no backend is ever ejected and failover never happens.", *o.Consecutive5xxErrors))
	}
	for _, d := range []struct{ attr, value string }{{"interval", o.Interval}, {"base_ejection_time", o.BaseEjectionTime}} {
		if d.value == "" {
			continue
		}
		errs.Add(translate.CheckDuration(at.Attr(d.attr), d.value))
	}
	if o.MaxEjectionPercent != nil && (*o.MaxEjectionPercent < 1 || *o.MaxEjectionPercent > 100) {
		errs.Add(translate.Errorf(at.Attr("max_ejection_percent"), "Invalid outlier detection",
			"max_ejection_percent %d is not between 1 and 100.", *o.MaxEjectionPercent))
	}
	return errs
}

func validateVDClientNamespaces(in Intent) translate.Errors {
	var errs translate.Errors
	ns := in.Namespace
	if ns == "" {
		ns = translate.DefaultIstioNS
	}
	seen := map[string]bool{}
	for i, n := range in.Clients.Namespaces {
		at := translate.Root("clients").Attr("namespaces").Index(i)
		switch {
		case n == "*" && len(in.Clients.Namespaces) > 1:
			errs.Add(translate.Errorf(at, "Invalid namespace", "\"*\" (all namespaces) cannot be combined with other namespaces."))
		case n == "*":
		case !translate.ValidDNSLabel(n):
			errs.Add(translate.Errorf(at, "Invalid namespace", "Namespace %q must be a DNS-1123 label or \"*\".", n))
		case n == ns:
			errs.Add(translate.Errorf(at, "Invalid namespace",
				"Namespace %q holds the objects and the east-west gateway, which must see only the backend-side ServiceEntry; clients cannot run there.", n))
		case seen[n]:
			errs.Add(translate.Errorf(at, "Duplicate namespace", "Namespace %q is listed twice.", n))
		}
		seen[n] = true
	}
	return errs
}

// validateVIP accepts an explicit VIP: one IP address that no sidecar
// could mistake for a real destination and that Istio does not hand out
// itself.
func validateVIP(vip string) error {
	ip, err := netip.ParseAddr(vip)
	switch {
	case err != nil:
		return translate.Errorf(translate.Root("vip"), "Invalid VIP", "VIP %q is not an IP address.", vip)
	case ip.IsLoopback() || ip.IsUnspecified() || ip.IsMulticast():
		return translate.Errorf(translate.Root("vip"), "Invalid VIP", "VIP %s is a loopback, unspecified or multicast address; pick an unused address, e.g. in 241.0.0.0/8.", vip)
	case istioAutoAllocated.Contains(ip):
		return translate.Errorf(translate.Root("vip"), "Invalid VIP", "VIP %s is in 240.240.0.0/16, from which Istio allocates ServiceEntry addresses itself; pick another, e.g. in 241.0.0.0/8.", vip)
	}
	return nil
}

var istioAutoAllocated = netip.MustParsePrefix("240.240.0.0/16")

// PortProtocols are the port protocols a mesh hostname may carry: the ones
// Istio accepts on a ServiceEntry port that can cross networks (mTLS, so not
// UDP), in their canonical spelling.
var PortProtocols = []string{"HTTP", "HTTPS", "HTTP2", "GRPC", "TCP", "TLS", "MONGO", "MYSQL", "REDIS"}

// validProtocol reports whether p is one of PortProtocols (exact spelling).
func validProtocol(p string) bool {
	for _, q := range PortProtocols {
		if p == q {
			return true
		}
	}
	return false
}

// MaxIstioHostLength is the longest host Istio's validation accepts in a
// ServiceEntry, DestinationRule or VirtualService (its FQDN check: 255
// characters).
const MaxIstioHostLength = 255

// validateClusterHosts refuses a hostname whose per-cluster hosts
// (ClusterHost: <cluster>.cluster.<hostname>, one per backend cluster)
// would exceed Istio's host limit: the hostname alone passes (at most
// 253), and the webhook would refuse the objects at apply.
func validateClusterHosts(in Intent) translate.Errors {
	longest, cluster := "", ""
	for _, b := range in.Backends {
		if h := ClusterHost(in.Hostname, b.Cluster); b.Cluster != "" && len(h) > len(longest) {
			longest, cluster = h, b.Cluster
		}
	}
	if len(longest) <= MaxIstioHostLength {
		return nil
	}
	most := MaxIstioHostLength - (len(longest) - len(in.Hostname))
	var errs translate.Errors
	errs.Add(translate.Errorf(translate.Root("hostname"), "Hostname too long for its per-cluster hosts",
		"Hostname %q is %d characters long; the host that reaches backend cluster %q first, %s.cluster.<hostname>, would be %d, and Istio accepts hosts of at most %d characters. "+
			"Use a hostname of at most %d characters (or shorter backend cluster names).",
		in.Hostname, len(in.Hostname), cluster, SubsetName(cluster), len(longest), MaxIstioHostLength, most))
	return errs
}
