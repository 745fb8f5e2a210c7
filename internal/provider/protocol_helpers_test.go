package provider

import (
	"context"
	"fmt"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// Protocol-level tests: the provider served as Terraform 1.12+ (resource
// identity) and 1.14+ (list resources) would call it, through the
// terraform-plugin-go types, since the Terraform CLI on these machines is
// older. protoProvider is one provider server, configured for the local
// clusters with the same topology as providerConfig.

type protoProvider struct {
	t       *testing.T
	s       tfprotov6.ProviderServer
	ls      tfprotov6.ListResourceServer
	schema  *tfprotov6.GetProviderSchemaResponse
	idTypes map[string]tftypes.Type
}

// testTopologyValues is testTopology as provider configuration values.
var testTopologyValues = map[string]map[string]any{
	"east": {"network": "net-east", "region": "us-east-1", "zone": "us-east-1a", "trust_domain": "east.mesh",
		"labels": map[string]any{"cloud": "aws", "env": "prod"}, "east_west_gateway": map[string]any{"address": "203.0.113.10", "port": 15443}},
	"west": {"network": "net-west", "region": "us-west-2", "zone": "us-west-2b", "trust_domain": "west.mesh",
		"labels": map[string]any{"cloud": "gcp", "env": "prod"}, "east_west_gateway": map[string]any{"address": "203.0.113.20"}},
	"onprem": {"network": "net-onprem", "region": "dc1", "trust_domain": "onprem.mesh",
		"labels": map[string]any{"cloud": "onprem", "env": "prod"}, "east_west_gateway": map[string]any{"address": "ew.onprem.example.com", "port": 15443}},
}

// servedProvider serves a provider over protocol 6, as Terraform starts
// it, and returns its schemas.
func servedProvider(t *testing.T) (tfprotov6.ProviderServer, *tfprotov6.GetProviderSchemaResponse) {
	t.Helper()
	s, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schema, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "GetProviderSchema", schema.Diagnostics)
	return s, schema
}

// newProtoProvider serves and configures a provider for the local
// clusters, as Terraform does before any resource call.
func newProtoProvider(t *testing.T) *protoProvider {
	t.Helper()
	requireMesh(t)
	ctx := context.Background()
	s, schema := servedProvider(t)
	ls, ok := s.(tfprotov6.ListResourceServer)
	if !ok {
		t.Fatal("the provider server does not serve list resources")
	}
	p := &protoProvider{t: t, s: s, ls: ls, schema: schema, idTypes: map[string]tftypes.Type{}}
	ids, err := s.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "GetResourceIdentitySchemas", ids.Diagnostics)
	for name, is := range ids.IdentitySchemas {
		p.idTypes[name] = is.ValueType()
	}
	clusters := map[string]any{}
	for _, c := range testClusters {
		v := map[string]any{"kubernetes": map[string]any{"config_path": testMesh.Kubeconfig(), "config_context": c}}
		for k, x := range testTopologyValues[c] {
			v[k] = x
		}
		clusters[c] = v
	}
	cfg := p.dynamic(schema.Provider.ValueType(), map[string]any{"clusters": clusters})
	resp, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.14.0", Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "ConfigureProvider", resp.Diagnostics)
	return p
}

// resourceType is the value type of a resource's state.
func (p *protoProvider) resourceType(typeName string) tftypes.Type {
	s, ok := p.schema.ResourceSchemas[typeName]
	if !ok {
		p.t.Fatalf("no resource schema %s", typeName)
	}
	return s.ValueType()
}

// dynamic encodes a Go value (nested map[string]any, []any, string, int,
// bool; nil or a missing attribute is null) as a value of type typ.
func (p *protoProvider) dynamic(typ tftypes.Type, v any) *tfprotov6.DynamicValue {
	p.t.Helper()
	val, err := tfValue(typ, v)
	if err != nil {
		p.t.Fatal(err)
	}
	dv, err := tfprotov6.NewDynamicValue(typ, val)
	if err != nil {
		p.t.Fatal(err)
	}
	return &dv
}

