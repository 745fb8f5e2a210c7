package discovery

import (
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// A kept configuration that does not fit the schema is refused with the
// attribute that does not fit, never half-read.
func TestKeptConfigurationRefusesWhatDoesNotFit(t *testing.T) {
	typ := tftypes.Object{AttributeTypes: map[string]tftypes.Type{
		"name":  tftypes.String,
		"ports": tftypes.List{ElementType: tftypes.Object{AttributeTypes: map[string]tftypes.Type{"number": tftypes.Number}}},
	}}
	for raw, want := range map[string]string{
		`{"name":"a","color":"red"}`:      `AttributeName("color"): unsupported attribute`,
		`{"name":{"a":1}}`:                `AttributeName("name"): unsupported type`,
		`{"ports":[{"number":"eighty"}]}`: `AttributeName("ports").ElementKeyInt(0).AttributeName("number")`,
		`{"ports":{"number":80}}`:         `AttributeName("ports"): invalid JSON`,
		`not json`:                        "invalid character",
	} {
		_, err := ConfigValue(typ, raw)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: got %v, want an error containing %q", raw, err, want)
		}
	}
}
