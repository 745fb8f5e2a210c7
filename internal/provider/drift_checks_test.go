package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/provider"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

func stringMapValue(t *testing.T, m map[string]string) types.Map {
	t.Helper()
	v, d := types.MapValueFrom(context.Background(), types.StringType, m)
	if d.HasError() {
		t.Fatal(d)
	}
	return v
}

// A plan after a refresh that could not read west: exactly the objects in
// west whose planned digest equals the one in state become known after
// apply, so the plan is not empty; an object whose digest changes anyway
// keeps it, other clusters are untouched, and one warning names west and
// why. With every cluster read, the plan is what the translation says (no
// perpetual diff).
func TestRecheckUnreadableMarksExactlyTheUnreadObjects(t *testing.T) {
	owner := engine.Owner{Kind: "virtual-destination", Name: "user"}
	planned := stringMapValue(t, map[string]string{
		"east/ServiceEntry.networking.istio.io/istio-system/vd-user":    "1111",
		"west/ServiceEntry.networking.istio.io/istio-system/vd-user":    "2222",
		"west/DestinationRule.networking.istio.io/istio-system/vd-user": "3333",
		"west/ConfigMap/mesh-intent-records/vd-user":                    "5555",
	})
	prior := stringMapValue(t, map[string]string{
		"east/ServiceEntry.networking.istio.io/istio-system/vd-user":    "1111",
		"west/ServiceEntry.networking.istio.io/istio-system/vd-user":    "2222",
		"west/DestinationRule.networking.istio.io/istio-system/vd-user": "9999",
	})
	why := "Cluster west is unreachable: dial tcp 127.0.0.1:1: connect: connection refused. Check its connection settings."
	got, diags := recheckUnreadable(owner, planned, prior, map[string]string{"west": why})
	if diags.HasError() {
		t.Fatal(diagText(diags))
	}
	var unknown []string
	for k, v := range got.Elements() {
		if v.IsUnknown() {
			unknown = append(unknown, k)
		} else if want := planned.Elements()[k]; !v.Equal(want) {
			t.Errorf("%s planned %s, want %s", k, v, want)
		}
	}
	if strings.Join(unknown, ",") != "west/ServiceEntry.networking.istio.io/istio-system/vd-user" {
		t.Fatalf("re-checked %v, want exactly west's unchanged ServiceEntry", unknown)
	}
	if len(got.Elements()) != len(planned.Elements()) {
		t.Fatalf("planned %d objects, want %d", len(got.Elements()), len(planned.Elements()))
	}
	if len(diags) != 1 || diags.WarningsCount() != 1 {
		t.Fatalf("want one warning, got %s", diagText(diags))
	}
	for _, want := range []string{"Cluster west could not be read", `mesh_virtual_destination "user"`, why, "known after apply", "west/ServiceEntry.networking.istio.io/istio-system/vd-user"} {
		if !strings.Contains(diagText(diags), want) {
			t.Errorf("the warning does not say %q:\n%s", want, diagText(diags))
		}
	}

	for _, none := range []map[string]string{nil, {"onprem": why}} {
		same, diags := recheckUnreadable(owner, planned, prior, none)
		if len(diags) != 0 || !same.Equal(planned) {
			t.Fatalf("with %v unreadable the plan changed: %v, %s", none, same, diagText(diags))
		}
	}
}

// Refresh returns the clusters it could not read, with the reason, and
// not those it read (drift notes included); readObjects hands them on.
func TestReadObjectsReturnsTheClustersItCouldNotRead(t *testing.T) {
	f := newFakeClusterSet(t, "east")
	data := recordsData(f)
	spec := intentSpec{
		Owner: engine.Owner{Kind: "virtual-destination", Name: "user", ID: "aaaa1111"},
		Kinds: []k8sGVK{gvk(translate.NetworkingV1, "ServiceEntry")},
		Translate: func(*translate.Registry) ([]translate.Object, error) {
			return nil, nil
		},
	}
	prior := []engine.Entry{
		{Cluster: "west", APIVersion: translate.NetworkingV1, Kind: "ServiceEntry", Namespace: "istio-system", Name: "vd-user", Digest: "2222"},
		{Cluster: "east", APIVersion: translate.NetworkingV1, Kind: "ServiceEntry", Namespace: "istio-system", Name: "vd-user", Digest: "1111"},
	}
	objects, failed, _ := readObjects(context.Background(), data, spec, prior, false)
	if len(failed) != 1 || !strings.Contains(failed["west"], "west") {
		t.Fatalf("failed clusters %v, want west alone with its reason", failed)
	}
	if _, kept := objects.Elements()["west/ServiceEntry.networking.istio.io/istio-system/vd-user"]; !kept {
		t.Fatalf("west's entry was dropped: %v", objects)
	}
	drift := engine.Errors{{Cluster: "east", Summary: "Drift", Err: engine.ErrDrift}}
	if got := failedClusters(drift.Err()); len(got) != 0 {
		t.Fatalf("a drift note counts as a cluster that could not be read: %v", got)
	}
}

