package flux

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/yaml"
)

// API versions of the Flux objects the bootstrap renders, those of Flux
// 2.6 and later (source-controller and kustomize-controller v1.6+).
const (
	SourceAPIVersion    = "source.toolkit.fluxcd.io/v1"
	KustomizeAPIVersion = "kustomize.toolkit.fluxcd.io/v1"
	OCIRepositoryKind   = "OCIRepository"
	KustomizationKind   = "Kustomization"
)

// DefaultNamespace is where Flux's objects live unless told otherwise: the
// namespace Flux's own installation uses.
const DefaultNamespace = "flux-system"

// DefaultInterval is how often Flux looks for a new revision of the
// artifact and reconciles the cluster against it, unless told otherwise.
const DefaultInterval = time.Minute

// Bootstrap describes the Flux objects that deliver one state's artifact
// for one cluster.
type Bootstrap struct {
	// Name of the OCIRepository and of the Kustomization (both get it).
	Name string
	// Namespace of both objects; DefaultNamespace when empty.
	Namespace string
	// Repository is the artifact's repository, "registry.example.com/mesh/east";
	// an "oci://" prefix is accepted and added when missing.
	Repository string
	// Tag the provider publishes the artifact under.
	Tag string
	// Interval between Flux's checks; DefaultInterval when zero.
	Interval time.Duration
	// Insecure lets source-controller use plain HTTP to the registry.
	Insecure bool
	// SecretName names a Secret of type kubernetes.io/dockerconfigjson in
	// Namespace holding the registry's credentials; empty for a registry
	// that needs none.
	SecretName string
	// RecordsNamespace, when set, adds a Namespace object for it: the
	// artifact holds records (ConfigMaps) there, and Flux applies them only
	// into a namespace that exists. The account may write ConfigMaps there
	// and nowhere else.
	RecordsNamespace string
	// Namespaces, when set, are the only namespaces where the account may
	// write the Istio kinds (a Role and RoleBinding in each); empty, it may
	// write them in every namespace (a ClusterRole), and nothing else.
	Namespaces []string
}

// IstioResources are the Istio kinds, by API group, the provider writes
// (intentkind's Writes, checked by a test): all the bootstrap's account
// may write besides the records' ConfigMaps.
var IstioResources = map[string][]string{
	"networking.istio.io": {"destinationrules", "gateways", "serviceentries", "virtualservices"},
	"security.istio.io":   {"authorizationpolicies", "peerauthentications"},
}

// writeVerbs are what kustomize-controller's server-side apply, its
// drift detection and its prune need.
var writeVerbs = []any{"get", "list", "watch", "create", "update", "patch", "delete"}

func istioRules() []any {
	var out []any
	for _, g := range []string{"networking.istio.io", "security.istio.io"} {
		var rs []any
		for _, r := range IstioResources[g] {
			rs = append(rs, r)
		}
		out = append(out, map[string]any{"apiGroups": []any{g}, "resources": rs, "verbs": writeVerbs})
	}
	return out
}

// Objects returns the bootstrap objects, in the order to apply them: the
// records Namespace if any, the ServiceAccount the Kustomization applies
// as and its roles, the OCIRepository, the Kustomization.
//
// The Kustomization names that account (spec.serviceAccountName), so
// kustomize-controller applies the artifact with its rights, not its own
// (cluster-admin in a standard install): whoever can push the tag can
// create the Istio kinds the provider writes, and ConfigMaps in the
// records namespace, nothing else.
func (b Bootstrap) Objects() ([]*unstructured.Unstructured, error) {
	if err := b.validate(); err != nil {
		return nil, err
	}
	ns := b.namespace()
	interval := b.interval().String()
	var out []*unstructured.Unstructured
	if b.RecordsNamespace != "" {
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1",
			"kind":       "Namespace",
			"metadata":   map[string]any{"name": b.RecordsNamespace},
		}})
	}
	out = append(out, b.account()...)
	source := map[string]any{
		"url":      b.url(),
		"ref":      map[string]any{"tag": b.Tag},
		"interval": interval,
	}
	if b.Insecure {
		source["insecure"] = true
	}
	if b.SecretName != "" {
		source["secretRef"] = map[string]any{"name": b.SecretName}
	}
	out = append(out, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": SourceAPIVersion,
		"kind":       OCIRepositoryKind,
		"metadata":   map[string]any{"name": b.Name, "namespace": ns},
		"spec":       source,
	}})
	out = append(out, &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": KustomizeAPIVersion,
		"kind":       KustomizationKind,
		"metadata":   map[string]any{"name": b.Name, "namespace": ns},
		"spec": map[string]any{
			"sourceRef":          map[string]any{"kind": OCIRepositoryKind, "name": b.Name, "namespace": ns},
			"path":               "./",
			"prune":              true,
			"wait":               false,
			"interval":           interval,
			"serviceAccountName": b.Name,
		},
	}})
	return out, nil
}

