package engine

import (
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// Every Kubernetes kind an intent kind writes is one the engine can write
// without discovery, and no two intent kinds share an owner label value.
func TestIntentKindsWritable(t *testing.T) {
	owners := map[string]bool{}
	for _, k := range intentkind.All {
		if owners[k.Owner] {
			t.Errorf("owner kind %q described twice", k.Owner)
		}
		owners[k.Owner] = true
		if got, ok := intentkind.ByOwner(k.Owner); !ok || got.Resource != k.Resource {
			t.Errorf("ByOwner(%q) = %v, %v", k.Owner, got.Resource, ok)
		}
		for _, w := range k.Writes {
			if _, ok := ResourceOf(w); !ok {
				t.Errorf("%s writes %s, which the engine has no API resource for", k.Resource, w)
			}
		}
		if k.ConfigKind != "" && !k.WritesKind(k.ConfigKind) {
			t.Errorf("%s keeps its configuration on %s, which it does not write", k.Resource, k.ConfigKind)
		}
	}
}
