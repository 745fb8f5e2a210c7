package provider

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// sharedContributions are the contributions of owner's kind on the shared
// objects of entries, as the process's listings hold them (one LIST per
// cluster and kind, shared with refresh), read once for the plan's checks
// (checkLimits, checkComposition). A cluster that cannot be read is left
// to the apply, which checks again; refresh already warns about it.
func sharedContributions(ctx context.Context, data *providerData, owner engine.Owner, entries []engine.Entry) []engine.LiveContribution {
	if data == nil || data.Engine == nil || owner.Composition == nil || len(entries) == 0 {
		return nil
	}
	found, errs := shareddata.Contributions(ctx, data.Engine, owner, entries)
	for _, e := range errs {
		tflog.Debug(ctx, "plan: composed objects not checked in a cluster", map[string]any{"owner": owner.String(), "error": e.Error()})
	}
	return found
}

// checkComposition is the plan's look at the shared objects a composed
// intent (a traffic policy) writes, as the clusters hold them now: other
// Terraform states contribute there too, and the apply will compose with
// them. It reads the process's listings (one LIST per cluster and kind,
// shared with refresh) and writes nothing. It reports:
//   - conflicts with what other states contributed, as errors naming both
//     policies and their workspaces (the apply would fail the same way);
//   - a contribution of the same name from an instance this state does not
//     hold (another state's policy, or this state's resource forgotten
//     with `terraform state rm`): an error, never a replacement, since
//     workspace names are not identities;
//   - contributions that will not be composed (not valid), naming the
//     object and the annotation;
//   - other workspaces' contributions, so a reviewer sees who else shapes
//     the traffic.
//
// A cluster that cannot be read is left to the apply, which checks again;
// refresh already warns about it.
func checkComposition(data *providerData, owner engine.Owner, entries []engine.Entry, found []engine.LiveContribution) diag.Diagnostics {
	var diags diag.Diagnostics
	if data == nil || data.Engine == nil || owner.Composition == nil || owner.Composition.Composer == nil || len(entries) == 0 {
		return diags
	}
	type other struct{ name, workspace string }
	others := map[other][]string{}
	byObject := map[string]map[string]composition.Contribution{}
	// One verdict per contribution, the apply's too (shareddata/verdict.go):
	// its problems are the plan's diagnostics, word for word.
	for _, v := range shareddata.Judge(owner, found) {
		if p := v.Problem(); p != nil {
			if p.Error {
				addAttrError(&diags, path.Root("name"), p.Summary, p.Detail)
			} else {
				diags.AddWarning(p.Summary, p.Detail)
			}
		}
		c := v.LiveContribution
		switch {
		case v.Standing != shareddata.Theirs && v.Standing != shareddata.Orphan:
		case data.Roster.Holds(c.Name, c.ID):
			// This state's other policies are planned in this run, and
			// checked against each other there (runstate.TrafficPolicyIndex); what
			// the clusters hold of them may be about to change.
		default:
			key := c.Entry.StateKey()
			if byObject[key] == nil {
				byObject[key] = map[string]composition.Contribution{}
			}
			byObject[key][c.Name] = c.Contribution
			if c.Workspace != "" && c.Workspace != data.Workspace { // an earlier build's contribution says nothing of its workspace
				o := other{c.Name, c.Workspace}
				others[o] = append(others[o], c.Entry.Cluster)
			}
		}
	}
	if diags.HasError() {
		return diags
	}
	seen := map[string]bool{}
	for _, en := range entries {
		contributions := byObject[en.StateKey()]
		if len(contributions) == 0 {
			continue
		}
		contributions[owner.Name] = owner.Composition.Contribution.For(en.Cluster).Contribution
		if _, err := owner.Composition.Composer.Compose(en.Key(), contributions); err != nil {
			for _, d := range translateDiagnostics(err) {
				if k := d.Summary() + d.Detail(); !seen[k] {
					seen[k] = true
					diags.Append(d)
				}
			}
		}
	}
	list := make([]other, 0, len(others))
	for o := range others {
		list = append(list, o)
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].workspace != list[j].workspace {
			return list[i].workspace < list[j].workspace
		}
		return list[i].name < list[j].name
	})
	for _, o := range list {
		clusters := slices.Compact(slices.Sorted(slices.Values(others[o])))
		diags.AddWarning("Traffic also shaped by another workspace",
			fmt.Sprintf("%s %q from workspace %s also contributes to the objects of %s %q (clusters %s). Both are composed into the same objects; its changes are planned in its own state.",
				kindWords(owner.Kind), o.name, engine.WorkspaceName(o.workspace), kindWords(owner.Kind), owner.Name, strings.Join(clusters, ", ")))
	}
	return diags
}

// kindWords is an owner kind as prose: "traffic policy".
func kindWords(kind string) string { return strings.ReplaceAll(kind, "-", " ") }