func tfValue(typ tftypes.Type, v any) (tftypes.Value, error) {
	if v == nil {
		return tftypes.NewValue(typ, nil), nil
	}
	switch typ := typ.(type) {
	case tftypes.Object:
		m, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("%v: want an object", v)
		}
		for k := range m {
			if _, ok := typ.AttributeTypes[k]; !ok {
				return tftypes.Value{}, fmt.Errorf("no attribute %q in %s", k, typ)
			}
		}
		vals := map[string]tftypes.Value{}
		for name, at := range typ.AttributeTypes {
			x, err := tfValue(at, m[name])
			if err != nil {
				return tftypes.Value{}, fmt.Errorf("%s: %w", name, err)
			}
			vals[name] = x
		}
		return tftypes.NewValue(typ, vals), nil
	case tftypes.Map:
		m, ok := v.(map[string]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("%v: want a map", v)
		}
		vals := map[string]tftypes.Value{}
		for k, x := range m {
			e, err := tfValue(typ.ElementType, x)
			if err != nil {
				return tftypes.Value{}, err
			}
			vals[k] = e
		}
		return tftypes.NewValue(typ, vals), nil
	case tftypes.List, tftypes.Set:
		s, ok := v.([]any)
		if !ok {
			return tftypes.Value{}, fmt.Errorf("%v: want a list", v)
		}
		var et tftypes.Type
		if l, ok := typ.(tftypes.List); ok {
			et = l.ElementType
		} else {
			et = typ.(tftypes.Set).ElementType
		}
		vals := make([]tftypes.Value, len(s))
		for i, x := range s {
			e, err := tfValue(et, x)
			if err != nil {
				return tftypes.Value{}, err
			}
			vals[i] = e
		}
		return tftypes.NewValue(typ, vals), nil
	}
	switch {
	case typ.Is(tftypes.String):
		return tftypes.NewValue(typ, v), nil
	case typ.Is(tftypes.Bool):
		return tftypes.NewValue(typ, v), nil
	case typ.Is(tftypes.Number):
		switch n := v.(type) {
		case int:
			return tftypes.NewValue(typ, big.NewFloat(float64(n))), nil
		case *big.Float:
			return tftypes.NewValue(typ, n), nil
		case number:
			f, ok := new(big.Float).SetString(string(n))
			if ok {
				return tftypes.NewValue(typ, f), nil
			}
		}
	}
	return tftypes.Value{}, fmt.Errorf("%v (%T) as %s: not supported", v, v, typ)
}

// number is a number as goValue decodes it: its decimal text.
type number string

// goValue decodes a value into Go: objects and maps as map[string]any,
// lists and sets as []any, numbers as number; null is nil.
func goValue(v tftypes.Value) (any, error) {
	if v.IsNull() {
		return nil, nil
	}
	if !v.IsKnown() {
		return nil, fmt.Errorf("unknown value")
	}
	typ := v.Type()
	switch {
	case typ.Is(tftypes.Object{}), typ.Is(tftypes.Map{}):
		var m map[string]tftypes.Value
		if err := v.As(&m); err != nil {
			return nil, err
		}
		out := map[string]any{}
		for k, x := range m {
			g, err := goValue(x)
			if err != nil {
				return nil, err
			}
			out[k] = g
		}
		return out, nil
	case typ.Is(tftypes.List{}), typ.Is(tftypes.Set{}), typ.Is(tftypes.Tuple{}):
		var s []tftypes.Value
		if err := v.As(&s); err != nil {
			return nil, err
		}
		out := make([]any, len(s))
		for i, x := range s {
			g, err := goValue(x)
			if err != nil {
				return nil, err
			}
			out[i] = g
		}
		return out, nil
	case typ.Is(tftypes.String):
		var s string
		err := v.As(&s)
		return s, err
	case typ.Is(tftypes.Bool):
		var b bool
		err := v.As(&b)
		return b, err
	case typ.Is(tftypes.Number):
		var f big.Float
		err := v.As(&f)
		return number(f.Text('f', -1)), err
	}
	return nil, fmt.Errorf("type %s not supported", typ)
}

