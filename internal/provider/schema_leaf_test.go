package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Every attribute a user can set must reach the translator: this test
// walks every leaf of every resource schema, sets it alone (on top of a
// minimal configuration) to a value nobody would write by accident, and
// decodes the configuration the way the resource does (the framework's
// reflection into the typed model, then the model's intent function). The
// intent must differ from the intent of the minimal configuration. A
// dropped field, a mistyped tfsdk tag or a forgotten assignment fails it.

// leafDecoders decode a resource's configuration into what it hands the
// translator, as JSON.
var leafDecoders = map[string]func(ctx context.Context, plan tfsdk.Plan) (any, error){
	"mesh_cluster": func(ctx context.Context, plan tfsdk.Plan) (any, error) {
		var m clusterResourceModel
		if d := plan.Get(ctx, &m); d.HasError() {
			return nil, fmt.Errorf("%v", d)
		}
		return m.intent(), nil
	},
	"mesh_virtual_destination": func(ctx context.Context, plan tfsdk.Plan) (any, error) {
		var m virtualDestinationModel
		if d := plan.Get(ctx, &m); d.HasError() {
			return nil, fmt.Errorf("%v", d)
		}
		return m.intent(), nil
	},
	"mesh_traffic_policy": func(ctx context.Context, plan tfsdk.Plan) (any, error) {
		var m trafficPolicyModel
		if d := plan.Get(ctx, &m); d.HasError() {
			return nil, fmt.Errorf("%v", d)
		}
		return []any{m.intent(), m.Destination.plain()}, nil
	},
	"mesh_access_policy": func(ctx context.Context, plan tfsdk.Plan) (any, error) {
		var m accessPolicyModel
		if d := plan.Get(ctx, &m); d.HasError() {
			return nil, fmt.Errorf("%v", d)
		}
		in, dest := m.intent()
		return []any{in, dest}, nil
	},
}

// leafBase is the least configuration of each resource: its required
// attributes (list elements as index 0), and those the framework fills
// with a default in every plan.
var leafBase = map[string]map[string]any{
	"mesh_cluster":             {"name": "east", "istio_namespace": "istio-system", "default_deny": false, "expose_east_west": false},
	"mesh_virtual_destination": {"name": "user", "hostname": "user.global", "namespace": "istio-system", "ports.0.number": 8080, "ports.0.protocol": "HTTP", "backends.0.cluster": "east", "backends.0.namespace": "users", "backends.0.service": "user"},
	"mesh_traffic_policy":      {"name": "p", "destination.service": "user", "destination.namespace": "users"},
	"mesh_access_policy":       {"name": "p", "destination.service": "user", "destination.namespace": "users", "sources.0.namespace": "accounts", "sources.0.service_account": "account"},
}

// leafNotIntent are the leaves that do not become intent, and why.
var leafNotIntent = map[string]string{
	"mesh_cluster.id":                                     "computed: the instance ID",
	"mesh_cluster.objects":                                "computed: the inventory",
	"mesh_cluster.kubernetes_version":                     "computed: read from the cluster",
	"mesh_cluster.istio_crds_installed":                   "computed: read from the cluster",
	"mesh_virtual_destination.id":                         "computed: the instance ID",
	"mesh_virtual_destination.adopt_existing":             "not intent: engine.Owner.Adopt (specOf in intent_resource.go), shown by TestAccImport_adoptsPlainObjects",
	"mesh_virtual_destination.objects":                    "computed: the inventory",
	"mesh_virtual_destination.adopted":                    "computed: the hand-written objects the plan found to take over (planAdopted)",
	"mesh_virtual_destination.routing":                    "computed: the routing statement, from the intent",
	"mesh_virtual_destination.vip":                        "a plan-time value checked across virtual destinations (runstate.DestinationIndex), written into the ServiceEntry by spec",
	"mesh_traffic_policy.id":                              "computed: the instance ID",
	"mesh_traffic_policy.adopt_existing":                  "not intent: engine.Owner.Adopt (specOf in intent_resource.go), shown by TestAccImport_adoptsPlainObjects",
	"mesh_traffic_policy.objects":                         "computed: the inventory",
	"mesh_traffic_policy.adopted":                         "computed: the hand-written objects the plan found to take over (planAdopted)",
	"mesh_traffic_policy.routing":                         "computed: the routing statement, from the intent",
	"mesh_traffic_policy.resolved_destination":            "computed: the destination as resolved at plan",
	"mesh_access_policy.id":                               "computed: the instance ID",
	"mesh_access_policy.adopt_existing":                   "not intent: engine.Owner.Adopt (specOf in intent_resource.go), shown by TestAccImport_adoptsPlainObjects",
	"mesh_access_policy.objects":                          "computed: the inventory",
	"mesh_access_policy.routing":                          "computed: the routing statement, from the intent",
	"mesh_access_policy.destination_backends.0.cluster":   "computed: the virtual destination's backends as resolved at plan",
	"mesh_access_policy.destination_backends.0.namespace": "computed",
	"mesh_access_policy.destination_backends.0.service":   "computed",
}