// account is the ServiceAccount the Kustomization applies as, and what
// it may do: the Istio kinds (in Namespaces, or in every namespace), the
// ConfigMaps of the records namespace.
func (b Bootstrap) account() []*unstructured.Unstructured {
	ns := b.namespace()
	obj := func(apiVersion, kind, name, namespace string, fields map[string]any) *unstructured.Unstructured {
		meta := map[string]any{"name": name}
		if namespace != "" {
			meta["namespace"] = namespace
		}
		o := map[string]any{"apiVersion": apiVersion, "kind": kind, "metadata": meta}
		for k, v := range fields {
			o[k] = v
		}
		return &unstructured.Unstructured{Object: o}
	}
	subjects := []any{map[string]any{"kind": "ServiceAccount", "name": b.Name, "namespace": ns}}
	binding := func(kind, namespace, roleKind, role string) *unstructured.Unstructured {
		return obj("rbac.authorization.k8s.io/v1", kind, role, namespace, map[string]any{
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": roleKind, "name": role},
			"subjects": subjects,
		})
	}
	out := []*unstructured.Unstructured{obj("v1", "ServiceAccount", b.Name, ns, nil)}
	// Names carry the namespace: one account per state and cluster, and
	// cluster-scoped names are shared by every Flux namespace.
	role := b.Name + "-" + ns + "-istio"
	if len(b.Namespaces) == 0 {
		out = append(out, obj("rbac.authorization.k8s.io/v1", "ClusterRole", role, "", map[string]any{"rules": istioRules()}),
			binding("ClusterRoleBinding", "", "ClusterRole", role))
	} else {
		for _, n := range b.Namespaces {
			out = append(out, obj("rbac.authorization.k8s.io/v1", "Role", role, n, map[string]any{"rules": istioRules()}),
				binding("RoleBinding", n, "Role", role))
		}
	}
	if b.RecordsNamespace != "" {
		records := b.Name + "-" + ns + "-records"
		out = append(out, obj("rbac.authorization.k8s.io/v1", "Role", records, b.RecordsNamespace, map[string]any{"rules": []any{
			map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": writeVerbs},
		}}), binding("RoleBinding", b.RecordsNamespace, "Role", records))
	}
	return out
}

// Resources are the API resources of the kinds Objects returns, for a
// client that applies them without discovery.
var Resources = map[string]schema.GroupVersionResource{
	OCIRepositoryKind:    {Group: "source.toolkit.fluxcd.io", Version: "v1", Resource: "ocirepositories"},
	KustomizationKind:    {Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"},
	"Namespace":          {Version: "v1", Resource: "namespaces"},
	"ServiceAccount":     {Version: "v1", Resource: "serviceaccounts"},
	"ClusterRole":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
	"ClusterRoleBinding": {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
	"Role":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
	"RoleBinding":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
}

// YAML renders the bootstrap objects as one multi-document YAML stream,
// ready for kubectl apply -f.
func (b Bootstrap) YAML() ([]byte, error) {
	objs, err := b.Objects()
	if err != nil {
		return nil, err
	}
	var sb strings.Builder
	for i, o := range objs {
		if i > 0 {
			sb.WriteString("---\n")
		}
		y, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("rendering %s %s: %w", o.GetKind(), o.GetName(), err)
		}
		sb.Write(y)
	}
	return []byte(sb.String()), nil
}

func (b Bootstrap) namespace() string {
	if b.Namespace == "" {
		return DefaultNamespace
	}
	return b.Namespace
}

func (b Bootstrap) interval() time.Duration {
	if b.Interval == 0 {
		return DefaultInterval
	}
	return b.Interval
}

func (b Bootstrap) url() string {
	return "oci://" + strings.TrimPrefix(b.Repository, "oci://")
}

// validate names the field at fault and what it must be.
func (b Bootstrap) validate() error {
	for _, f := range []struct{ field, value string }{{"name", b.Name}, {"namespace", b.namespace()}} {
		if errs := validation.IsDNS1123Label(f.value); len(errs) > 0 {
			return fmt.Errorf("bootstrap %s %q: %s", f.field, f.value, strings.Join(errs, "; "))
		}
	}
	if b.RecordsNamespace != "" {
		if errs := validation.IsDNS1123Label(b.RecordsNamespace); len(errs) > 0 {
			return fmt.Errorf("bootstrap records namespace %q: %s", b.RecordsNamespace, strings.Join(errs, "; "))
		}
	}
	for _, n := range b.Namespaces {
		if errs := validation.IsDNS1123Label(n); len(errs) > 0 {
			return fmt.Errorf("bootstrap namespace %q of the Istio objects: %s", n, strings.Join(errs, "; "))
		}
	}
	if b.SecretName != "" {
		if errs := validation.IsDNS1123Subdomain(b.SecretName); len(errs) > 0 {
			return fmt.Errorf("bootstrap secret name %q: %s", b.SecretName, strings.Join(errs, "; "))
		}
	}
	repo := strings.TrimPrefix(b.Repository, "oci://")
	if repo == "" || strings.Contains(repo, "://") || strings.ContainsAny(repo, "@ ") || strings.HasSuffix(repo, "/") {
		return fmt.Errorf("bootstrap repository %q: want <registry>/<path> such as registry.example.com/mesh/east, without a tag or digest", b.Repository)
	}
	if b.Tag == "" {
		return fmt.Errorf("bootstrap tag is empty: the OCIRepository needs the tag the provider publishes")
	}
	if b.Interval < 0 {
		return fmt.Errorf("bootstrap interval %s is negative", b.Interval)
	}
	return nil
}