// decode unmarshals a dynamic value of type typ into Go.
func (p *protoProvider) decode(typ tftypes.Type, dv *tfprotov6.DynamicValue) map[string]any {
	p.t.Helper()
	if dv == nil {
		p.t.Fatal("no value")
	}
	v, err := dv.Unmarshal(typ)
	if err != nil {
		p.t.Fatal(err)
	}
	g, err := goValue(v)
	if err != nil {
		p.t.Fatal(err)
	}
	m, _ := g.(map[string]any)
	return m
}

// identity is an identity value for typeName.
func (p *protoProvider) identity(typeName string, v map[string]any) *tfprotov6.ResourceIdentityData {
	p.t.Helper()
	typ, ok := p.idTypes[typeName]
	if !ok {
		p.t.Fatalf("%s has no identity schema", typeName)
	}
	return &tfprotov6.ResourceIdentityData{IdentityData: p.dynamic(typ, v)}
}

// identityOf decodes an identity of typeName.
func (p *protoProvider) identityOf(typeName string, id *tfprotov6.ResourceIdentityData) map[string]any {
	p.t.Helper()
	if id == nil {
		p.t.Fatalf("%s: no identity", typeName)
	}
	return p.decode(p.idTypes[typeName], id.IdentityData)
}

// importByIdentity imports typeName by identity, as an import block with
// identity does; the diagnostics are the caller's to check.
func (p *protoProvider) importByIdentity(typeName string, identity map[string]any) *tfprotov6.ImportResourceStateResponse {
	p.t.Helper()
	resp, err := p.s.ImportResourceState(context.Background(), &tfprotov6.ImportResourceStateRequest{
		TypeName: typeName, Identity: p.identity(typeName, identity),
		ClientCapabilities: &tfprotov6.ImportResourceStateClientCapabilities{},
	})
	if err != nil {
		p.t.Fatal(err)
	}
	return resp
}

// read refreshes a state, with its identity and private data.
func (p *protoProvider) read(typeName string, state *tfprotov6.DynamicValue, identity *tfprotov6.ResourceIdentityData, private []byte) *tfprotov6.ReadResourceResponse {
	p.t.Helper()
	resp, err := p.s.ReadResource(context.Background(), &tfprotov6.ReadResourceRequest{
		TypeName: typeName, CurrentState: state, CurrentIdentity: identity, Private: private,
	})
	if err != nil {
		p.t.Fatal(err)
	}
	return resp
}

// listResults runs ListResource to its end.
func (p *protoProvider) list(typeName string, config map[string]any, include bool, limit int64) []tfprotov6.ListResourceResult {
	p.t.Helper()
	s, ok := p.schema.ListResourceSchemas[typeName]
	if !ok {
		p.t.Fatalf("no list resource schema %s", typeName)
	}
	stream, err := p.ls.ListResource(context.Background(), &tfprotov6.ListResourceRequest{
		TypeName: typeName, Config: p.dynamic(s.ValueType(), config), IncludeResource: include, Limit: limit,
	})
	if err != nil {
		p.t.Fatal(err)
	}
	var out []tfprotov6.ListResourceResult
	for r := range stream.Results {
		out = append(out, r)
	}
	return out
}

// listedNames lists typeName and returns the names of the identities it
// returned, sorted; any error diagnostic fails the test.
func (p *protoProvider) listedNames(typeName string, config map[string]any) []string {
	p.t.Helper()
	var names []string
	for _, r := range p.list(typeName, config, false, 0) {
		requireNoErrors(p.t, "ListResource "+typeName, r.Diagnostics)
		if r.Identity == nil {
			continue // a warning about an intent that is not listed
		}
		name, _ := p.identityOf(typeName, r.Identity)["name"].(string)
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

func requireNoErrors(t *testing.T, what string, diags []*tfprotov6.Diagnostic) {
	t.Helper()
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			t.Fatalf("%s: %s: %s", what, d.Summary, d.Detail)
		}
	}
}

// protoErrors joins the error diagnostics' summaries and details.
func protoErrors(diags []*tfprotov6.Diagnostic) string {
	var b strings.Builder
	for _, d := range diags {
		if d.Severity == tfprotov6.DiagnosticSeverityError {
			fmt.Fprintf(&b, "%s: %s\n", d.Summary, d.Detail)
		}
	}
	return b.String()
}