// fakePrivate is a resource's private state.
type fakePrivate map[string][]byte

func (p fakePrivate) GetKey(_ context.Context, key string) ([]byte, diag.Diagnostics) {
	return p[key], nil
}

func (p fakePrivate) SetKey(_ context.Context, key string, value []byte) diag.Diagnostics {
	if len(value) == 0 {
		delete(p, key)
	} else {
		p[key] = value
	}
	return nil
}

// What a refresh or apply could not read is kept for the plan, and
// forgotten once everything answered.
func TestUnreadableClustersKeptInPrivateState(t *testing.T) {
	ctx := context.Background()
	p := fakePrivate{}
	if d := recordUnreadable(ctx, p, map[string]string{"west": "Cluster west is unreachable."}); d.HasError() {
		t.Fatal(diagText(d))
	}
	if got := unreadableOf(ctx, p); got["west"] != "Cluster west is unreachable." || len(got) != 1 {
		t.Fatalf("read back %v", got)
	}
	if d := recordUnreadable(ctx, p, nil); d.HasError() {
		t.Fatal(diagText(d))
	}
	if _, kept := p[unreadableKey]; kept || len(unreadableOf(ctx, p)) != 0 {
		t.Fatalf("every cluster answered, but the private state still lists %s", p[unreadableKey])
	}
}

