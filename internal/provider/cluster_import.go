package provider

import (
	"context"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
)

type k8sGVK = k8sschema.GroupVersionKind

// importDefaults fills the attributes an import by name leaves empty with
// their defaults, before the cluster's objects tell the rest.
func (m *clusterResourceModel) importDefaults() {
	m.IstioNamespace = types.StringValue(translate.DefaultIstioNS)
	m.DefaultDeny = types.BoolValue(false)
	m.DefaultDenyExempt = defaultDenyExemptValue()
	m.ExposeEastWest = types.BoolValue(false)
	hosts := make([]attr.Value, len(translate.DefaultEastWestHosts))
	for i, h := range translate.DefaultEastWestHosts {
		hosts[i] = types.StringValue(h)
	}
	m.EastWestHosts = types.ListValueMust(types.StringType, hosts)
	sel := map[string]attr.Value{}
	for k, v := range cluster.DefaultEastWestSelector {
		sel[k] = types.StringValue(v)
	}
	m.EastWestSelector = types.MapValueMust(types.StringType, sel)
}

// inferFromCluster sets the intent attributes from the objects an imported
// mesh_cluster owns, so the first plan after import is empty when the
// configuration matches the cluster.
func (r *clusterResource) inferFromCluster(ctx context.Context, m *clusterResourceModel) diag.Diagnostics {
	var diags diag.Diagnostics
	if _, err := r.data.Engine.Probe(m.Name.ValueString()); err != nil {
		diags.AddWarning("Import could not read the cluster", err.Error())
		return diags
	}
	defer func() {
		if m.ID.IsNull() {
			m.ID = types.StringValue(newOwnerID()) // nothing found to adopt
		}
	}()
	var exempt []map[string]string
	defer func() {
		if m.DefaultDeny.ValueBool() {
			// The selectors in the order of their objects' names; the
			// configuration's order is not recorded anywhere.
			m.DefaultDenyExempt = selectorsValue(exempt)
		}
	}()
	for _, e := range entriesOf(m.Objects) {
		if !intentkind.Cluster.WritesKind(e.Kind) {
			continue
		}
		live, err := r.data.Engine.Get(ctx, e)
		if err != nil {
			diags.AddWarning("Import could not read "+e.String(), err.Error())
			continue
		}
		if live == nil {
			diags.AddWarning("Import could not read "+e.String(), "The object is listed in the imported inventory but is not in the cluster; the next apply creates it.")
			continue
		}
		if id := live.GetLabels()[engine.LabelOwnerID]; id != "" && m.ID.IsNull() {
			m.ID = types.StringValue(id)
		}
		m.IstioNamespace = types.StringValue(e.Namespace)
		if e.Kind == "AuthorizationPolicy" {
			if strings.HasPrefix(e.Name, cluster.DefaultDenyExemptPrefix) {
				if sel, ok, _ := unstructured.NestedStringMap(live.Object, "spec", "selector", "matchLabels"); ok {
					exempt = append(exempt, sel)
				}
				continue
			}
			m.DefaultDeny = types.BoolValue(true)
			continue
		}
		switch e.Kind {
		case "Gateway":
			m.ExposeEastWest = types.BoolValue(true)
			if sel, ok, _ := unstructured.NestedStringMap(live.Object, "spec", "selector"); ok {
				v := map[string]attr.Value{}
				for k, s := range sel {
					v[k] = types.StringValue(s)
				}
				m.EastWestSelector = types.MapValueMust(types.StringType, v)
			}
			if servers, ok, _ := unstructured.NestedSlice(live.Object, "spec", "servers"); ok && len(servers) > 0 {
				if s, ok := servers[0].(map[string]any); ok {
					if hs, ok, _ := unstructured.NestedStringSlice(s, "hosts"); ok {
						v := make([]attr.Value, len(hs))
						for i, h := range hs {
							v[i] = types.StringValue(h)
						}
						m.EastWestHosts = types.ListValueMust(types.StringType, v)
					}
				}
			}
		case "PeerAuthentication":
			if mode, ok, _ := unstructured.NestedString(live.Object, "spec", "mtls", "mode"); ok {
				m.MTLSMode = types.StringValue(mode)
			} else {
				diags.AddWarning("Import", fmt.Sprintf("%s has no mtls.mode, so the imported mtls_mode is left unset.", e))
			}
		}
	}
	return diags
}
