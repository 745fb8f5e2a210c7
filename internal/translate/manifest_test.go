package translate_test

import (
	"reflect"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/bench/gen"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// TestManifestIsTheObjectsJSON holds Object.Manifest's own rendering of
// an Istio object (the spec through its MarshalJSON, the rest from the
// object's fields) to the object through encoding/json, for every object
// of bench/gen's configurations: the same map, key for key.
func TestManifestIsTheObjectsJSON(t *testing.T) {
	n := 0
	for _, clusters := range [][]string{{"east", "west", "onprem"}, {"a", "b", "c", "d", "e"}} {
		spec := gen.Generate(300, gen.Clusters(clusters))
		translated, err := spec.Translate(spec.Registry())
		if err != nil {
			t.Fatal(err)
		}
		kinds := map[string]bool{}
		for _, tr := range translated {
			for _, o := range tr.Objects {
				got, err := o.ManifestRaw()
				if err != nil {
					t.Fatal(err)
				}
				want, err := translate.ManifestByJSON(o)
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					t.Fatalf("%s:\n got %v\nwant %v", o.Key(), got, want)
				}
				kinds[o.Key().Kind] = true
				n++
			}
		}
		for _, k := range []string{"ServiceEntry", "DestinationRule", "VirtualService", "AuthorizationPolicy", "ConfigMap"} {
			if !kinds[k] {
				t.Errorf("%v: no %s in the corpus", clusters, k)
			}
		}
	}
	t.Logf("%d objects", n)
}