func TestEveryAttributeReachesTheIntent(t *testing.T) {
	ctx := context.Background()
	used := map[string]bool{}
	checked := 0
	for _, newResource := range New("test")().Resources(ctx) {
		r := newResource()
		var meta resource.MetadataResponse
		r.Metadata(ctx, resource.MetadataRequest{ProviderTypeName: "mesh"}, &meta)
		var sr resource.SchemaResponse
		r.Schema(ctx, resource.SchemaRequest{}, &sr)
		name := meta.TypeName
		if name == "mesh_workspace" {
			continue // a roster of traffic policies' names, not an intent: TestOrphansAmong
		}
		decode, ok := leafDecoders[name]
		if !ok {
			t.Errorf("%s has no decoder in leafDecoders", name)
			continue
		}
		s := sr.Schema
		decodeWith := func(values map[string]any) (string, error) {
			raw, err := leafValue(s.Type().TerraformType(ctx), "", values)
			if err != nil {
				return "", err
			}
			got, err := decode(ctx, tfsdk.Plan{Schema: s, Raw: raw})
			if err != nil {
				return "", err
			}
			b, err := json.Marshal(got)
			return string(b), err
		}
		if _, err := decodeWith(leafBase[name]); err != nil {
			t.Fatalf("%s: decoding the base configuration: %v", name, err)
		}
		leaves := schemaLeaves(s.Attributes, "")
		for _, leaf := range leaves {
			key := name + "." + leaf.path
			if _, skip := leafNotIntent[key]; skip {
				used[key] = true
				continue
			}
			values := leafContext(leafBase[name], leaves, leaf)
			without, err := decodeWith(values)
			if err != nil {
				t.Errorf("%s: decoding without it: %v", key, err)
				continue
			}
			values[leaf.path] = leaf.sample
			got, err := decodeWith(values)
			if err != nil {
				t.Errorf("%s: %v", key, err)
				continue
			}
			checked++
			if got == without {
				t.Errorf("%s = %v does not reach the translator's intent: the decoded intent is the same as without it", key, leaf.sample)
			}
		}
	}
	for key := range leafNotIntent {
		if !used[key] {
			t.Errorf("leafNotIntent lists %s, which is no leaf of any schema", key)
		}
	}
	if checked < 100 {
		t.Fatalf("only %d leaves checked: the walk is missing attributes", checked)
	}
	t.Logf("%d leaves reach the intent", checked)
}

type leaf struct {
	path     string
	sample   any // distinctive
	plain    any // what a required leaf holds when another leaf is tested
	required bool
}

