package flux

import "testing"

// R8. The bootstrap Kustomization names no serviceAccountName, so
// kustomize-controller applies the artifact with its own service account
// (cluster-admin in a standard Flux install). Whoever can push the tag
// (the registry credentials of every runner, a registry admin) can then
// create any object in the pull cluster: a ClusterRoleBinding, a
// privileged pod. With the artifact's foreign objects neither shown nor
// removed by the provider (engine TestReviewRepushedTagWithAnExtraObject...),
// this is silent. A least-privilege account (Istio networking/security
// objects and the records ConfigMaps) or OCIRepository verification
// would bound it.
func TestReviewBootstrapImpersonatesALeastPrivilegeAccount(t *testing.T) {
	objs, err := Bootstrap{Name: "mesh-prod", Repository: "registry.example.com/mesh/east", Tag: "prod"}.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != KustomizationKind {
			continue
		}
		spec, _ := o.Object["spec"].(map[string]any)
		if spec["serviceAccountName"] == nil {
			t.Errorf("Kustomization %s applies the artifact as kustomize-controller itself (no spec.serviceAccountName): registry push rights are cluster-admin on the pull cluster", o.GetName())
		}
	}
}
