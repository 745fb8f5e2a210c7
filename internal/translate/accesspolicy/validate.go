package accesspolicy

import (
	"maps"
	"slices"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"

	"fmt"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks what an access policy can be checked for
// without the cluster registry: names, the destination's shape, sources and
// rules. It returns every problem, each with the Terraform attribute path
// that caused it; the provider can call it from ValidateConfig, before the
// registry is configured. Translate calls it too, and adds the
// checks that need the registry (unknown clusters, trust domains). Values
// not known yet (Unknown placeholders) are not checked.
func Validate(in Intent, dest Destination) translate.Errors {
	var errs translate.Errors
	errs.Add(translate.CheckIntentName(translate.Root("name"), in.Name, NamePrefix, "it names the AuthorizationPolicies ("+NamePrefix+"<name>) this policy owns"))
	errs = append(errs, validateDestination(dest)...)
	if len(in.Sources) == 0 {
		errs.Add(translate.Errorf(translate.Root("sources"), "No sources",
			"An access policy needs at least one source (namespace, service_account, and the clusters they run in); without one it would allow nothing."))
	}
	for i, s := range in.Sources {
		at := translate.Root("sources").Index(i)
		errs.Add(translate.RequiredKubeName(at.Attr("namespace"), "namespace", s.Namespace, validation.IsDNS1123Label))
		errs.Add(translate.RequiredKubeName(at.Attr("service_account"), "service account", s.ServiceAccount, validation.IsDNS1123Subdomain))
	}
	for i, r := range in.Rules {
		at := translate.Root("rules").Index(i)
		for j, m := range r.Methods {
			errs.Add(translate.CheckHTTPMethod(at.Attr("methods").Index(j), m))
		}
		for j, p := range r.Paths {
			errs.Add(path(at.Attr("paths").Index(j), p))
		}
		for j, p := range r.Ports {
			errs.Add(port(at.Attr("ports").Index(j), p))
		}
	}
	return errs
}

// validateDestination checks the destination: a virtual destination or a
// service with its namespace, and valid workload labels.
func validateDestination(dest Destination) translate.Errors {
	at := translate.Root("destination")
	errs := translate.CheckDestinationChoice(at, dest.VirtualDestination, dest.Service, dest.Namespace)
	// A virtual destination's backends come from its own (validated)
	// intent; checked again because their namespaces name our objects.
	for i, b := range dest.Backends {
		if msgs := validation.IsDNS1123Label(b.Namespace); len(msgs) > 0 && !translate.IsUnknown(b.Namespace) {
			errs.Add(translate.Errorf(at.Attr("virtual_destination"), "Invalid backend namespace",
				"Backend %d (cluster %q) of virtual destination %q has namespace %q, which is not a Kubernetes namespace name: %s.",
				i, b.Cluster, dest.VirtualDestination, b.Namespace, strings.Join(msgs, "; ")))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(dest.WorkloadLabels)) {
		v := dest.WorkloadLabels[k]
		kat := at.Attr("workload_labels").Key(k)
		if msgs := validation.IsQualifiedName(k); len(msgs) > 0 && !translate.IsUnknown(k) {
			errs.Add(translate.Errorf(kat, "Invalid workload label",
				"The label key %q is not a valid Kubernetes label key: %s.", k, strings.Join(msgs, "; ")))
		}
		if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 && !translate.IsUnknown(v) {
			errs.Add(translate.Errorf(kat, "Invalid workload label",
				"The value %q of label %q is not a valid Kubernetes label value: %s.", v, k, strings.Join(msgs, "; ")))
		}
	}
	return errs
}

// pathLiteral is a path segment Envoy accepts around a path template
// operator: RFC 3986 pchar, as Istio checks it.
var pathLiteral = regexp.MustCompile(`^[a-zA-Z0-9-._~%!$&'()+,;:@=]+$`)

// path checks a path against Istio's matching: exact ("/users"), prefix
// ("/users/*"), suffix ("*.json"), any ("*"), or an Envoy URI template
// with {*} (one segment) and {**} (the rest, last).
func path(at translate.Path, p string) error {
	bad := func(format string, args ...any) error {
		return translate.Errorf(at, "Invalid path", "Path %q is not valid: %s.", p, fmt.Sprintf(format, args...))
	}
	switch {
	case translate.IsUnknown(p):
		return nil
	case p == "":
		return bad("a path must not be empty; omit paths to allow any path")
	case p == "*":
		return nil
	case strings.ContainsAny(p, "?#"):
		return bad("Istio matches the path without query string or fragment; remove what follows ? or #")
	case strings.IndexFunc(p, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0:
		return bad("a path must not contain spaces or control characters")
	}
	if strings.Contains(p, "{*}") || strings.Contains(p, "{**}") {
		return pathTemplate(p, bad)
	}
	if strings.ContainsAny(p, "{}") {
		return bad("{ and } are allowed only in the path template operators {*} and {**}")
	}
	switch n := strings.Count(p, "*"); {
	case n > 1:
		return bad("Istio supports one * only, at the start (suffix match) or the end (prefix match)")
	case n == 1 && strings.HasPrefix(p, "*"):
		return nil
	case n == 1 && !strings.HasSuffix(p, "*"):
		return bad("a * in the middle is matched literally by Istio; put it at the start (suffix match) or the end (prefix match), or use the path template {*}")
	case !strings.HasPrefix(p, "/"):
		return bad("a path must start with / (or with * for a suffix match)")
	}
	return nil
}

// pathTemplate applies Istio's rules for path templates.
func pathTemplate(p string, bad func(string, ...any) error) error {
	if !strings.HasPrefix(p, "/") {
		return bad("a path template must start with /")
	}
	seenAny := false
	for _, seg := range strings.Split(strings.Trim(p, "/"), "/") {
		switch {
		case seg == "{*}" || seg == "{**}":
			if seenAny {
				return bad("{**} must be the last operator of a path template")
			}
			if seg == "{**}" {
				seenAny = true
			}
		case strings.ContainsAny(seg, "{}*"):
			return bad("in a path template, *, { and } may appear only as a whole segment {*} or {**}")
		case !pathLiteral.MatchString(seg):
			return bad("the segment %q has characters a path template does not allow", seg)
		}
	}
	return nil
}

func port(at translate.Path, port int) error {
	if port < 1 || port > 65535 {
		return translate.Errorf(at, "Invalid port", "Port %d is out of range: use 1-65535, the port the destination workloads listen on.", port)
	}
	return nil
}