// schemaLeaves lists every leaf attribute (nested objects and lists of
// them are walked; a list element is index 0) with a sample value.
func schemaLeaves(attrs map[string]schema.Attribute, prefix string) []leaf {
	var out []leaf
	names := make([]string, 0, len(attrs))
	for n := range attrs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := prefix + n
		sample := "leaf-" + strings.ReplaceAll(p, ".", "-")
		a := attrs[n]
		l := leaf{path: p, required: a.IsRequired()}
		switch a := a.(type) {
		case schema.SingleNestedAttribute:
			out = append(out, schemaLeaves(a.Attributes, p+".")...)
			continue
		case schema.ListNestedAttribute:
			out = append(out, schemaLeaves(a.NestedObject.Attributes, p+".0.")...)
			continue
		case schema.StringAttribute:
			l.sample, l.plain = sample, "plain"
		case schema.BoolAttribute:
			l.sample, l.plain = true, false
		case schema.Int64Attribute:
			l.sample, l.plain = 4242, 1
		case schema.Float64Attribute:
			l.sample, l.plain = 42.5, 1
		case schema.ListAttribute:
			switch a.ElementType.(type) {
			case types.MapType:
				l.sample, l.plain = []any{map[string]any{"leaf": sample}}, []any{map[string]any{"plain": "plain"}}
			case basetypes.Int64Type:
				l.sample, l.plain = []any{4242}, []any{1}
			default:
				l.sample, l.plain = []any{sample}, []any{"plain"}
			}
		case schema.MapAttribute:
			l.sample, l.plain = map[string]any{"leaf": sample}, map[string]any{"plain": "plain"}
		default:
			l.sample = fmt.Sprintf("unsupported %T", a)
		}
		out = append(out, l)
	}
	return out
}

// parentOf is the path of the object holding path ("" at the top).
func parentOf(path string) string {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return ""
	}
	return path[:i]
}

// context is base plus, for every object on the way to l, its required
// leaves (their plain value), so that the object l sits in is valid.
func leafContext(base map[string]any, leaves []leaf, l leaf) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for _, r := range leaves {
		if r.required && strings.HasPrefix(l.path, parentOf(r.path)) {
			if _, set := out[r.path]; !set {
				out[r.path] = r.plain
			}
		}
	}
	return out
}

// leafValue builds a value of type typ from dotted paths (prefix is the
// path of typ itself): unset attributes are null.
func leafValue(typ tftypes.Type, prefix string, values map[string]any) (tftypes.Value, error) {
	if v, ok := values[strings.TrimSuffix(prefix, ".")]; ok && prefix != "" {
		return primitive(typ, v)
	}
	under := false
	for k := range values {
		under = under || strings.HasPrefix(k, prefix)
	}
	if !under {
		return tftypes.NewValue(typ, nil), nil
	}
	switch t := typ.(type) {
	case tftypes.Object:
		fields := map[string]tftypes.Value{}
		for name, at := range t.AttributeTypes {
			v, err := leafValue(at, prefix+name+".", values)
			if err != nil {
				return tftypes.Value{}, err
			}
			fields[name] = v
		}
		return tftypes.NewValue(t, fields), nil
	case tftypes.List:
		v, err := leafValue(t.ElementType, prefix+"0.", values)
		if err != nil {
			return tftypes.Value{}, err
		}
		return tftypes.NewValue(t, []tftypes.Value{v}), nil
	}
	return tftypes.Value{}, fmt.Errorf("%s: cannot build a %s", prefix, typ)
}

// primitive converts a sample value to typ.
func primitive(typ tftypes.Type, v any) (tftypes.Value, error) {
	switch {
	case typ.Is(tftypes.String):
		return tftypes.NewValue(typ, v), nil
	case typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, v), nil
	case typ.Is(tftypes.Number):
		switch n := v.(type) {
		case int:
			return tftypes.NewValue(typ, big.NewFloat(float64(n))), nil
		case float64:
			return tftypes.NewValue(typ, big.NewFloat(n)), nil
		}
	}
	switch t := typ.(type) {
	case tftypes.List:
		var elems []tftypes.Value
		for _, e := range v.([]any) {
			ev, err := primitive(t.ElementType, e)
			if err != nil {
				return tftypes.Value{}, err
			}
			elems = append(elems, ev)
		}
		return tftypes.NewValue(t, elems), nil
	case tftypes.Map:
		elems := map[string]tftypes.Value{}
		for k, e := range v.(map[string]any) {
			ev, err := primitive(t.ElementType, e)
			if err != nil {
				return tftypes.Value{}, err
			}
			elems[k] = ev
		}
		return tftypes.NewValue(t, elems), nil
	}
	return tftypes.Value{}, fmt.Errorf("cannot make a %s of %v", typ, v)
}
