package translate

import (
	"fmt"
	"math"
	"net/netip"
	"regexp"
	"strings"
	"time"
)

// ValidateVirtualDestination checks what can be checked without the cluster
// registry: names, hostname, ports, protocols, priorities, weights,
// durations, namespaces. It returns every problem, each with the Terraform
// attribute path. TranslateVirtualDestination runs it first, then the checks
// that need the registry (cluster names, east-west gateways, regions).
func ValidateVirtualDestination(in VirtualDestinationIntent) Errors {
	var errs Errors
	if !validDNSLabel(in.Name) {
		errs.Add(Errorf(Root("name"), "Invalid name",
			"Name %q must be a DNS-1123 label (lowercase letters, digits and '-', at most 63 characters): it names the objects %s%s.",
			in.Name, VirtualDestinationPrefix, in.Name))
	}
	if in.VIP != "" && !IsUnknown(in.VIP) {
		errs.Add(vdValidateVIP(in.VIP))
	}
	switch {
	case !validHostname(in.Hostname):
		errs.Add(Errorf(Root("hostname"), "Invalid hostname",
			"Hostname %q must be a lowercase DNS name with at least two labels and no wildcard, e.g. user.global.", in.Hostname))
	case strings.HasSuffix(in.Hostname, ".cluster.local"):
		errs.Add(Errorf(Root("hostname"), "Invalid hostname",
			"Hostname %q is under cluster.local, which belongs to Kubernetes Services; Istio would prefer the Service. Use a global name such as user.global.", in.Hostname))
	}
	if in.Namespace != "" && !validDNSLabel(in.Namespace) {
		errs.Add(Errorf(Root("namespace"), "Invalid namespace", "Namespace %q must be a DNS-1123 label.", in.Namespace))
	}
	errs.Add(validateVDPorts(in.Ports))
	errs.Add(validateVDBackends(in.Backends))
	errs.Add(validateVDFailover(in.Failover))
	errs.Add(validateVDClientNamespaces(in))
	return errs
}

func validateVDPorts(ports []VirtualDestinationPort) Errors {
	var errs Errors
	if len(ports) == 0 {
		errs.Add(Errorf(Root("ports"), "Missing ports", "Set at least one port, e.g. { number = 8080, protocol = \"HTTP\" }."))
	}
	seen := map[int64]bool{}
	for i, p := range ports {
		at := Root("ports").Index(i)
		switch {
		case !validPort(p.Number):
			errs.Add(Errorf(at.Attr("number"), "Invalid port", "Port %d is not between 1 and 65535.", p.Number))
		case seen[p.Number]:
			errs.Add(Errorf(at.Attr("number"), "Duplicate port", "Port %d is listed twice.", p.Number))
		}
		seen[p.Number] = true
		if !validProtocol(p.Protocol) {
			errs.Add(Errorf(at.Attr("protocol"), "Invalid protocol",
				"Protocol %q is not one of %s.", p.Protocol, strings.Join(PortProtocols, ", ")))
		}
		if p.TargetPort != nil && !validPort(*p.TargetPort) {
			errs.Add(Errorf(at.Attr("target_port"), "Invalid port", "Target port %d is not between 1 and 65535.", *p.TargetPort))
		}
	}
	return errs
}

// vdMaxBackendWeight bounds a backend's weight; Envoy needs the weights of a
// priority to add up within uint32, with room for Istio's gateway scaling.
const vdMaxBackendWeight = 1000

