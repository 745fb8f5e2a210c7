package flux

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// The bootstrap Kustomization names no serviceAccountName, so
// kustomize-controller applies the artifact with its own service account
// (cluster-admin in a standard Flux install). Whoever can push the tag
// (the registry credentials of every runner, a registry admin) can then
// create any object in the pull cluster: a ClusterRoleBinding, a
// privileged pod. With the artifact's foreign objects neither shown nor
// removed by the provider (engine TestPullForeignObjectInTheArtifactIsDriftTheApplyRemoves),
// this is silent. A least-privilege account (Istio networking/security
// objects and the records ConfigMaps) or OCIRepository verification
// would bound it.
func TestBootstrapKustomizationImpersonatesALeastPrivilegeAccount(t *testing.T) {
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

// The account's rules cover exactly the Istio kinds the intents write, and
// ConfigMaps only in the records namespace: no other kind, no other
// namespace, nothing cluster-wide but the Istio kinds.
func TestBootstrapAccountMayWriteOnlyWhatTheProviderWrites(t *testing.T) {
	want := map[string]bool{}
	for _, w := range intentkind.Written() {
		if w.Group != "" {
			plural := strings.ToLower(w.Kind) + "s"
			if strings.HasSuffix(plural, "ys") && !strings.HasSuffix(plural, "ays") {
				plural = strings.TrimSuffix(plural, "ys") + "ies"
			}
			want[w.Group+"/"+plural] = true
		}
	}
	got := map[string]bool{}
	for g, rs := range IstioResources {
		for _, r := range rs {
			got[g+"/"+r] = true
		}
	}
	for k := range want {
		if !got[k] {
			t.Errorf("the intents write %s, which the account may not", k)
		}
	}
	for k := range got {
		if !want[k] {
			t.Errorf("the account may write %s, which no intent writes", k)
		}
	}
	objs, err := Bootstrap{Name: "m", Repository: "r.example.com/m", Tag: "t", RecordsNamespace: "records", Namespaces: []string{"users"}}.Objects()
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "ClusterRole", "ClusterRoleBinding":
			t.Errorf("%s %s with Namespaces set: want Roles in those namespaces only", o.GetKind(), o.GetName())
		case "Role":
			rules, _, _ := unstructured.NestedSlice(o.Object, "rules")
			for _, r := range rules {
				rm, _ := r.(map[string]any)
				for _, res := range rm["resources"].([]any) {
					if res == "configmaps" && o.GetNamespace() != "records" {
						t.Errorf("Role %s/%s grants configmaps outside the records namespace", o.GetNamespace(), o.GetName())
					}
				}
			}
			if ns := o.GetNamespace(); ns != "users" && ns != "records" {
				t.Errorf("Role in namespace %s, want users or records only", ns)
			}
		}
	}
}
