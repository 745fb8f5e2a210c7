package engine

import (
	"encoding/json"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

const manager = "terraform-provider-mesh/cluster.east"

func desiredGateway() map[string]any {
	return map[string]any{
		"apiVersion": "networking.istio.io/v1",
		"kind":       "Gateway",
		"metadata": map[string]any{
			"name": "mesh-cross-network", "namespace": "istio-system",
			"labels": map[string]any{LabelManagedBy: ManagedByValue, LabelOwnerKind: "cluster", LabelOwnerName: "east"},
		},
		"spec": map[string]any{
			"selector": map[string]any{"istio": "eastwestgateway"},
			"servers":  []any{map[string]any{"hosts": []any{"*.local"}, "port": map[string]any{"number": 15443, "name": "tls", "protocol": "TLS"}}},
		},
	}
}

// ourFields is what the API server records for our apply of
// desiredGateway: labels and spec fields, lists atomic.
const ourFields = `{"f:metadata":{"f:labels":{"f:app.kubernetes.io/managed-by":{},"f:mesh-intent.io/owner-kind":{},"f:mesh-intent.io/owner-name":{}}},` +
	`"f:spec":{"f:selector":{"f:istio":{}},"f:servers":{}}}`

// liveGateway is desiredGateway as the server returns it: server fields,
// our managed fields, and a label another manager added.
func liveGateway(t *testing.T, mutate func(map[string]any)) *unstructured.Unstructured {
	t.Helper()
	raw, _ := json.Marshal(desiredGateway())
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	meta := m["metadata"].(map[string]any)
	meta["uid"] = "1234"
	meta["resourceVersion"] = "42"
	meta["generation"] = int64(1)
	meta["creationTimestamp"] = "2026-01-01T00:00:00Z"
	meta["labels"].(map[string]any)["team"] = "net"
	if mutate != nil {
		mutate(m)
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetManagedFields([]metav1.ManagedFieldsEntry{
		{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, APIVersion: "networking.istio.io/v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(ourFields)},
		{Manager: "kubectl-label", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "networking.istio.io/v1", FieldsType: "FieldsV1",
			FieldsV1: metav1.NewFieldsV1(`{"f:metadata":{"f:labels":{"f:team":{}}}}`)},
	})
	return u
}

func TestLiveDigestMatchesDesired(t *testing.T) {
	want, err := desiredDigest(desiredGateway())
	if err != nil {
		t.Fatal(err)
	}
	got, err := contentDigest(liveGateway(t, nil), manager)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("an untouched object must digest like what we applied: live %s, desired %s", got, want)
	}
	if len(want) != digestLen {
		t.Fatalf("digest %q has length %d", want, len(want))
	}
}

func TestLiveDigestSeesOwnedFieldChange(t *testing.T) {
	want := mustDigest(t, desiredGateway())
	got, err := contentDigest(liveGateway(t, func(m map[string]any) {
		m["spec"].(map[string]any)["selector"].(map[string]any)["istio"] = "ingressgateway"
	}), manager)
	if err != nil {
		t.Fatal(err)
	}
	if got == want {
		t.Fatal("a changed field we own must change the digest")
	}
}

func TestLiveDigestIgnoresFieldsOfOthers(t *testing.T) {
	want := mustDigest(t, desiredGateway())
	got, err := contentDigest(liveGateway(t, func(m map[string]any) {
		m["metadata"].(map[string]any)["annotations"] = map[string]any{"note": "x"}
		m["status"] = map[string]any{"conditions": []any{}}
	}), manager)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatal("fields we do not own must not change the digest")
	}
}

func TestLiveDigestWhenWeOwnNothing(t *testing.T) {
	want := mustDigest(t, desiredGateway())
	got, err := contentDigest(liveGateway(t, nil), "someone-else")
	if err != nil {
		t.Fatal(err)
	}
	if got == want {
		t.Fatal("an object whose fields we no longer own must not look in sync")
	}
}

func TestEmptySpecDigest(t *testing.T) {
	// A deny-all policy sends spec: {}; the server records no field for it.
	d := map[string]any{"apiVersion": "security.istio.io/v1", "kind": "AuthorizationPolicy",
		"metadata": map[string]any{"name": "deny", "namespace": "istio-system"}, "spec": map[string]any{}}
	a := mustDigest(t, d)
	delete(d, "spec")
	b := mustDigest(t, d)
	if a != b {
		t.Fatal("an empty spec must digest like no spec")
	}
}

// A list-type map (a ServiceEntry's ports) holds elements of several
// managers: only ours count, so another manager's port is no drift.
// Drift is decided by content: an element another manager added to a
// list-type map (a ServiceEntry's ports), or a field it set inside ours,
// changes the digest whatever the manager's name, even one that looks
// like the provider's; a field no manager holds (a server default) does
// not.
func TestContentDigestListMapElementOfAnotherManager(t *testing.T) {
	desired := map[string]any{
		"apiVersion": "networking.istio.io/v1", "kind": "ServiceEntry",
		"metadata": map[string]any{"name": "vd-user", "namespace": "istio-system"},
		"spec": map[string]any{"hosts": []any{"user.global"},
			"ports": []any{map[string]any{"name": "http-8080", "number": int64(8080), "protocol": "HTTP"}}},
	}
	want := mustDigest(t, desired)
	ours := `{"f:spec":{"f:hosts":{},"f:ports":{"k:{\"name\":\"http-8080\"}":{".":{},"f:name":{},"f:number":{},"f:protocol":{}}}}}`
	theirs := `{"f:spec":{"f:ports":{"k:{\"name\":\"metrics\"}":{".":{},"f:name":{},"f:number":{},"f:protocol":{}},"k:{\"name\":\"http-8080\"}":{"f:targetPort":{}}}}}`
	liveWith := func(others ...metav1.ManagedFieldsEntry) *unstructured.Unstructured {
		live := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "networking.istio.io/v1", "kind": "ServiceEntry",
			"metadata": map[string]any{"name": "vd-user", "namespace": "istio-system", "uid": "1"},
			"spec": map[string]any{"hosts": []any{"user.global"}, "resolution": "NONE",
				"ports": []any{
					map[string]any{"name": "http-8080", "number": int64(8080), "protocol": "HTTP", "targetPort": int64(9000)},
					map[string]any{"name": "metrics", "number": int64(15090), "protocol": "HTTP"},
				}},
		}}
		live.SetManagedFields(append([]metav1.ManagedFieldsEntry{
			{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(ours)}}, others...))
		return live
	}
	for _, other := range []string{"other", "terraform-provider-mesh/x", manager} {
		got, err := contentDigest(liveWith(metav1.ManagedFieldsEntry{Manager: other, Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(theirs)}), manager)
		if err != nil {
			t.Fatal(err)
		}
		if got == want {
			t.Fatalf("fields %q set (another list element, a field in ours) must change the digest", other)
		}
	}
	// Nobody holds the other element and field: server defaults.
	got, err := contentDigest(func() *unstructured.Unstructured {
		l := liveWith()
		l.Object["spec"].(map[string]any)["ports"] = []any{map[string]any{"name": "http-8080", "number": int64(8080), "protocol": "HTTP"}}
		return l
	}(), manager)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatal("fields no manager holds (server defaults) must not change the digest")
	}
}

