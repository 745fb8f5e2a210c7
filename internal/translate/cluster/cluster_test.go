package cluster

import (
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/translatetest"
)

// TestGolden translates every case of testdata/ and compares it with its
// golden file (REFRESH_GOLDEN=true rewrites them).
func TestGolden(t *testing.T) {
	translatetest.Golden(t, func(raw []byte, reg *translate.Registry) ([]translate.Object, error) {
		var in Intent
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		return Translate(in, reg)
	})
}
