// Package fluxtest puts what Flux's controllers leave on a cluster into
// client-go's fake dynamic client, for the tests of the engine and of the
// composition above it: a Kustomization with its OCIRepository, and the
// labels kustomize-controller puts on what it applies.
package fluxtest

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/flux"
)

// Labels are the labels kustomize-controller puts on what Kustomization
// flux-system/<name> applies.
func Labels(name string) map[string]string {
	return map[string]string{"kustomize.toolkit.fluxcd.io/name": name, "kustomize.toolkit.fluxcd.io/namespace": "flux-system"}
}

// Kustomization creates Kustomization flux-system/<name> in d, applying
// OCIRepository flux-system/<name> of url and tag.
func Kustomization(t testing.TB, d *dynamicfake.FakeDynamicClient, name, url, tag string) {
	t.Helper()
	k := &unstructured.Unstructured{Object: map[string]any{"apiVersion": flux.KustomizeAPIVersion, "kind": flux.KustomizationKind,
		"spec": map[string]any{"prune": true, "sourceRef": map[string]any{"kind": flux.OCIRepositoryKind, "name": name}}}}
	k.SetNamespace("flux-system")
	k.SetName(name)
	src := &unstructured.Unstructured{Object: map[string]any{"apiVersion": flux.SourceAPIVersion, "kind": flux.OCIRepositoryKind,
		"spec": map[string]any{"url": url, "ref": map[string]any{"tag": tag}}}}
	src.SetNamespace("flux-system")
	src.SetName(name)
	for kind, o := range map[string]*unstructured.Unstructured{flux.KustomizationKind: k, flux.OCIRepositoryKind: src} {
		if err := d.Tracker().Create(flux.Resources[kind], o, "flux-system"); err != nil {
			t.Fatal(err)
		}
	}
}