// A state listing objects in a cluster that is neither registered nor
// retired fails at plan, naming the cluster, the objects attribute and
// retired_clusters; a retired cluster, or a registry or retired_clusters
// known only after apply, does not.
func TestCheckRemovedClusters(t *testing.T) {
	owner := engine.Owner{Kind: "virtual-destination", Name: "user"}
	prior := stringMapValue(t, map[string]string{
		"east/ServiceEntry.networking.istio.io/istio-system/vd-user":   "1",
		"gone/ServiceEntry.networking.istio.io/istio-system/vd-user":   "2",
		"gone/ConfigMap/mesh-intent-records/vd-user":                   "3",
		"onprem/ServiceEntry.networking.istio.io/istio-system/vd-user": "4",
	})
	data := &providerData{Registry: probeRegistry(), Retired: map[string]bool{"onprem": true}}
	diags := checkRemovedClusters(data, owner, prior)
	if diags.ErrorsCount() != 1 {
		t.Fatalf("want one error, for cluster gone: %s", diagText(diags))
	}
	text := diagText(diags)
	for _, want := range []string{"Cluster gone still holds objects", `mesh_virtual_destination "user"`, "lists 2 objects", `add "gone" to the provider's retired_clusters`} {
		if !strings.Contains(text, want) {
			t.Errorf("the error does not say %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "onprem") {
		t.Errorf("a retired cluster is named:\n%s", text)
	}
	withPath, ok := diags[0].(diag.DiagnosticWithPath)
	if !ok || !withPath.Path().Equal(path.Root("objects")) {
		t.Errorf("the error is not tied to objects: %#v", diags[0])
	}
	for _, later := range []*providerData{
		{Registry: probeRegistry(), RegistryUnknown: true},
		{Registry: probeRegistry(), RetiredUnknown: true},
	} {
		if d := checkRemovedClusters(later, owner, prior); len(d) != 0 {
			t.Fatalf("checked with values known only after apply: %s", diagText(d))
		}
	}
}

// The plan of an intent whose state has objects in a cluster removed from
// the registry fails, also when the intent is being destroyed.
func TestPlanRefusesObjectsInARemovedCluster(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	priorObjects := map[string]string{"gone/ServiceEntry.networking.istio.io/istio-system/vd-user": "d"}
	diags := vdPlan(t, recordsData(f), fmt.Sprintf(vdUserConfig, "user"), "aaaa1111", priorObjects)
	if !diags.HasError() || !strings.Contains(diagText(diags), "Cluster gone still holds objects") {
		t.Fatalf("want the plan to fail naming cluster gone:\n%s", diagText(diags))
	}
}

// A provider whose clusters are known only after apply says so once, from
// Configure, naming the checks that wait; known clusters give no warning.
func TestConfigureNamesTheChecksThatWaitForApply(t *testing.T) {
	ctx := context.Background()
	// east names no server of its own: it reaches its API server through
	// KUBE_CONFIG_PATH, as a credential-less configuration would in CI.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: east, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: east, user: {token: t}}]
contexts: [{name: east, context: {cluster: east, user: east}}]
current-context: east
`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(envConfigPath, kubeconfig)
	t.Setenv(envConfigPaths, "")
	p := &meshProvider{version: "test"}
	var sr provider.SchemaResponse
	p.Schema(ctx, provider.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(ctx).(tftypes.Object)
	clustersType := typ.AttributeTypes["clusters"].(tftypes.Map)
	configure := func(clusters, retired tftypes.Value) diag.Diagnostics {
		vals := map[string]tftypes.Value{}
		for name, at := range typ.AttributeTypes {
			vals[name] = tftypes.NewValue(at, nil)
		}
		vals["clusters"], vals["retired_clusters"] = clusters, retired
		var resp provider.ConfigureResponse
		p.Configure(ctx, provider.ConfigureRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: tftypes.NewValue(typ, vals)}}, &resp)
		return resp.Diagnostics
	}
	eastType := clustersType.ElementType.(tftypes.Object)
	eastVals := map[string]tftypes.Value{}
	for name, at := range eastType.AttributeTypes {
		eastVals[name] = tftypes.NewValue(at, nil)
	}
	known := tftypes.NewValue(clustersType, map[string]tftypes.Value{"east": tftypes.NewValue(eastType, eastVals)})
	retiredType := typ.AttributeTypes["retired_clusters"]
	noRetired := tftypes.NewValue(retiredType, nil)

	diags := configure(tftypes.NewValue(clustersType, tftypes.UnknownValue), noRetired)
	if diags.HasError() || diags.WarningsCount() != 1 {
		t.Fatalf("want exactly one warning: %s", diagText(diags))
	}
	for _, want := range []string{"Cluster registry known only after apply", "every cluster an intent names", "retired_clusters", "wait for the apply"} {
		if !strings.Contains(diagText(diags), want) {
			t.Errorf("the warning does not say %q:\n%s", want, diagText(diags))
		}
	}
	if diags := configure(known, tftypes.NewValue(retiredType, tftypes.UnknownValue)); diags.WarningsCount() != 1 || !strings.Contains(diagText(diags), "retired_clusters known only after apply") {
		t.Errorf("retired_clusters unknown: want one warning, got %s", diagText(diags))
	}
	if diags := configure(known, noRetired); len(diags) != 0 {
		t.Errorf("known clusters: want no diagnostics, got %s", diagText(diags))
	}
}

// An apply that kept a cluster it could not reach, because nothing of the
// intent changes there (engine/outage.go), warns instead of failing, and
// records the cluster with why it could not be reached, so the next plan
// re-checks its objects; a real failure elsewhere stays an error.
func TestUnchangedUnreachableClusterWarnsAndIsReChecked(t *testing.T) {
	kept := &engine.UnreachableKept{Reason: "Cluster west is unreachable: connection refused.", Objects: 2, Cause: fmt.Errorf("connection refused")}
	errs := engine.Errors{
		{Cluster: "onprem", Summary: "Applying onprem/ServiceEntry", Detail: "Cluster onprem: boom.", Err: fmt.Errorf("boom")},
		{Cluster: "west", Summary: "Cluster west could not be reached", Detail: "kept as in state", Err: kept},
	}
	diags := engineDiagnostics(errs.Err(), diag.SeverityError)
	if diags.ErrorsCount() != 1 || diags.WarningsCount() != 1 || diags.Errors()[0].Summary() != errs[0].Summary || diags.Warnings()[0].Summary() != errs[1].Summary {
		t.Fatalf("want onprem's failure as an error and west's kept cluster as a warning, got %v", diags)
	}
	failed := failedClusters(errs.Err())
	if len(failed) != 2 || failed["west"] != kept.Reason || failed["onprem"] != errs[0].Detail {
		t.Fatalf("clusters recorded for the next plan's re-check %v, want west with why it could not be reached, and onprem", failed)
	}
}
