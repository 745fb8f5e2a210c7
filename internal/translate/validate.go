package translate

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Checks shared by the policies' validators. Each returns nil for values
// not known yet (Unknown placeholders).

// checkIntentName checks an intent's name: a DNS-1123 label short enough
// that prefix+name still is one. purpose says what the name is used for.
func checkIntentName(at Path, name, prefix, purpose string) error {
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

// requiredKubeName checks a required Kubernetes name with one of the
// apimachinery validators (validation.IsDNS1123Label, ...); what names it
// in messages ("namespace", "service account").
func requiredKubeName(at Path, what, v string, valid func(string) []string) error {
	if v == "" {
		return Errorf(at, "Missing "+what, "Set the %s.", what)
	}
	return optionalKubeName(at, what, v, valid)
}

// optionalKubeName is requiredKubeName for a name that may be left empty.
func optionalKubeName(at Path, what, v string, valid func(string) []string) error {
	if v == "" || IsUnknown(v) {
		return nil
	}
	if msgs := valid(v); len(msgs) > 0 {
		return Errorf(at, "Invalid "+what, "%q is not a valid Kubernetes %s name: %s.", v, what, strings.Join(msgs, "; "))
	}
	return nil
}

// httpMethods are the methods requests are matched on (RFC 9110 and
// PATCH). Envoy compares the :method header exactly, so case matters.
var httpMethods = []string{"CONNECT", "DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT", "TRACE"}

func checkHTTPMethod(at Path, m string) error {
	if m == "" || IsUnknown(m) {
		return nil
	}
	for _, ok := range httpMethods {
		if m == ok {
			return nil
		}
	}
	upper := strings.ToUpper(m)
	for _, ok := range httpMethods {
		if upper == ok {
			return Errorf(at, "Invalid method", "HTTP methods are matched exactly and are upper case: use %q, not %q.", upper, m)
		}
	}
	return Errorf(at, "Invalid method", "%q is not an HTTP method; use one of %s (gRPC calls are POST).", m, strings.Join(httpMethods, ", "))
}

// checkDestinationChoice checks a policy's destination: either a virtual
// destination (by hostname) or a Kubernetes service with its namespace.
func checkDestinationChoice(at Path, virtualDestination, service, namespace string) Errors {
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
		errs.Add(requiredKubeName(at.Attr("service"), "service", service, validation.IsDNS1035Label))
		errs.Add(requiredKubeName(at.Attr("namespace"), "namespace", namespace, validation.IsDNS1123Label))
	}
	return errs
}