func validateVDBackends(backends []VirtualDestinationBackend) Errors {
	var errs Errors
	if len(backends) == 0 {
		errs.Add(Errorf(Root("backends"), "Missing backends", "Set at least one backend { cluster, namespace, service, priority }."))
	}
	seen := map[string]int{}
	for i, b := range backends {
		at := Root("backends").Index(i)
		switch first, dup := seen[b.Cluster]; {
		case b.Cluster == "":
			errs.Add(Errorf(at.Attr("cluster"), "Missing cluster", "Set the cluster that runs this backend."))
		case dup:
			errs.Add(Errorf(at.Attr("cluster"), "Duplicate backend",
				"Cluster %q already has a backend (backends[%d]); a cluster serves the hostname through one Service, and its subset is named after the cluster.",
				b.Cluster, first))
		default:
			seen[b.Cluster] = i
		}
		if !validDNSLabel(b.Namespace) {
			errs.Add(Errorf(at.Attr("namespace"), "Invalid namespace", "Namespace %q must be a DNS-1123 label.", b.Namespace))
		}
		if !validDNS1035Label(b.Service) {
			errs.Add(Errorf(at.Attr("service"), "Invalid service",
				"Service %q must be a Kubernetes Service name (DNS-1035 label: starts with a letter, lowercase letters, digits and '-').", b.Service))
		}
		if b.Priority < 0 {
			errs.Add(Errorf(at.Attr("priority"), "Invalid priority", "Priority %d is negative; 0 is tried first.", b.Priority))
		}
		if b.Weight != nil && (*b.Weight < 1 || *b.Weight > vdMaxBackendWeight) {
			errs.Add(Errorf(at.Attr("weight"), "Invalid weight", "Weight %d is not between 1 and %d.", *b.Weight, vdMaxBackendWeight))
		}
		if b.ServiceAccount != "" && !validDNSSubdomain(b.ServiceAccount) {
			errs.Add(Errorf(at.Attr("service_account"), "Invalid service account", "Service account %q must be a DNS-1123 subdomain.", b.ServiceAccount))
		}
	}
	// The client ServiceEntry's subjectAltNames hold for every endpoint:
	// a list without one backend's identity would refuse that backend.
	for i, b := range backends {
		if b.ServiceAccount == "" && len(backends) > 0 {
			for j, o := range backends {
				if o.ServiceAccount != "" {
					errs.Add(Errorf(Root("backends").Index(i).Attr("service_account"), "Missing service account",
						"backends[%d] names its service account but this one does not. Clients verify the identity of every backend or of none (the ServiceEntry's subjectAltNames hold for all its endpoints): set service_account on every backend, or on none.", j))
					break
				}
			}
		}
	}
	return errs
}

func validateVDFailover(f *VirtualDestinationFailover) Errors {
	var errs Errors
	if f == nil {
		return nil
	}
	switch f.Mode {
	case "", FailoverModePriority, FailoverModeLocality:
	default:
		errs.Add(Errorf(Root("failover").Attr("mode"), "Invalid failover mode",
			"Mode %q is not %q or %q.", f.Mode, FailoverModePriority, FailoverModeLocality))
	}
	o := f.OutlierDetection
	if o == nil {
		return errs
	}
	at := Root("failover").Attr("outlier_detection")
	if o.Consecutive5xxErrors != nil && (*o.Consecutive5xxErrors < 1 || *o.Consecutive5xxErrors > math.MaxUint32) {
		errs.Add(Errorf(at.Attr("consecutive_5xx_errors"), "Invalid outlier detection",
			"consecutive_5xx_errors %d must be at least 1: with 0 no backend is ever ejected and failover never happens.", *o.Consecutive5xxErrors))
	}
	for _, d := range []struct{ attr, value string }{{"interval", o.Interval}, {"base_ejection_time", o.BaseEjectionTime}} {
		if d.value == "" {
			continue
		}
		if err := validDuration(d.value); err != nil {
			errs.Add(Errorf(at.Attr(d.attr), "Invalid duration", "%s: %v.", d.attr, err))
		}
	}
	if o.MaxEjectionPercent != nil && (*o.MaxEjectionPercent < 1 || *o.MaxEjectionPercent > 100) {
		errs.Add(Errorf(at.Attr("max_ejection_percent"), "Invalid outlier detection",
			"max_ejection_percent %d is not between 1 and 100.", *o.MaxEjectionPercent))
	}
	return errs
}

