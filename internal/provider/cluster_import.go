package provider

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

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

// importedCluster is the state an import of the cluster name makes: the
// attributes an import by name leaves empty at their defaults, before the
// cluster's objects tell the rest, and the name standing in for the
// instance ID, which the Read after it finds on the objects too
// (inferFromCluster).
func importedCluster(name string) *clusterResourceModel {
	exempt := make([]map[string]string, len(cluster.DefaultDenyExempt))
	for i, sel := range cluster.DefaultDenyExempt {
		exempt[i] = maps.Clone(sel)
	}
	return &clusterResourceModel{
		ID:                 types.StringValue(name),
		Name:               name,
		IstioNamespace:     translate.DefaultIstioNS,
		DefaultDenyExempt:  exempt,
		EastWestHosts:      slices.Clone(translate.DefaultEastWestHosts),
		EastWestSelector:   maps.Clone(cluster.DefaultEastWestSelector),
		KubernetesVersion:  types.StringNull(),
		IstioCRDsInstalled: types.BoolNull(),
		Objects:            types.MapNull(types.StringType),
	}
}

// inferFromCluster sets the intent attributes from the objects an imported
// mesh_cluster owns, so the first plan after import is empty when the
// configuration matches the cluster.
func (m *clusterResourceModel) inferFromCluster(ctx context.Context, data *providerData) diag.Diagnostics {
	var diags diag.Diagnostics
	if _, err := data.Engine.Probe(m.Name); err != nil {
		diags.AddWarning("Import could not read the cluster", err.Error())
		return diags
	}
	defer func() {
		if m.ID.IsNull() {
			m.ID = types.StringValue(newOwnerID()) // nothing found to adopt
		}
	}()
	exempt := []map[string]string{} // none found is an empty list, not null
	defer func() {
		if m.DefaultDeny {
			// The selectors in the order of their objects' names; the
			// configuration's order is not recorded anywhere.
			m.DefaultDenyExempt = exempt
		}
	}()
	for _, e := range entriesOf(m.Objects) {
		if !intentkind.Cluster.WritesKind(e.Kind) {
			continue
		}
		live, err := data.Engine.Get(ctx, e)
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
		m.IstioNamespace = e.Namespace
		if e.Kind == "AuthorizationPolicy" {
			if strings.HasPrefix(e.Name, cluster.DefaultDenyExemptPrefix) {
				if sel, ok, _ := unstructured.NestedStringMap(live.Object, "spec", "selector", "matchLabels"); ok {
					exempt = append(exempt, sel)
				}
				continue
			}
			m.DefaultDeny = true
			continue
		}
		switch e.Kind {
		case "Gateway":
			m.ExposeEastWest = true
			if sel, ok, _ := unstructured.NestedStringMap(live.Object, "spec", "selector"); ok {
				m.EastWestSelector = sel
			}
			if servers, ok, _ := unstructured.NestedSlice(live.Object, "spec", "servers"); ok && len(servers) > 0 {
				if s, ok := servers[0].(map[string]any); ok {
					if hs, ok, _ := unstructured.NestedStringSlice(s, "hosts"); ok {
						m.EastWestHosts = append([]string{}, hs...) // an empty list, not null
					}
				}
			}
		case "PeerAuthentication":
			if mode, ok, _ := unstructured.NestedString(live.Object, "spec", "mtls", "mode"); ok {
				m.MTLSMode = &mode
			} else {
				diags.AddWarning("Import", fmt.Sprintf("%s has no mtls.mode, so the imported mtls_mode is left unset.", e))
			}
		}
	}
	return diags
}
