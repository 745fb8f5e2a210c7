package flux

import (
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

func kustomization(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	// Through JSON, as a client decodes it: integers stay int64.
	j, err := yaml.YAMLToJSON([]byte(y))
	if err != nil {
		t.Fatal(err)
	}
	var u unstructured.Unstructured
	if err := u.UnmarshalJSON(j); err != nil {
		t.Fatal(err)
	}
	return &u
}

const header = `apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata: {name: mesh, namespace: flux-system, generation: 2}
`

func TestParseStatus(t *testing.T) {
	rev := Revision("prod", "sha256:0123")
	cases := []struct {
		name  string
		obj   string
		want  Status
		ready bool
	}{
		{
			name: "not reconciled yet",
			obj:  header,
			want: Status{},
		},
		{
			name: "ready with inventory",
			obj: header + `status:
  observedGeneration: 2
  lastAppliedRevision: prod@sha256:0123
  lastAttemptedRevision: prod@sha256:0123
  conditions:
  - {type: Reconciling, status: "False", reason: Succeeded, message: x}
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: "Applied revision: prod@sha256:0123"}
  inventory:
    entries:
    - {id: users_vd-user_networking.istio.io_VirtualService, v: v1}
    - {id: mesh-intent-records_vd-user__ConfigMap, v: v1}
    - {id: users_vd-user_networking.istio.io_DestinationRule, v: v1}
`,
			want: Status{
				LastAppliedRevision: rev, LastAttemptedRevision: rev, Current: true,
				Ready: Condition{Status: "True", Reason: "ReconciliationSucceeded", Message: "Applied revision: prod@sha256:0123"},
				Inventory: []translate.Key{
					{Cluster: "east", APIVersion: "v1", Kind: "ConfigMap", Namespace: "mesh-intent-records", Name: "vd-user"},
					{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "DestinationRule", Namespace: "users", Name: "vd-user"},
					{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "users", Name: "vd-user"},
				},
			},
			ready: true,
		},
		{
			name: "failed at a newer revision",
			obj: header + `status:
  observedGeneration: 2
  lastAppliedRevision: prod@sha256:0123
  lastAttemptedRevision: prod@sha256:4567
  conditions:
  - {type: Ready, status: "False", reason: ReconciliationFailed, message: "admission webhook denied"}
`,
			want: Status{LastAppliedRevision: rev, LastAttemptedRevision: "prod@sha256:4567", Current: true,
				Ready: Condition{Status: "False", Reason: "ReconciliationFailed", Message: "admission webhook denied"}},
		},
		{
			name: "status of an older spec",
			obj: header + `status:
  observedGeneration: 1
  lastAppliedRevision: prod@sha256:0123
  conditions:
  - {type: Ready, status: "True", reason: ReconciliationSucceeded, message: ok}
`,
			want: Status{LastAppliedRevision: rev, Ready: Condition{Status: "True", Reason: "ReconciliationSucceeded", Message: "ok"}},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseStatus(kustomization(t, c.obj), "east")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("ParseStatus:\n%+v\nwant\n%+v", got, c.want)
			}
			if got.AppliedAt(rev) != c.ready {
				t.Errorf("AppliedAt(%s) = %v, want %v", rev, got.AppliedAt(rev), c.ready)
			}
		})
	}
}

func TestParseStatusRejects(t *testing.T) {
	cases := []struct{ name, obj, want string }{
		{"not a kustomization", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n", "not a Flux Kustomization"},
		{"inventory id too short", header + "status:\n  inventory:\n    entries:\n    - {id: users_vd_VirtualService, v: v1}\n", "is not <namespace>_<name>_<group>_<kind>"},
		{"inventory entry without version", header + "status:\n  inventory:\n    entries:\n    - {id: users_vd_networking.istio.io_VirtualService}\n", "has no version"},
		{"revision not a string", header + "status:\n  lastAppliedRevision: 3\n", "Kustomization flux-system/mesh"},
		{"condition not an object", header + "status:\n  conditions: [Ready]\n", "not an object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseStatus(kustomization(t, c.obj), "east")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}

func TestInventoryIDRoundTrip(t *testing.T) {
	for _, k := range []translate.Key{
		{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "ServiceEntry", Namespace: "users", Name: "se"},
		{Cluster: "east", APIVersion: "v1", Kind: "ConfigMap", Namespace: "mesh-intent-records", Name: "vd-user"},
		{Cluster: "east", APIVersion: "v1", Kind: "Namespace", Name: "users"},
	} {
		id, err := InventoryID(k)
		if err != nil {
			t.Fatal(err)
		}
		gv := k.APIVersion[strings.LastIndex(k.APIVersion, "/")+1:]
		back, err := InventoryKey(k.Cluster, id, gv)
		if err != nil || back != k {
			t.Errorf("%s: id %q reads back as %+v (%v)", k, id, back, err)
		}
	}
}