// mustDigest is desiredDigest, failing the test on error, so that a
// digest function that always errs cannot pass as "" == "".
func mustDigest(t *testing.T, manifest map[string]any) string {
	t.Helper()
	d, err := desiredDigest(manifest)
	if err != nil {
		t.Fatal(err)
	}
	if d == "" {
		t.Fatal("empty digest")
	}
	return d
}

// The configuration an intent keeps on its objects for import is not part
// of a digest, on either side, and neither is the one in a contribution;
// everything else still is.
func TestDigestLeavesOutTheKeptConfiguration(t *testing.T) {
	manifest := func(annotations map[string]any) map[string]any {
		meta := map[string]any{"name": "a", "namespace": "n"}
		if annotations != nil {
			meta["annotations"] = annotations
		}
		return map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": map[string]any{"k": "v"}}
	}
	plain, err := desiredDigest(manifest(nil))
	if err != nil {
		t.Fatal(err)
	}
	kept, err := desiredDigest(manifest(map[string]any{AnnotationConfig: `{"name":"a"}`}))
	if err != nil {
		t.Fatal(err)
	}
	other, err := desiredDigest(manifest(map[string]any{AnnotationConfig: `{"name":"a"}`, "team": "x"}))
	if err != nil {
		t.Fatal(err)
	}
	if plain != kept || kept == other {
		t.Errorf("digests: without the configuration %s, with it %s (want equal), with another annotation too %s (want different)", plain, kept, other)
	}
	canonical := &trafficpolicy.Composer{}
	c1, err := contributionDigest(canonical.Canonical(`{"policy":{"timeout":"1s"},"destination":{"host":"a"}}`))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := contributionDigest(canonical.Canonical(`{"config":{"name":"p"},"destination":{"host":"a"},"policy":{"timeout":"1s"}}`))
	if err != nil {
		t.Fatal(err)
	}
	c3, err := contributionDigest(canonical.Canonical(`{"config":{"name":"p"},"destination":{"host":"a"},"policy":{"timeout":"2s"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if c1 != c2 || c2 == c3 {
		t.Errorf("contribution digests: %s, %s with the configuration (want equal), %s with another timeout (want different)", c1, c2, c3)
	}
}

// Others' fields count within the content the intent writes: a record
// ConfigMap another tool made immutable (a field of the object the
// intent never sets) is not drift, while a key it adds to data is.
func TestContentDigestCountsOthersWithinTheIntentsContent(t *testing.T) {
	desired := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "vd-user", "namespace": "mesh-intent-records"},
		"data":     map[string]any{"hostname": "user.global"},
	}
	want := mustDigest(t, desired)
	live := func(extra map[string]any, theirs string) *unstructured.Unstructured {
		o := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "vd-user", "namespace": "mesh-intent-records", "uid": "1"},
			"data":     map[string]any{"hostname": "user.global"},
		}}
		for k, v := range extra {
			o.Object[k] = v
		}
		o.SetManagedFields([]metav1.ManagedFieldsEntry{
			{Manager: manager, Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:data":{"f:hostname":{}}}`)},
			{Manager: "someone-else", Operation: metav1.ManagedFieldsOperationUpdate, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(theirs)},
		})
		return o
	}
	got, err := contentDigest(live(map[string]any{"immutable": true}, `{"f:immutable":{}}`), manager)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatal("a field of the object the intent never sets (immutable) changed the digest")
	}
	got, err = contentDigest(live(map[string]any{"data": map[string]any{"hostname": "user.global", "intruder": "1"}}, `{"f:data":{"f:intruder":{}}}`), manager)
	if err != nil {
		t.Fatal(err)
	}
	if got == want {
		t.Fatal("a key another manager added to data did not change the digest")
	}
}