// generateConfig writes a resource block from a resource object as
// terraform query -generate-config-out (and plan -generate-config-out)
// does: every attribute a configuration may set, with its value, leaving
// out computed-only attributes and null values.
func generateConfig(schema *tfprotov6.Schema, typeName, name string, obj map[string]any) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "resource %q %q {\n", typeName, name)
	if len(schema.Block.BlockTypes) > 0 {
		return "", fmt.Errorf("%s has blocks, which this generator does not write", typeName)
	}
	if err := writeAttributes(&b, schema.Block.Attributes, obj, "  "); err != nil {
		return "", err
	}
	b.WriteString("}\n")
	return b.String(), nil
}

func writeAttributes(b *strings.Builder, attrs []*tfprotov6.SchemaAttribute, obj map[string]any, indent string) error {
	sorted := append([]*tfprotov6.SchemaAttribute(nil), attrs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for _, a := range sorted {
		v := obj[a.Name]
		if v == nil || (a.Computed && !a.Optional && !a.Required) {
			continue
		}
		fmt.Fprintf(b, "%s%s = ", indent, a.Name)
		if err := writeAttrValue(b, a, v, indent); err != nil {
			return fmt.Errorf("%s: %w", a.Name, err)
		}
		b.WriteString("\n")
	}
	return nil
}

func writeAttrValue(b *strings.Builder, a *tfprotov6.SchemaAttribute, v any, indent string) error {
	if a.NestedType == nil {
		return writeHCL(b, v, indent)
	}
	object := func(x any, indent string) error {
		m, ok := x.(map[string]any)
		if !ok {
			return fmt.Errorf("%v: want an object", x)
		}
		b.WriteString("{\n")
		if err := writeAttributes(b, a.NestedType.Attributes, m, indent+"  "); err != nil {
			return err
		}
		b.WriteString(indent + "}")
		return nil
	}
	switch a.NestedType.Nesting {
	case tfprotov6.SchemaObjectNestingModeSingle:
		return object(v, indent)
	case tfprotov6.SchemaObjectNestingModeList, tfprotov6.SchemaObjectNestingModeSet:
		s, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%v: want a list", v)
		}
		b.WriteString("[\n")
		for _, x := range s {
			b.WriteString(indent + "  ")
			if err := object(x, indent+"  "); err != nil {
				return err
			}
			b.WriteString(",\n")
		}
		b.WriteString(indent + "]")
		return nil
	case tfprotov6.SchemaObjectNestingModeMap:
		m, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%v: want a map", v)
		}
		b.WriteString("{\n")
		for _, k := range keysOf(m) {
			fmt.Fprintf(b, "%s  %s = ", indent, hclString(k))
			if err := object(m[k], indent+"  "); err != nil {
				return err
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "}")
		return nil
	}
	return fmt.Errorf("nesting %v not supported", a.NestedType.Nesting)
}

// writeHCL writes a plain value (goValue's decoding) as an HCL expression.
func writeHCL(b *strings.Builder, v any, indent string) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case string:
		b.WriteString(hclString(v))
	case number:
		b.WriteString(string(v))
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case []any:
		b.WriteString("[")
		for i, x := range v {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writeHCL(b, x, indent); err != nil {
				return err
			}
		}
		b.WriteString("]")
	case map[string]any:
		b.WriteString("{\n")
		for _, k := range keysOf(v) {
			fmt.Fprintf(b, "%s  %s = ", indent, hclString(k))
			if err := writeHCL(b, v[k], indent+"  "); err != nil {
				return err
			}
			b.WriteString("\n")
		}
		b.WriteString(indent + "}")
	default:
		return fmt.Errorf("%v (%T) not supported", v, v)
	}
	return nil
}

// hclString quotes s for HCL.
func hclString(s string) string {
	q := strconv.Quote(s)
	q = strings.ReplaceAll(q, "${", "$${")
	return strings.ReplaceAll(q, "%{", "%%{")
}

func keysOf(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
