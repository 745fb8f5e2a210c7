package translate

import (
	"net/netip"
	"regexp"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Checks shared by the policies' validators. Each returns nil for values
// not known yet (Unknown placeholders).

// CheckIntentName checks an intent's name: a DNS-1123 label short enough
// that prefix+name still is one. purpose says what the name is used for.
func CheckIntentName(at Path, name, prefix, purpose string) error {
	max := validation.DNS1123LabelMaxLength - len(prefix)
	switch {
	case IsUnknown(name):
		return nil
	case name == "":
		return Errorf(at, "Missing name", "Set name: %s.", purpose)
	case len(name) > max:
		return Errorf(at, "Invalid name", "The name %q is %d characters long; at most %d fit in the object name %s<name>.",
			name, len(name), max, prefix)
	}
	if msgs := validation.IsDNS1123Label(name); len(msgs) > 0 {
		return Errorf(at, "Invalid name", "The name %q must be a DNS-1123 label, as it names Kubernetes objects and field managers: %s.",
			name, strings.Join(msgs, "; "))
	}
	return nil
}

// RequiredKubeName checks a required Kubernetes name with one of the
// apimachinery validators (validation.IsDNS1123Label, ...); what names it
// in messages ("namespace", "service account").
func RequiredKubeName(at Path, what, v string, valid func(string) []string) error {
	if v == "" {
		return Errorf(at, "Missing "+what, "Set the %s.", what)
	}
	return OptionalKubeName(at, what, v, valid)
}

// OptionalKubeName is RequiredKubeName for a name that may be left empty.
func OptionalKubeName(at Path, what, v string, valid func(string) []string) error {
	if v == "" || IsUnknown(v) {
		return nil
	}
	if msgs := valid(v); len(msgs) > 0 {
		return Errorf(at, "Invalid "+what, "%q is not a valid Kubernetes %s name: %s.", v, what, strings.Join(msgs, "; "))
	}
	return nil
}

// HTTPMethods are the methods requests are matched on (RFC 9110 and
// PATCH). Envoy compares the :method header exactly, so case matters.
var HTTPMethods = []string{"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}

func CheckHTTPMethod(at Path, m string) error {
	if m == "" || IsUnknown(m) {
		return nil
	}
	for _, ok := range HTTPMethods {
		if m == ok {
			return nil
		}
	}
	upper := strings.ToUpper(m)
	for _, ok := range HTTPMethods {
		if upper == ok {
			return Errorf(at, "Invalid method", "HTTP methods are matched exactly and are upper case: use %q, not %q.", upper, m)
		}
	}
	return Errorf(at, "Invalid method", "%q is not an HTTP method; use one of %s (gRPC calls are POST).", m, strings.Join(HTTPMethods, ", "))
}

// CheckDestinationChoice checks a policy's destination: either a virtual
// destination (by hostname) or a Kubernetes service with its namespace.
func CheckDestinationChoice(at Path, virtualDestination, service, namespace string) Errors {
	var errs Errors
	switch {
	case virtualDestination != "" && service != "":
		errs.Add(Errorf(at, "Conflicting destination",
			"Set either virtual_destination or service (with namespace), not both."))
	case virtualDestination == "" && service == "":
		errs.Add(Errorf(at, "Missing destination",
			"Set virtual_destination to the hostname of a mesh_virtual_destination, or service and namespace to a Kubernetes service."))
	case virtualDestination != "":
		if namespace != "" {
			errs.Add(Errorf(at.Attr("namespace"), "Namespace with a virtual destination",
				"namespace applies only with service: a virtual destination names its backends' namespaces itself. Remove it."))
		}
	default:
		errs.Add(RequiredKubeName(at.Attr("service"), "service", service, validation.IsDNS1035Label))
		errs.Add(RequiredKubeName(at.Attr("namespace"), "namespace", namespace, validation.IsDNS1123Label))
	}
	return errs
}

// Generic validators, shared by every intent's validation.

var (
	dns1035LabelRE = regexp.MustCompile(`^[a-z]([-a-z0-9]*[a-z0-9])?$`)
)

// ValidDNSLabel reports whether s is a DNS-1123 label (Kubernetes namespace
// and object names without dots): at most 63 lowercase letters, digits and
// '-', starting and ending with a letter or digit.
func ValidDNSLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' {
			return false
		}
	}
	return true
}

// ValidDNS1035Label reports whether s is a DNS-1035 label (Kubernetes
// Service names): a DNS-1123 label that starts with a letter.
func ValidDNS1035Label(s string) bool { return len(s) <= 63 && dns1035LabelRE.MatchString(s) }

// ValidDNSSubdomain reports whether s is a DNS-1123 subdomain: dot-separated
// DNS-1123 labels, at most 253 characters.
func ValidDNSSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, l := range strings.Split(s, ".") {
		if !ValidDNSLabel(l) {
			return false
		}
	}
	return true
}

// ValidHostname reports whether s is a fully qualified mesh hostname: a
// DNS-1123 subdomain with at least two labels, not an IP address, without
// wildcard or trailing dot.
func ValidHostname(s string) bool {
	if !ValidDNSSubdomain(s) || !strings.Contains(s, ".") {
		return false
	}
	_, err := netip.ParseAddr(s)
	return err != nil
}

// ValidIPOrHostname reports whether s is an IP address or a DNS name, as
// Istio requires of a ServiceEntry endpoint address with DNS resolution.
func ValidIPOrHostname(s string) bool {
	if _, err := netip.ParseAddr(s); err == nil {
		return true
	}
	return ValidDNSSubdomain(strings.ToLower(s))
}

// ValidPort reports whether n is a TCP port, 1 to 65535.
func ValidPort(n int64) bool { return n >= 1 && n <= 65535 }

// CheckDuration checks an optional Go duration against Istio's rules: at
// least 1ms, whole milliseconds.
func CheckDuration(at Path, v string) error {
	if v == "" || IsUnknown(v) {
		return nil
	}
	d, err := time.ParseDuration(v)
	switch {
	case err != nil:
		return Errorf(at, "Invalid duration", "%q is not a duration; write it like \"500ms\", \"2s\" or \"1m30s\".", v)
	case d < time.Millisecond:
		return Errorf(at, "Invalid duration", "%q is shorter than 1ms, the least Istio accepts.", v)
	case d%time.Millisecond != 0:
		return Errorf(at, "Invalid duration", "%q is not a whole number of milliseconds, the precision Istio accepts.", v)
	}
	return nil
}
