package discovery

import (
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
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
// JSON, written at apply. No digest covers it, so plans need not compute
// it and a configuration written differently shows no change.

// ConfigAnnotation holds an intent's configuration on its objects; a
// traffic policy keeps it in its contribution (trafficpolicy.WithConfig).
// Neither is part of a digest (engine/digest.go, Composer.Canonical):
// written differently, a configuration translates to the same objects.
const ConfigAnnotation = engine.AnnotationConfig

// ConfigJSON renders a configuration value as JSON, leaving out null
// attributes. Every value must be known.
func ConfigJSON(v tftypes.Value) (string, error) {
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

// ConfigValue rebuilds a value of type t from ConfigJSON's output:
// attributes left out are null, and one that t does not have is an error
// naming it.
func ConfigValue(t tftypes.Type, raw string) (tftypes.Value, error) {
	//lint:ignore SA1019 the one decoder of Terraform's JSON value encoding that checks a value against its type; its output is what ConfigJSON wrote, and the provider's TestKeptConfigurationRoundTrips pins the round trip
	return tftypes.ValueFromJSON([]byte(raw), t)
}
