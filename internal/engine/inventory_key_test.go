package engine

import "testing"

// Every kind the engine writes survives StateKey and EntryFromStateKey,
// and keys that are not ours are refused.
func TestStateKeyRoundTrips(t *testing.T) {
	for gvk := range resources {
		e := Entry{Cluster: "east", APIVersion: gvk.GroupVersion().String(), Kind: gvk.Kind, Namespace: "istio-system", Name: "vd-user.east", Digest: "0123456789abcdef"}
		back, err := EntryFromStateKey(e.StateKey(), e.Digest)
		if err != nil || back != e {
			t.Errorf("%s: %q came back as %+v (%v)", gvk, e.StateKey(), back, err)
		}
	}
	if got := (Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "VirtualService", Namespace: "istio-system", Name: "vd-user"}).StateKey(); got != "east/VirtualService.networking.istio.io/istio-system/vd-user" {
		t.Errorf("key %q", got)
	}
	if got := (Entry{Cluster: "east", APIVersion: "v1", Kind: "ConfigMap", Namespace: "mesh-intent-records", Name: "vd-user"}).StateKey(); got != "east/ConfigMap/mesh-intent-records/vd-user" {
		t.Errorf("key %q", got)
	}
	for _, bad := range []string{"", "east", "east/VirtualService/ns", "east/Deployment.apps/ns/x", "/ConfigMap/ns/x", "east/ConfigMap/ns/"} {
		if _, err := EntryFromStateKey(bad, ""); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
