package flux

import (
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
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
	// into a namespace that exists.
	RecordsNamespace string
}

// Objects returns the bootstrap objects, in the order to apply them: the
// records Namespace if any, the OCIRepository, the Kustomization.
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
			"sourceRef": map[string]any{"kind": OCIRepositoryKind, "name": b.Name, "namespace": ns},
			"path":      "./",
			"prune":     true,
			"wait":      false,
			"interval":  interval,
		},
	}})
	return out, nil
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
