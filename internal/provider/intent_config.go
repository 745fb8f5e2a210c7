package provider

import (
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Every intent keeps its Terraform configuration in the clusters, beside
// the objects it produced, so that `terraform import` can rebuild the
// resource from the clusters alone (a lost state, another team's state):
//
//   - a virtual destination on its record ConfigMaps,
//   - an access policy on its AuthorizationPolicies,
//   - a traffic policy in its contribution to the composed objects.
//
// It is the configuration as written (values not set are left out), as
// JSON; the same at plan and at apply, so the planned digests hold.

// ConfigAnnotation holds an intent's configuration on its objects;
// contributionConfigKey is the field of a traffic policy's contribution
// that holds it. Neither is part of a digest (engine/digest.go): written
// differently, a configuration translates to the same objects.
const (
	ConfigAnnotation      = engine.AnnotationConfig
	contributionConfigKey = engine.ContributionConfigKey
)

// adoptAttribute is the adopt_existing attribute of every intent resource.
func adoptAttribute() schema.BoolAttribute {
	return schema.BoolAttribute{
		MarkdownDescription: "Take over Istio objects of the same names that this provider did not write (no `app.kubernetes.io/managed-by` label), " +
			"e.g. hand-written ones being brought under management: apply rewrites them to this intent in place, keeping their identity (no delete, no gap in traffic). " +
			"Default `false`: such objects are an apply error naming them, and are left untouched. Objects another intent owns are never taken. " +
			"Import with the id `adopt:<name>` sets it.",
		Optional: true,
	}
}

// configJSON renders a configuration value as JSON, leaving out null
// attributes. Every value must be known.
func configJSON(v tftypes.Value) (string, error) {
	x, err := tfToAny(v)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(x)
	return string(raw), err
}

func tfToAny(v tftypes.Value) (any, error) {
	if !v.IsKnown() {
		return nil, fmt.Errorf("value not known")
	}
	if v.IsNull() {
		return nil, nil
	}
	t := v.Type()
	switch {
	case t.Is(tftypes.String):
		var s string
		return s, v.As(&s)
	case t.Is(tftypes.Bool):
		var b bool
		return b, v.As(&b)
	case t.Is(tftypes.Number):
		f := new(big.Float)
		if err := v.As(&f); err != nil {
			return nil, err
		}
		return json.Number(f.Text('g', -1)), nil
	case t.Is(tftypes.List{}), t.Is(tftypes.Set{}), t.Is(tftypes.Tuple{}):
		var elems []tftypes.Value
		if err := v.As(&elems); err != nil {
			return nil, err
		}
		out := make([]any, 0, len(elems))
		for _, e := range elems {
			x, err := tfToAny(e)
			if err != nil {
				return nil, err
			}
			out = append(out, x)
		}
		return out, nil
	case t.Is(tftypes.Map{}), t.Is(tftypes.Object{}):
		var fields map[string]tftypes.Value
		if err := v.As(&fields); err != nil {
			return nil, err
		}
		out := make(map[string]any, len(fields))
		for k, e := range fields {
			x, err := tfToAny(e)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			if x == nil && t.Is(tftypes.Object{}) {
				continue
			}
			out[k] = x
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported type %s", t)
}

// configValue rebuilds a value of type t from configJSON's output.
func configValue(t tftypes.Type, raw string) (tftypes.Value, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return tftypes.Value{}, err
	}
	return anyToTF(t, x, "")
}

func anyToTF(t tftypes.Type, x any, at string) (tftypes.Value, error) {
	if x == nil {
		return tftypes.NewValue(t, nil), nil
	}
	wrong := func() (tftypes.Value, error) {
		return tftypes.Value{}, fmt.Errorf("%s: %T is not a %s", strings.TrimPrefix(at, "."), x, t)
	}
	switch tt := t.(type) {
	case tftypes.Object:
		m, ok := x.(map[string]any)
		if !ok {
			return wrong()
		}
		fields := map[string]tftypes.Value{}
		for k := range m {
			if _, ok := tt.AttributeTypes[k]; !ok {
				return tftypes.Value{}, fmt.Errorf("%s.%s: not an attribute of this provider version", strings.TrimPrefix(at, "."), k)
			}
		}
		for k, et := range tt.AttributeTypes {
			v, err := anyToTF(et, m[k], at+"."+k)
			if err != nil {
				return tftypes.Value{}, err
			}
			fields[k] = v
		}
		return tftypes.NewValue(tt, fields), nil
	case tftypes.Map:
		m, ok := x.(map[string]any)
		if !ok {
			return wrong()
		}
		fields := map[string]tftypes.Value{}
		for k, e := range m {
			v, err := anyToTF(tt.ElementType, e, at+"."+k)
			if err != nil {
				return tftypes.Value{}, err
			}
			fields[k] = v
		}
		return tftypes.NewValue(tt, fields), nil
	case tftypes.List, tftypes.Set:
		s, ok := x.([]any)
		if !ok {
			return wrong()
		}
		et := elementType(tt)
		elems := make([]tftypes.Value, 0, len(s))
		for i, e := range s {
			v, err := anyToTF(et, e, fmt.Sprintf("%s[%d]", at, i))
			if err != nil {
				return tftypes.Value{}, err
			}
			elems = append(elems, v)
		}
		return tftypes.NewValue(tt, elems), nil
	}
	switch {
	case t.Is(tftypes.String):
		if s, ok := x.(string); ok {
			return tftypes.NewValue(t, s), nil
		}
	case t.Is(tftypes.Bool):
		if b, ok := x.(bool); ok {
			return tftypes.NewValue(t, b), nil
		}
	case t.Is(tftypes.Number):
		if n, ok := x.(json.Number); ok {
			f, _, err := big.ParseFloat(string(n), 10, 512, big.ToNearestEven)
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %v", strings.TrimPrefix(at, "."), err)
			}
			return tftypes.NewValue(t, f), nil
		}
	}
	return wrong()
}

func elementType(t tftypes.Type) tftypes.Type {
	switch tt := t.(type) {
	case tftypes.List:
		return tt.ElementType
	case tftypes.Set:
		return tt.ElementType
	}
	return nil
}

// withConfig makes the spec keep the configuration cfg in the clusters
// (see the top of this file).
func (s *intentSpec) withConfig(cfg string) error {
	if cfg == "" {
		return nil
	}
	if s.Owner.Composition != nil {
		var fields map[string]json.RawMessage
		if err := json.Unmarshal([]byte(s.Owner.Composition.Contribution), &fields); err != nil {
			return err
		}
		fields[contributionConfigKey] = json.RawMessage(cfg)
		raw, err := json.Marshal(fields)
		if err != nil {
			return err
		}
		s.Owner.Composition.Contribution = string(raw)
		return nil
	}
	kind, inner := s.ConfigKind, s.Translate
	if kind == "" || inner == nil {
		return nil
	}
	s.Translate = func(reg *translate.Registry) ([]translate.Object, error) {
		objs, err := inner(reg)
		for _, o := range objs {
			if o.Resource.GetObjectKind().GroupVersionKind().Kind != kind {
				continue
			}
			a := o.Resource.GetAnnotations()
			if a == nil {
				a = map[string]string{}
			}
			a[ConfigAnnotation] = cfg
			o.Resource.SetAnnotations(a)
		}
		return objs, err
	}
	return nil
}

// contributionConfig returns the configuration in a traffic policy's
// contribution, if any.
func contributionConfig(contribution string) (string, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(contribution), &fields); err != nil {
		return "", false
	}
	c, ok := fields[contributionConfigKey]
	return string(c), ok
}

func sortedStrings(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
