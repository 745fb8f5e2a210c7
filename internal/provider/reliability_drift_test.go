package provider

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// Tamper-evident drift: a field another manager sets in the spec of an
// object the provider wrote is drift, even one the provider never sets.
// kubectl edit (a plain update, field manager "kubectl-edit") adds rules to
// the deny-all AuthorizationPolicy, and adds a selector to the mesh-wide
// PeerAuthentication and changes its mode. The plan shows each object,
// naming the cluster, the manager and the field; apply restores both specs
// byte for byte. A label another tool adds is not drift and stays.
func TestAccReliability_tamperEvidentDrift(t *testing.T) {
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "cluster", Name: "east"})
	w.write(providerConfig(t, "") + meshClusterConfig("east", "  mtls_mode    = \"STRICT\"\n  default_deny = true"))
	w.apply()
	specOf := func(gvr schema.GroupVersionResource, name string) string {
		t.Helper()
		o := getObject(t, "east", gvr, "istio-system", name)
		if o == nil {
			t.Fatalf("no %s %s in east", gvr.Resource, name)
		}
		raw, err := json.Marshal(o.Object["spec"])
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	deny, pa := specOf(gvrAuthz, "mesh-default-deny"), specOf(gvrPeerAuth, "default")
	edit := func(gvr schema.GroupVersionResource, name, patch string) {
		t.Helper()
		if _, err := dyn(t, "east").Resource(gvr).Namespace("istio-system").Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
	}

	// A label of another tool: no drift.
	edit(gvrAuthz, "mesh-default-deny", `{"metadata":{"labels":{"argocd.argoproj.io/instance":"platform"}}}`)
	w.planIsEmpty()

	edit(gvrAuthz, "mesh-default-deny", `{"spec":{"rules":[{}]}}`)
	edit(gvrPeerAuth, "default", `{"spec":{"selector":{"matchLabels":{"app":"legacy"}},"mtls":{"mode":"PERMISSIVE"}}}`)
	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 2 {
		t.Fatalf("the edits are not drift (plan exit %d):\n%s", code, out)
	}
	for _, want := range []string{
		`Drift in AuthorizationPolicy istio-system/mesh-default-deny in cluster east`, `.spec.rules set by field manager "kubectl-edit"`,
		`Drift in PeerAuthentication istio-system/default in cluster east`, `.spec.selector`,
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	w.apply()
	if got := specOf(gvrAuthz, "mesh-default-deny"); got != deny {
		t.Errorf("deny-all not restored: spec %s, want %s", got, deny)
	}
	if got := specOf(gvrPeerAuth, "default"); got != pa {
		t.Errorf("PeerAuthentication not restored: spec %s, want %s", got, pa)
	}
	if l := getObject(t, "east", gvrAuthz, "istio-system", "mesh-default-deny").GetLabels(); l["argocd.argoproj.io/instance"] != "platform" {
		t.Errorf("the other tool's label was removed: %v", l)
	}
	w.planIsEmpty()

	// A client that names itself like the provider's field managers
	// (kubectl edit --field-manager, kubectl apply --server-side
	// --field-manager): drift all the same, judged by content.
	for _, manager := range []string{"terraform-provider-mesh/x", "terraform-provider-mesh/cluster.east"} {
		for _, apply := range []bool{false, true} {
			if apply {
				// What `kubectl get -o yaml`, edited and applied, sends: the
				// object's labels, and a rule.
				labels, err := json.Marshal(getObject(t, "east", gvrAuthz, "istio-system", "mesh-default-deny").GetLabels())
				if err != nil {
					t.Fatal(err)
				}
				body := `{"apiVersion":"security.istio.io/v1","kind":"AuthorizationPolicy","metadata":{"name":"mesh-default-deny","namespace":"istio-system","labels":` + string(labels) + `},"spec":{"rules":[{"from":[{"source":{"namespaces":["intruder"]}}]}]}}`
				force := true
				if _, err := dyn(t, "east").Resource(gvrAuthz).Namespace("istio-system").Patch(context.Background(), "mesh-default-deny", types.ApplyPatchType, []byte(body), metav1.PatchOptions{FieldManager: manager, Force: &force}); err != nil {
					t.Fatal(err)
				}
			} else {
				if _, err := dyn(t, "east").Resource(gvrAuthz).Namespace("istio-system").Patch(context.Background(), "mesh-default-deny", types.MergePatchType, []byte(`{"spec":{"rules":[{"from":[{"source":{"namespaces":["intruder"]}}]}]}}`), metav1.PatchOptions{FieldManager: manager}); err != nil {
					t.Fatal(err)
				}
			}
			if out, code := w.run("plan", "-detailed-exitcode"); code != 2 {
				t.Fatalf("a rule added to the deny-all policy by a client named %q (server-side apply %v) is not drift (plan exit %d):\n%s", manager, apply, code, out)
			}
			w.apply()
			if got := specOf(gvrAuthz, "mesh-default-deny"); got != deny {
				t.Fatalf("deny-all not restored after the edit by %q (server-side apply %v): spec %s, want %s", manager, apply, got, deny)
			}
			w.planIsEmpty()
		}
	}
}

// The same for an object the provider only contributes to: a gateway
// kubectl edit adds to the VirtualService that traffic policies compose is
// drift for every policy in it, and apply restores the composed spec.
func TestAccReliability_tamperEvidentDriftComposed(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: "rel-drift"})
	w.write(providerConfig(t, "") + relVDConfig("vd", "rel-drift", 8080, `["east", "west"]`) + `
resource "mesh_traffic_policy" "slow" {
  name        = "slow"
  destination = { virtual_destination = mesh_virtual_destination.vd.hostname }
  sources     = { clusters = ["east"] }
  timeout     = "3s"
}
`)
	w.apply()
	vsSpec := func() string {
		t.Helper()
		o := getObject(t, "east", gvrVS, "istio-system", "tp-rel-drift.global")
		if o == nil {
			t.Fatal("no composed VirtualService in east")
		}
		raw, err := json.Marshal(o.Object["spec"])
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	want := vsSpec()
	if _, err := dyn(t, "east").Resource(gvrVS).Namespace("istio-system").Patch(context.Background(), "tp-rel-drift.global", types.MergePatchType,
		[]byte(`{"spec":{"gateways":["istio-system/mesh-cross-network"]}}`), metav1.PatchOptions{FieldManager: "kubectl-edit"}); err != nil {
		t.Fatal(err)
	}
	out, code := w.run("plan", "-detailed-exitcode")
	flat := strings.Join(strings.Fields(out), " ")
	if code != 2 || !strings.Contains(flat, `Drift in VirtualService istio-system/tp-rel-drift.global in cluster east`) || !strings.Contains(flat, `.spec.gateways set by field manager "kubectl-edit"`) {
		t.Fatalf("the added gateway is not shown as drift naming the manager and field (exit %d):\n%s", code, out)
	}
	w.apply()
	if got := vsSpec(); got != want {
		t.Errorf("composed spec not restored: %s, want %s", got, want)
	}
	w.planIsEmpty()
}
