package provider

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// newerManager is the composer of a newer provider build (another
// field_manager base).
const newerManager = "terraform-provider-mesh-next/traffic-policy-composer"

// versionSkewConfig is user.global with this build's policy "mine" from
// east.
func versionSkewConfig(t *testing.T, timeout string) string {
	return providerConfig(t, "") + trafficVD + `
resource "mesh_traffic_policy" "mine" {
  name        = "mine"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
  sources     = { clusters = ["east"] }
  timeout     = "` + timeout + `"
}
`
}

// A contribution written by a newer provider build (format version 99,
// with a field this build does not know) on the VirtualService this
// build's policy shares stays byte for byte through this build's apply,
// plan and destroy. Readable (its min is this build's version), it is
// composed; unreadable (min 99), the plan and the destroy fail naming the
// format and provider versions, and nothing is written.
func TestAccComposition_newerContributionFormat(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil)
	ctx := context.Background()
	vs := func() *unstructured.Unstructured {
		return getObject(t, "east", gvrVS, "istio-system", "tp-user.global")
	}
	t.Cleanup(func() {
		// The newer build's contribution keeps the object after this
		// build's policy is gone; the newer build would release it.
		if err := dyn(t, "east").Resource(gvrVS).Namespace("istio-system").Delete(ctx, "tp-user.global", metav1.DeleteOptions{}); err != nil && vs() != nil {
			t.Errorf("deleting the VirtualService left by the newer build: %v", err)
		}
	})
	w.write(versionSkewConfig(t, "2s"))
	w.apply()
	// The newer build's contribution: policy "future" on the same
	// destination as ours, its own requests, written by its composer.
	var c map[string]any
	if err := json.Unmarshal([]byte(vs().GetAnnotations()[contribPrefix+"mine"]), &c); err != nil {
		t.Fatal(err)
	}
	policy := c["policy"].(map[string]any)
	policy["name"] = "future"
	delete(policy, "timeout")
	policy["match"] = []any{map[string]any{"uriPrefix": "/future"}}
	policy["retries"] = map[string]any{"attempts": 7}
	c["v"], c["provider"], c["workspace"], c["quantumRouting"] = 99, "9.0.0", "team-future", map[string]any{"entangled": true}
	delete(c, "config")
	fixture := func(min int) string {
		c["min"] = min
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		patch, err := json.Marshal(map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
			"metadata": map[string]any{"name": "tp-user.global", "namespace": "istio-system",
				"annotations": map[string]any{contribPrefix + "future": string(raw)}, "labels": map[string]any{contribPrefix + "future": "id-future"}}})
		if err != nil {
			t.Fatal(err)
		}
		force := true
		if _, err := dyn(t, "east").Resource(gvrVS).Namespace("istio-system").Patch(ctx, "tp-user.global", "application/apply-patch+yaml", patch,
			metav1.PatchOptions{FieldManager: newerManager, Force: &force}); err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	kept := func(when, want string) *unstructured.Unstructured {
		t.Helper()
		o := vs()
		if o == nil || o.GetAnnotations()[contribPrefix+"future"] != want || o.GetLabels()[contribPrefix+"future"] != "id-future" {
			t.Fatalf("after %s: the newer build's contribution was changed or removed: %v", when, o)
		}
		return o
	}
	spec := func(o *unstructured.Unstructured) string {
		raw, err := json.Marshal(o.Object["spec"])
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}

	// Readable: composed with ours, kept byte for byte.
	readable := fixture(2)
	w.write(versionSkewConfig(t, "3s"))
	w.apply()
	if s := spec(kept("this build's apply", readable)); !strings.Contains(s, `"attempts":7`) || !strings.Contains(s, `"3s"`) {
		t.Fatalf("composed spec %s: want the newer policy's route and ours", s)
	}
	w.planIsEmpty()
	kept("this build's plan", readable)

	// Unreadable: plan, apply and destroy fail and write nothing.
	unreadable := fixture(99)
	before := kept("writing the unreadable fixture", unreadable).GetResourceVersion()
	w.write(versionSkewConfig(t, "4s"))
	out, code := w.run("plan")
	for _, want := range []string{"Contribution in a newer format", `traffic policy "future"`, "format version 99", "9.0.0 or later", "tp-user.global"} {
		if code == 0 || !strings.Contains(flatOut(out), want) {
			t.Fatalf("plan (exit %d) does not fail naming %q:\n%s", code, want, out)
		}
	}
	w.applyFails()
	out, code = w.run("destroy", "-auto-approve")
	if code == 0 || !strings.Contains(flatOut(out), "format version 99") {
		t.Fatalf("destroy (exit %d) does not fail naming format version 99:\n%s", code, out)
	}
	if o := kept("this build's failed plan, apply and destroy", unreadable); o.GetResourceVersion() != before {
		t.Fatalf("the object was written (resourceVersion %s, was %s)", o.GetResourceVersion(), before)
	}

	// Readable again (the newer build's min lowered): this build's destroy
	// releases its policy and leaves the newer one's.
	readable = fixture(2)
	w.write(versionSkewConfig(t, "3s"))
	w.destroy()
	o := kept("this build's destroy", readable)
	if _, ok := o.GetAnnotations()[contribPrefix+"mine"]; ok {
		t.Fatalf("this build's contribution is still there after destroy: %v", o.GetAnnotations())
	}
	if s := spec(o); !strings.Contains(s, `"attempts":7`) || strings.Contains(s, `"3s"`) {
		t.Fatalf("spec after destroy %s: want the newer policy's route alone", s)
	}
}

// flatOut is Terraform's output with its line wrapping and diagnostic
// frames undone (every run of white space one space).
func flatOut(out string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(out, "│", " ")), " ")
}
