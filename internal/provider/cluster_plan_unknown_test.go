package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// newOfflineProvider serves and configures a provider whose two clusters,
// east and west, refuse every connection: enough for what a plan of
// mesh_cluster does, which contacts no cluster.
func newOfflineProvider(t *testing.T) *protoProvider {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	for i, c := range []string{"east", "west"} {
		fmt.Fprintf(&b, "- name: %s\n  cluster:\n    server: https://127.0.0.1:%d\n", c, i+1)
	}
	b.WriteString("users:\n- name: u\n  user:\n    token: x\ncontexts:\n")
	for _, c := range []string{"east", "west"} {
		fmt.Fprintf(&b, "- name: %s\n  context:\n    cluster: %s\n    user: u\n", c, c)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	s, schema := servedProvider(t)
	p := &protoProvider{t: t, s: s, schema: schema, idTypes: map[string]tftypes.Type{}}
	clusters := map[string]any{}
	for _, c := range []string{"east", "west"} {
		v := map[string]any{"kubernetes": map[string]any{"config_path": kubeconfig, "config_context": c}}
		for k, x := range testTopologyValues[c] {
			v[k] = x
		}
		clusters[c] = v
	}
	resp, err := s.ConfigureProvider(ctx, &tfprotov6.ConfigureProviderRequest{TerraformVersion: "1.14.0",
		Config: p.dynamic(schema.Provider.ValueType(), map[string]any{"clusters": clusters})})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "ConfigureProvider", resp.Diagnostics)
	return p
}

// A mesh_cluster setting known only after apply, also one element of a
// list or map, plans objects as known after apply, without an error: the
// objects cannot be known before the setting is. (A translation without
// the unknown element would plan digests the apply does not produce.)
func TestClusterPlanWithUnknownSettings(t *testing.T) {
	p := newOfflineProvider(t)
	typ := p.resourceType("mesh_cluster").(tftypes.Object)
	unknown := tftypes.NewValue(tftypes.String, tftypes.UnknownValue)
	cases := map[string]func(m map[string]tftypes.Value){
		"a host": func(m map[string]tftypes.Value) {
			m["east_west_hosts"] = tftypes.NewValue(typ.AttributeTypes["east_west_hosts"], []tftypes.Value{unknown})
		},
		"a selector label": func(m map[string]tftypes.Value) {
			m["east_west_selector"] = tftypes.NewValue(typ.AttributeTypes["east_west_selector"], map[string]tftypes.Value{"app": unknown})
		},
		"an exemption label": func(m map[string]tftypes.Value) {
			m["default_deny"] = tftypes.NewValue(tftypes.Bool, true)
			m["default_deny_exempt"] = tftypes.NewValue(typ.AttributeTypes["default_deny_exempt"], []tftypes.Value{
				tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{"app": unknown})})
		},
		"mtls_mode": func(m map[string]tftypes.Value) { m["mtls_mode"] = unknown },
	}
	for name, set := range cases {
		t.Run(name, func(t *testing.T) {
			config, err := tfValue(typ, map[string]any{"name": "east", "expose_east_west": true})
			if err != nil {
				t.Fatal(err)
			}
			var attrs map[string]tftypes.Value
			if err := config.As(&attrs); err != nil {
				t.Fatal(err)
			}
			set(attrs)
			config = tftypes.NewValue(typ, attrs)
			dv, err := tfprotov6.NewDynamicValue(typ, config)
			if err != nil {
				t.Fatal(err)
			}
			prior, err := tfprotov6.NewDynamicValue(typ, tftypes.NewValue(typ, nil))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := p.s.PlanResourceChange(context.Background(), &tfprotov6.PlanResourceChangeRequest{
				TypeName: "mesh_cluster", PriorState: &prior, ProposedNewState: &dv, Config: &dv,
				ClientCapabilities: &tfprotov6.PlanResourceChangeClientCapabilities{},
			})
			if err != nil {
				t.Fatal(err)
			}
			requireNoErrors(t, "PlanResourceChange", resp.Diagnostics)
			planned, err := resp.PlannedState.Unmarshal(typ)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]tftypes.Value
			if err := planned.As(&got); err != nil {
				t.Fatal(err)
			}
			if got["objects"].IsKnown() {
				t.Fatalf("objects planned as %v, want known after apply", got["objects"])
			}
		})
	}
}
