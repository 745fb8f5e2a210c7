package provider

import (
	"context"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// vdModifyPlan runs a virtual destination's ModifyPlan on a
// configuration (JSON) with no state, the attributes named in unknown
// planned unknown (as Terraform's framework hands a create's computed
// attributes), and returns its response; an error fails the test.
func vdModifyPlan(t *testing.T, data *providerData, config string, unknown ...string) resource.ModifyPlanResponse {
	t.Helper()
	ctx := context.Background()
	r, sr, typ, v := vdDecoded(t, data, config)
	plan, err := tftypes.Transform(v, func(p *tftypes.AttributePath, x tftypes.Value) (tftypes.Value, error) {
		for _, name := range unknown {
			if p.Equal(tftypes.NewAttributePath().WithAttributeName(name)) {
				return tftypes.NewValue(x.Type(), tftypes.UnknownValue), nil
			}
		}
		return x, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	req := resource.ModifyPlanRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: v}, Plan: tfsdk.Plan{Schema: sr.Schema, Raw: plan},
		State: tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(typ, nil)}}
	resp := resource.ModifyPlanResponse{Plan: req.Plan}
	r.ModifyPlan(ctx, req, &resp)
	if resp.Diagnostics.HasError() {
		t.Fatalf("plan failed: %s", diagText(resp.Diagnostics))
	}
	return resp
}

// vdCreatePlanAdopted plans the creation of the virtual destination
// config (JSON) on data (vdModifyPlan, objects and adopted unknown), and
// returns the planned adopted attribute and the plan's warnings.
func vdCreatePlanAdopted(t *testing.T, data *providerData, config string) (types.Map, string) {
	t.Helper()
	resp := vdModifyPlan(t, data, config, "adopted", "objects")
	var adopted types.Map
	if d := resp.Plan.GetAttribute(context.Background(), path.Root("adopted"), &adopted); d.HasError() {
		t.Fatal(diagText(d))
	}
	return adopted, diagText(resp.Diagnostics.Warnings())
}

// A plan that cannot translate yet (the
// provider's clusters not known until apply: RegistryUnknown, or
// ErrUnknownPlacement) plans the objects unknown, but plans adopted as a
// KNOWN null. At apply, Terraform plans the resource again with the
// clusters known; that plan finds the hand-written DestinationRule on the
// host and records it in adopted: null became a map, and Terraform
// refuses the apply ("Provider produced inconsistent final plan ...
// .adopted: was null, but now ..."). Creating mesh_cluster-fed provider
// settings and an adopting intent in one apply (a first migration) fails.
// adopted must stay unknown while the plan cannot look, or equal what
// the apply's plan records.
func TestAdoptedIsNotKnownWhileTheObjectsAreUnknown(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	dr := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "spec": map[string]any{"host": "user.global"}}}
	dr.SetNamespace("users")
	dr.SetName("user-dr")
	f.Put(t, "east", dr)

	// The plan: the clusters are not known yet.
	blind := recordsData(f)
	blind.RegistryUnknown = true
	atPlan, warned := vdCreatePlanAdopted(t, blind, vdAdoptConfig)
	if !atPlan.IsUnknown() || !strings.Contains(warned, "Adoption decided at apply") {
		t.Fatalf("adopted planned %v while the clusters are unknown, warnings %q: want it unknown, with the warning that the apply decides", atPlan, warned)
	}

	// The apply's plan again, in a new provider process, clusters known.
	atApply, _ := vdCreatePlanAdopted(t, recordsData(f), vdAdoptConfig)
	if atApply.IsNull() || atApply.IsUnknown() || len(atApply.Elements()) != 1 {
		t.Fatalf("the plan with the clusters known: adopted %v, want the hand-written DestinationRule recorded", atApply)
	}
	if !atPlan.IsUnknown() && !atPlan.Equal(atApply) {
		t.Fatalf("adopted planned %v while the clusters are unknown, and %v by the apply's plan: Terraform refuses the apply (inconsistent final plan)", atPlan, atApply)
	}
}