func validateVDClientNamespaces(in VirtualDestinationIntent) Errors {
	var errs Errors
	ns := in.Namespace
	if ns == "" {
		ns = DefaultIstioNS
	}
	seen := map[string]bool{}
	for i, n := range in.Clients.Namespaces {
		at := Root("clients").Attr("namespaces").Index(i)
		switch {
		case n == "*" && len(in.Clients.Namespaces) > 1:
			errs.Add(Errorf(at, "Invalid namespace", "\"*\" (all namespaces) cannot be combined with other namespaces."))
		case n == "*":
		case !validDNSLabel(n):
			errs.Add(Errorf(at, "Invalid namespace", "Namespace %q must be a DNS-1123 label or \"*\".", n))
		case n == ns:
			errs.Add(Errorf(at, "Invalid namespace",
				"Namespace %q holds the objects and the east-west gateway, which must see only the backend-side ServiceEntry; clients cannot run there.", n))
		case seen[n]:
			errs.Add(Errorf(at, "Duplicate namespace", "Namespace %q is listed twice.", n))
		}
		seen[n] = true
	}
	return errs
}

// Generic validators, shared by every intent's validation.

var (
	dnsLabelRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1035LabelRE = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
)

// validDNSLabel reports whether s is a DNS-1123 label (Kubernetes namespace
// and object names without dots): at most 63 lowercase letters, digits and
// '-', starting and ending with a letter or digit.
func validDNSLabel(s string) bool { return len(s) <= 63 && dnsLabelRE.MatchString(s) }

// validDNS1035Label reports whether s is a DNS-1035 label (Kubernetes
// Service names): a DNS-1123 label that starts with a letter.
func validDNS1035Label(s string) bool { return len(s) <= 63 && dns1035LabelRE.MatchString(s) }

// validDNSSubdomain reports whether s is a DNS-1123 subdomain: dot-separated
// DNS-1123 labels, at most 253 characters.
func validDNSSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if !validDNSLabel(l) {
			return false
		}
	}
	return true
}

// validHostname reports whether s is a fully qualified mesh hostname: a
// DNS-1123 subdomain with at least two labels, not an IP address, without
// wildcard or trailing dot.
func validHostname(s string) bool {
	if !validDNSSubdomain(s) || !strings.Contains(s, ".") {
		return false
	}
	_, err := netip.ParseAddr(s)
	return err != nil
}

// validIPOrHostname reports whether s is an IP address or a DNS name, as
// Istio requires of a ServiceEntry endpoint address with DNS resolution.
func validIPOrHostname(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	return validDNSSubdomain(strings.ToLower(s))
}

// validPort reports whether n is a TCP port, 1 to 65535.
func validPort(n int64) bool { return n >= 1 && n <= 65535 }

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

// validDuration checks a Go duration string ("10s", "1m30s", "500ms") that
// will be written to an Istio duration field: the CRD requires at least 1ms
// and Istio's validation a whole number of milliseconds.
func validDuration(s string) error {
	d, err := time.ParseDuration(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a duration such as \"10s\" or \"500ms\"", s)
	case d < time.Millisecond:
		return fmt.Errorf("%q is shorter than 1ms", s)
	case d%time.Millisecond != 0:
		return fmt.Errorf("%q is not a whole number of milliseconds", s)
	}
	return nil
}

// vdValidateVIP accepts an explicit VIP: one IP address that no sidecar
// could mistake for a real destination and that Istio does not hand out
// itself.
func vdValidateVIP(vip string) error {
	ip, err := netip.ParseAddr(vip)
	switch {
	case err != nil:
		return Errorf(Root("vip"), "Invalid VIP", "VIP %q is not an IP address.", vip)
	case ip.IsLoopback() || ip.IsUnspecified() || ip.IsMulticast():
		return Errorf(Root("vip"), "Invalid VIP", "VIP %s is a loopback, unspecified or multicast address; pick an unused address, e.g. in 241.0.0.0/8.", vip)
	case istioAutoAllocated.Contains(ip):
		return Errorf(Root("vip"), "Invalid VIP", "VIP %s is in 240.240.0.0/16, from which Istio allocates ServiceEntry addresses itself; pick another, e.g. in 241.0.0.0/8.", vip)
	}
	return nil
}

var istioAutoAllocated = netip.MustParsePrefix("240.240.0.0/16")
