package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// Honest drift checks (issue 27): a plan that could not read a cluster
// holding an intent's objects never says "No changes", a cluster removed
// from the registry while it still holds objects fails at plan, and a
// registry known only after apply says which checks wait for it.

// unreadableKey is the private-state key under which Read, Create and
// Update record the clusters they could not read or write, each with the
// reason: a JSON object from cluster name to sentence. The key is absent
// when every cluster answered. ModifyPlan reads it (from the refreshed
// state, or with -refresh=false from the last refresh or apply that was
// saved) to plan those clusters' objects as re-checked.
const unreadableKey = "unreadable_clusters"

// failedClusters returns, of an engine operation's errors, the clusters
// that could not be read or written, each with the first reason given.
// Drift notes are not failures: their cluster was read. A cluster an
// apply kept unchanged because it could not be reached is one: the next
// plan re-checks its objects.
func failedClusters(err error) map[string]string {
	var list engine.Errors
	if !errors.As(err, &list) {
		return nil
	}
	out := map[string]string{}
	for _, e := range list {
		if e == nil || e.Cluster == "" || errors.Is(e.Err, engine.ErrDrift) {
			continue
		}
		reason := e.Detail
		var kept *engine.UnreachableKept
		if errors.As(e.Err, &kept) {
			reason = kept.Reason // why it could not be reached, for the plan's re-check
		}
		if _, seen := out[e.Cluster]; !seen {
			out[e.Cluster] = reason
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// recordUnreadable keeps the clusters in private state, or removes the key
// when there are none.
func recordUnreadable(ctx context.Context, p privateSetter, clusters map[string]string) diag.Diagnostics {
	if p == nil || reflect.ValueOf(p).IsNil() {
		return nil
	}
	if len(clusters) == 0 {
		return p.SetKey(ctx, unreadableKey, nil)
	}
	raw, err := json.Marshal(clusters)
	if err != nil {
		var diags diag.Diagnostics
		diags.AddError("Private state not kept", fmt.Sprintf("The clusters that could not be read were not recorded: %v.", err))
		return diags
	}
	return p.SetKey(ctx, unreadableKey, raw)
}

// unreadableOf reads what recordUnreadable kept. A value this provider
// did not write is ignored: the refresh records it again.
func unreadableOf(ctx context.Context, p privateGetter) map[string]string {
	if p == nil || reflect.ValueOf(p).IsNil() {
		return nil
	}
	raw, diags := p.GetKey(ctx, unreadableKey)
	if diags.HasError() || len(raw) == 0 {
		return nil
	}
	var out map[string]string
	if json.Unmarshal(raw, &out) != nil {
		return nil
	}
	return out
}

// recheckUnreadable plans as unknown ("known after apply") every object
// in a cluster that could not be read whose planned digest equals the one
// in state: the plan cannot tell whether it still matches, so it must not
// say "No changes". Objects whose digest changes anyway keep their
// planned digest. Each cluster gets one warning naming it, why it could
// not be read, and the objects re-checked.
func recheckUnreadable(owner engine.Owner, planned, prior types.Map, unreadable map[string]string) (types.Map, diag.Diagnostics) {
	var diags diag.Diagnostics
	if len(unreadable) == 0 || planned.IsNull() || planned.IsUnknown() || prior.IsNull() || prior.IsUnknown() {
		return planned, diags
	}
	before := prior.Elements()
	elems := map[string]attr.Value{}
	marked := map[string][]string{}
	for key, v := range planned.Elements() {
		elems[key] = v
		cluster, _, _ := strings.Cut(key, "/")
		if _, down := unreadable[cluster]; !down {
			continue
		}
		if was, ok := before[key]; ok && !v.IsUnknown() && v.Equal(was) {
			elems[key] = types.StringUnknown()
			marked[cluster] = append(marked[cluster], key)
		}
	}
	if len(marked) == 0 {
		return planned, diags
	}
	clusters := make([]string, 0, len(marked))
	for c := range marked {
		clusters = append(clusters, c)
	}
	sort.Strings(clusters)
	for _, c := range clusters {
		keys := marked[c]
		sort.Strings(keys)
		diags.AddWarning(fmt.Sprintf("Cluster %s could not be read: %s of %s re-checked at apply", c, countObjects(len(keys)), intentkind.ResourceOf(owner.Kind, owner.Name)),
			fmt.Sprintf("When the state was last refreshed or applied, cluster %s could not be read: %s "+
				"So this plan cannot tell whether the objects of %s there still match the configuration, and shows them as known after apply: %s. "+
				"The apply writes them again and applies the other clusters either way; while cluster %s does not answer, it keeps their entries in state with a warning when nothing of this intent changes there, "+
				"and fails for that cluster alone when something does. "+
				"Once %s answers, the next plan is empty if nothing changed there.",
				c, sentence(unreadable[c]), intentkind.ResourceOf(owner.Kind, owner.Name), strings.Join(keys, ", "), c, c))
	}
	out, d := types.MapValue(types.StringType, elems)
	diags.Append(d...)
	return out, diags
}

// sentence ends s with a full stop.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "no reason was given."
	}
	if strings.HasSuffix(s, ".") {
		return s
	}
	return s + "."
}

// checkRemovedClusters fails the plan of an intent whose state lists
// objects in a cluster that is neither in the provider's clusters nor in
// retired_clusters: the apply (or destroy) could neither update nor delete
// them. Skipped while the registry or retired_clusters is known only after
// apply (providerData.waitsForApply says so, once).
func checkRemovedClusters(data *providerData, owner engine.Owner, prior types.Map) diag.Diagnostics {
	var diags diag.Diagnostics
	if data == nil || data.Registry == nil || data.RegistryUnknown || data.RetiredUnknown || prior.IsNull() || prior.IsUnknown() {
		return diags
	}
	gone := map[string][]string{}
	for key := range prior.Elements() {
		cluster, _, _ := strings.Cut(key, "/")
		if data.Registry.Cluster(cluster) == nil && !data.Retired[cluster] {
			gone[cluster] = append(gone[cluster], key)
		}
	}
	clusters := make([]string, 0, len(gone))
	for c := range gone {
		clusters = append(clusters, c)
	}
	sort.Strings(clusters)
	for _, c := range clusters {
		keys := gone[c]
		sort.Strings(keys)
		addAttrError(&diags, path.Root("objects"), fmt.Sprintf("Cluster %s still holds objects of %s", c, intentkind.ResourceOf(owner.Kind, owner.Name)),
			fmt.Sprintf("Cluster %s is no longer in the provider's clusters, but the state of %s lists %s there (objects[%q]%s), "+
				"which an apply could neither update nor delete. "+
				"If cluster %s is gone for good, add %q to the provider's retired_clusters: its objects are then dropped from state, with a warning, without contacting it. "+
				"Otherwise keep %s in clusters until no intent places objects there (or this one is destroyed), apply, and remove it then.",
				c, intentkind.ResourceOf(owner.Kind, owner.Name), countObjects(len(keys)), keys[0], andMore(len(keys)-1), c, c, c))
	}
	return diags
}

func andMore(n int) string {
	if n <= 0 {
		return ""
	}
	return fmt.Sprintf(" and %d more", n)
}

// waitsForApplyWarning says, once per run (from Configure), which checks
// cannot run at plan because the registry, or retired_clusters, is known
// only after apply. Empty when both are known.
func waitsForApplyWarning(registryUnknown, retiredUnknown bool) (summary, detail string) {
	switch {
	case registryUnknown:
		return "Cluster registry known only after apply",
			"The provider's clusters depend on values known only after apply, so this plan checks nothing that needs them, and these checks wait for the apply: " +
				"that every cluster an intent names (placements, backends, traffic shifts, mirrors) is registered; which objects each intent writes, and where (objects shows as known after apply); " +
				"the Kubernetes name and size limits; two intents writing one object; composition with other states' traffic policies and hostnames other states serve; " +
				"and that no cluster removed from clusters still holds objects (retired_clusters). " +
				"They run when Terraform plans each resource again during the apply: a mistake then stops that resource before it writes anything, but resources applied earlier in the same run stay applied."
	case retiredUnknown:
		return "retired_clusters known only after apply",
			"The provider's retired_clusters depends on values known only after apply, so the check that no cluster removed from clusters still holds objects waits for the apply, " +
				"when Terraform plans each resource again: a mistake then stops that resource before it writes anything."
	}
	return "", ""
}

// countObjects is "1 object" or "n objects".
func countObjects(n int) string {
	if n == 1 {
		return "1 object"
	}
	return fmt.Sprintf("%d objects", n)
}