// Which of a virtual destination and a
// traffic policy on one host records their shared hand-written
// DestinationRule depends on which one this provider process planned
// first (runstate.PlannedObjects.FirstAdopter). Terraform plans resources
// without a reference between them in parallel, in any order, and plans
// each again at apply in a new process: a policy whose destination names
// the hostname as a literal (no reference to the virtual destination),
// planned first at plan and second at apply, leaves the virtual
// destination's adopted null at plan and a map at apply, which Terraform
// refuses (inconsistent final plan). The record must not depend on the
// order resources are planned in.
func TestAdoptedDoesNotDependOnPlanOrder(t *testing.T) {
	f := newFakeClusterSet(t, "east")
	o := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "spec": map[string]any{"host": "user.global"}}}
	o.SetNamespace("users")
	o.SetName("user-dr")
	f.Put(t, "east", o)
	desired := []engine.Desired{{Entry: engine.Entry{Cluster: "east", APIVersion: "networking.istio.io/v1", Kind: "DestinationRule", Namespace: "istio-system", Name: "vd-user"},
		Manifest: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule", "metadata": map[string]any{"name": "vd-user", "namespace": "istio-system"}, "spec": map[string]any{"host": "user.global"}}}}
	vd := engine.Owner{Kind: "virtual-destination", Name: "user", Adopt: true}
	// A policy on the virtual destination joins its DestinationRule
	// (ownedByDestination), as every such policy's composition says.
	tp := engine.Owner{Kind: "traffic-policy", Name: "user-pool", Adopt: true, Composition: &engine.Composition{
		Owned: func(k translate.Key) bool { return k.Kind == "DestinationRule" && k.Name == "vd-user" }}}
	recorded := func(data *providerData, owner engine.Owner) int {
		_, adopt, _, diags := planAdoption(context.Background(), data, intentSpec{Owner: owner}, desired, false)
		if diags.HasError() {
			t.Fatal(diagText(diags))
		}
		return len(adopt)
	}
	// The plan: the policy first.
	atPlan := recordsData(f)
	tpAtPlan := recorded(atPlan, tp)
	vdAtPlan := recorded(atPlan, vd)
	// The apply, a new process: the virtual destination first.
	atApply := recordsData(f)
	vdAtApply := recorded(atApply, vd)
	tpAtApply := recorded(atApply, tp)
	if vdAtPlan != vdAtApply || vdAtPlan != 1 {
		t.Fatalf("the virtual destination records %d hand-written objects at plan (planned after the policy) and %d at apply (planned first), want 1 both times: Terraform refuses the apply", vdAtPlan, vdAtApply)
	}
	if tpAtPlan != 0 || tpAtApply != 0 {
		t.Fatalf("the policy records %d at plan (planned first) and %d at apply (planned second), want 0: the DestinationRule of its virtual destination is the destination's to adopt", tpAtPlan, tpAtApply)
	}
}

// A record in state is carried forward only while the plan's objects
// still take that object over: an old record (an adoption whose delete
// did not happen) of a DestinationRule on a host the intent no longer
// writes one for is dropped, and one it still covers is kept.
func TestAdoptedCarriesForwardOnlyWhatThePlanTakesOver(t *testing.T) {
	ctx := context.Background()
	var sr resource.SchemaResponse
	NewVirtualDestinationResource().Schema(ctx, resource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx).(tftypes.Object)
	const key = "east/DestinationRule.networking.istio.io/users/user-dr"
	vals := map[string]tftypes.Value{}
	for name, at := range typ.AttributeTypes {
		vals[name] = tftypes.NewValue(at, nil)
	}
	vals["adopted"] = tftypes.NewValue(tftypes.Map{ElementType: tftypes.String}, map[string]tftypes.Value{
		key: tftypes.NewValue(tftypes.String, "host=user.global uid=u1 resourceVersion=7")})
	state := tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(typ, vals)}
	for _, c := range []struct {
		takes bool
		want  int
	}{{false, 0}, {true, 1}} {
		var planned types.Map
		takes := func(h engine.HandWritten) bool {
			return c.takes && h.Kind == "DestinationRule" && h.Host == "user.global"
		}
		if d := planAdopted(ctx, &planned, adoption{Takes: takes}, state); d.HasError() {
			t.Fatal(diagText(d))
		}
		if len(planned.Elements()) != c.want {
			t.Errorf("the plan's objects take it over: %v; planned adopted %v, want %d records", c.takes, planned, c.want)
		}
	}
}
