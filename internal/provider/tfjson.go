package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// intentJSON turns Terraform attribute values into the JSON of a translator
// intent struct: nested object attributes are renamed from snake_case to
// the translator's camelCase json tags (retry_on -> retryOn), map keys
// (labels, headers) are kept as written, and null values are left out.
// Used where the attribute tree mirrors the translator's struct one to one.
func intentJSON(ctx context.Context, attrs map[string]attr.Value, into any) error {
	out := map[string]any{}
	for name, v := range attrs {
		tv, err := v.ToTerraformValue(ctx)
		if err != nil {
			return err
		}
		g, err := plain(tv)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if g != nil {
			out[camel(name)] = g
		}
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return json.Unmarshal(raw, into)
}

func plain(v tftypes.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, fmt.Errorf("value not known yet")
	}
	switch t := v.Type().(type) {
	case tftypes.Object:
		return plainMap(v, true)
	case tftypes.Map:
		return plainMap(v, false)
	case tftypes.List, tftypes.Set, tftypes.Tuple:
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(elems))
		for _, e := range elems {
			g, err := plain(e)
			if err != nil {
				return nil, err
			}
			out = append(out, g)
		}
		return out, nil
	default:
		switch {
		case t.Is(tftypes.String):
			var s string
			err := v.As(&s)
			return s, err
		case t.Is(tftypes.Bool):
			var b bool
			err := v.As(&b)
			return b, err
		case t.Is(tftypes.Number):
			f := new(big.Float)
			if err := v.As(&f); err != nil {
				return nil, err
			}
			return json.Number(f.Text('g', -1)), nil
		}
	}
	return nil, fmt.Errorf("unsupported type %s", v.Type())
}

func plainMap(v tftypes.Value, object bool) (any, error) {
	var m map[string]tftypes.Value
	if err := v.As(&m); err != nil {
		return nil, err
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		g, err := plain(e)
		if err != nil {
			return nil, err
		}
		if g == nil {
			continue
		}
		if object {
			k = camel(k)
		}
		out[k] = g
	}
	return out, nil
}

// camel turns an attribute name into the translator's json tag:
// per_try_timeout -> perTryTimeout, consecutive_5xx_errors ->
// consecutive5xxErrors.
func camel(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}
