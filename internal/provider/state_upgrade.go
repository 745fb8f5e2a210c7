package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/resource"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// Schema version 1 of every resource keeps objects as a map from the
// object's key to its digest (objects.go). Version 0 kept a list of
// objects of six attributes each: upgradeObjects converts such a state, so
// that a configuration planned against it after an upgrade of the
// provider shows no change.

const schemaVersion = 1

// stateUpgraders is the UpgradeState of every resource.
func stateUpgraders() map[int64]resource.StateUpgrader {
	return map[int64]resource.StateUpgrader{
		0: {StateUpgrader: upgradeObjects},
	}
}

func upgradeObjects(ctx context.Context, req resource.UpgradeStateRequest, resp *resource.UpgradeStateResponse) {
	if req.RawState == nil || req.RawState.JSON == nil {
		resp.Diagnostics.AddError("Upgrading the state", "The prior state has no JSON to upgrade.")
		return
	}
	var attrs map[string]json.RawMessage
	if err := json.Unmarshal(req.RawState.JSON, &attrs); err != nil {
		resp.Diagnostics.AddError("Upgrading the state", fmt.Sprintf("The prior state cannot be read: %v.", err))
		return
	}
	objects, err := objectsV0ToV1(attrs["objects"])
	if err != nil {
		resp.Diagnostics.AddError("Upgrading the state", fmt.Sprintf("The objects of the prior state cannot be converted: %v.", err))
		return
	}
	attrs["objects"] = objects
	raw, err := json.Marshal(attrs)
	if err != nil {
		resp.Diagnostics.AddError("Upgrading the state", err.Error())
		return
	}
	v, err := discovery.ConfigValue(resp.State.Schema.Type().TerraformType(ctx), string(raw))
	if err != nil {
		resp.Diagnostics.AddError("Upgrading the state", fmt.Sprintf("The prior state does not fit this version's schema: %v.", err))
		return
	}
	resp.State.Raw = v
}

// objectsV0ToV1 turns version 0's list of {cluster, api_version, kind,
// namespace, name, digest} into version 1's map.
func objectsV0ToV1(raw json.RawMessage) (json.RawMessage, error) {
	if len(raw) == 0 || strings.TrimSpace(string(raw)) == "null" {
		return json.RawMessage("null"), nil
	}
	var list []struct {
		Cluster    string  `json:"cluster"`
		APIVersion string  `json:"api_version"`
		Kind       string  `json:"kind"`
		Namespace  string  `json:"namespace"`
		Name       string  `json:"name"`
		Digest     *string `json:"digest"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	out := make(map[string]*string, len(list))
	for _, o := range list {
		key := engine.Entry{Cluster: o.Cluster, APIVersion: o.APIVersion, Kind: o.Kind, Namespace: o.Namespace, Name: o.Name}.StateKey()
		if _, err := engine.EntryFromStateKey(key, ""); err != nil {
			return nil, err
		}
		out[key] = o.Digest
	}
	return json.Marshal(out)
}

var (
	_ resource.ResourceWithUpgradeState = &virtualDestinationResource{}
	_ resource.ResourceWithUpgradeState = &trafficPolicyResource{}
	_ resource.ResourceWithUpgradeState = &accessPolicyResource{}
	_ resource.ResourceWithUpgradeState = &clusterResource{}
)

func (l *intentLifecycle[M, P]) UpgradeState(context.Context) map[int64]resource.StateUpgrader {
	return stateUpgraders()
}
