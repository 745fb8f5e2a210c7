package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/discovery"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/runstate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// fakeClusterSet are the fake clusters of enginetest.
type fakeClusterSet = enginetest.Clusters

func newFakeClusterSet(_ *testing.T, clusters ...string) fakeClusterSet {
	return enginetest.New(clusters...)
}

// putRecord writes the record of in, as instance id (none if empty), in
// namespace ns of cluster, with config as its kept configuration.
func putRecord(t *testing.T, f fakeClusterSet, cluster, ns, id string, in virtualdestination.Intent, config string) {
	t.Helper()
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	labels := engine.Owner{Kind: "virtual-destination", Name: in.Name, ID: id}.Labels()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"data": map[string]any{virtualdestination.RecordHostnameKey: in.Hostname, virtualdestination.RecordIntentKey: string(raw)}}}
	obj.SetNamespace(ns)
	obj.SetName(virtualdestination.ObjectName(in.Name))
	obj.SetLabels(labels)
	if config != "" {
		obj.SetAnnotations(map[string]string{discovery.ConfigAnnotation: config})
	}
	f.Put(t, cluster, obj)
}

func recordsData(f fakeClusterSet) *providerData {
	return &providerData{
		Registry:        probeRegistry(),
		Destinations:    &runstate.DestinationIndex{},
		Planned:         &runstate.PlannedObjects{},
		TrafficPolicies: &runstate.TrafficPolicyIndex{},
		Roster:          &runstate.WorkspaceRoster{},
		Engine:          &engine.Engine{Clients: f},
	}
}

// vdIn is a virtual destination of hostname user.global named name,
// backed in namespace backendNS.
func vdIn(name, backendNS string) virtualdestination.Intent {
	in := probeVirtualDestination()
	in.Name = name
	for i := range in.Backends {
		in.Backends[i].Namespace = backendNS
	}
	return in
}

// Records of one hostname written by two instances (two states) are an
// error naming both, their instance IDs and clusters, never the record of
// the cluster that sorts first: its backends would decide where ALLOW
// rules go.
func TestLookupRefusesRecordsOfTwoInstances(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	putRecord(t, f, "east", virtualdestination.DefaultRecordsNamespace, "aaaa1111", vdIn("user-attacker", "evil"), "")
	putRecord(t, f, "west", virtualdestination.DefaultRecordsNamespace, "bbbb2222", vdIn("user", "users"), "")
	_, found, _, err := lookupVirtualDestination(context.Background(), recordsData(f), "user.global")
	var c *recordsConflict
	if found || !errors.As(err, &c) {
		t.Fatalf("found %v, error %v: want a recordsConflict", found, err)
	}
	for _, want := range []string{`"user-attacker" (instance aaaa1111, records in cluster east)`, `"user" (instance bbbb2222, records in cluster west)`, "another hostname"} {
		if !strings.Contains(err.Error(), want) {
			t.Fatalf("error %q does not say %q", err, want)
		}
	}
	diags, ok := recordsConflictDiagnostics(path.Root("destination"), err)
	if !ok || !diags.HasError() || diags.Errors()[0].Summary() != "Hostname served by more than one virtual destination" {
		t.Fatalf("diagnostics %v", diags)
	}
}

// Records of one instance that disagree (an apply that did not finish, or
// an edit) are an error too, naming where each version is.
func TestLookupRefusesRecordsThatDisagree(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	putRecord(t, f, "east", virtualdestination.DefaultRecordsNamespace, "aaaa1111", vdIn("user", "old"), "")
	putRecord(t, f, "west", virtualdestination.DefaultRecordsNamespace, "aaaa1111", vdIn("user", "users"), "")
	_, found, _, err := lookupVirtualDestination(context.Background(), recordsData(f), "user.global")
	var c *recordsConflict
	if found || !errors.As(err, &c) || !strings.Contains(err.Error(), "do not agree") ||
		!strings.Contains(err.Error(), "in cluster east") || !strings.Contains(err.Error(), "in cluster west") {
		t.Fatalf("found %v, error %v: want records that disagree, naming east and west", found, err)
	}
}

// Agreeing records of one instance resolve the hostname; a record outside
// the records namespace, and one that names no instance, are ignored and
// named for a warning.
func TestLookupTrustsAgreeingRecordsOfOneInstance(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	putRecord(t, f, "east", virtualdestination.DefaultRecordsNamespace, "aaaa1111", vdIn("user", "users"), "")
	putRecord(t, f, "west", virtualdestination.DefaultRecordsNamespace, "aaaa1111", vdIn("user", "users"), "")
	putRecord(t, f, "east", "elsewhere", "cccc3333", vdIn("user", "evil"), "")
	putRecord(t, f, "west", virtualdestination.DefaultRecordsNamespace, "", vdIn("user-x", "evil"), "")
	in, found, ignored, err := lookupVirtualDestination(context.Background(), recordsData(f), "user.global")
	if err != nil || !found || in.Backends[0].Namespace != "users" {
		t.Fatalf("found %v (%+v), error %v: want the agreeing records", found, in, err)
	}
	got := strings.Join(ignored, "; ")
	if !strings.Contains(got, "ConfigMap elsewhere/vd-user in cluster east") || !strings.Contains(got, "vd-user-x in cluster west (it names no instance") {
		t.Fatalf("ignored %q, want the record elsewhere and the one without an instance ID", got)
	}
}

// setRecordData changes the data of the record of name in cluster: key
// set to value, or removed when value is "".
func setRecordData(t *testing.T, f fakeClusterSet, cluster, name, key, value string) {
	t.Helper()
	gvr, _ := engine.ResourceOf(schemaConfigMap)
	obj, err := f[cluster].Tracker().Get(gvr, virtualdestination.DefaultRecordsNamespace, virtualdestination.ObjectName(name))
	if err != nil {
		t.Fatal(err)
	}
	u := obj.(*unstructured.Unstructured)
	if value == "" {
		unstructured.RemoveNestedField(u.Object, "data", key)
	} else if err := unstructured.SetNestedField(u.Object, value, "data", key); err != nil {
		t.Fatal(err)
	}
	if err := f[cluster].Tracker().Update(gvr, u, u.GetNamespace()); err != nil {
		t.Fatal(err)
	}
}

var schemaConfigMap = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}

// Records are versioned and read strictly: a record of an earlier build
// (no format) agrees with this build's (format 1) when they say the same;
// one in a newer format, or with a field this build does not know (a
// newer build's), is not resolved with that part dropped: the lookup fails
// saying to upgrade.
func TestLookupReadsRecordsByFormatStrictly(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	putRecord(t, f, "east", virtualdestination.DefaultRecordsNamespace, "aaaa1111", vdIn("user", "users"), "")
	putRecord(t, f, "west", virtualdestination.DefaultRecordsNamespace, "aaaa1111", vdIn("user", "users"), "")
	setRecordData(t, f, "west", "user", virtualdestination.RecordFormatKey, "1")
	in, found, _, err := lookupVirtualDestination(context.Background(), recordsData(f), "user.global")
	if err != nil || !found || in.Backends[0].Namespace != "users" {
		t.Fatalf("found %v, error %v: a record without format and one in format 1 that say the same must agree", found, err)
	}
	setRecordData(t, f, "east", "user", virtualdestination.RecordFormatKey, "2")
	setRecordData(t, f, "west", "user", virtualdestination.RecordFormatKey, "2")
	if _, found, _, err := lookupVirtualDestination(context.Background(), recordsData(f), "user.global"); found || err == nil ||
		!strings.Contains(err.Error(), "record format version 2") || !strings.Contains(err.Error(), "upgrade this provider") {
		t.Fatalf("found %v, error %v: want a record of a newer format refused, naming the upgrade", found, err)
	}
	raw, err := json.Marshal(vdIn("user", "users"))
	if err != nil {
		t.Fatal(err)
	}
	withField := strings.Replace(string(raw), "{", `{"mirror_to":"evil.global",`, 1)
	for _, c := range []string{"east", "west"} {
		setRecordData(t, f, c, "user", virtualdestination.RecordFormatKey, "1")
		setRecordData(t, f, c, "user", virtualdestination.RecordIntentKey, withField)
	}
	if _, found, _, err := lookupVirtualDestination(context.Background(), recordsData(f), "user.global"); found || err == nil ||
		!strings.Contains(err.Error(), `unknown field "mirror_to"`) || !strings.Contains(err.Error(), "upgrade this provider") {
		t.Fatalf("found %v, error %v: want a record with an unknown field refused, naming it", found, err)
	}
	// A data key beside hostname, intent and format: a newer build's.
	for _, c := range []string{"east", "west"} {
		setRecordData(t, f, c, "user", virtualdestination.RecordIntentKey, string(raw))
		setRecordData(t, f, c, "user", "mirror", "evil.global")
	}
	if _, found, _, err := lookupVirtualDestination(context.Background(), recordsData(f), "user.global"); found || err == nil ||
		!strings.Contains(err.Error(), `data key "mirror"`) || !strings.Contains(err.Error(), "upgrade this provider") ||
		!strings.Contains(err.Error(), virtualdestination.ObjectName("user")) {
		t.Fatalf("found %v, error %v: want a record with an unknown data key refused, naming the record, the key and the upgrade", found, err)
	}
	// The key removed, the record is read again.
	for _, c := range []string{"east", "west"} {
		setRecordData(t, f, c, "user", "mirror", "")
	}
	if _, found, _, err := lookupVirtualDestination(context.Background(), recordsData(f), "user.global"); !found || err != nil {
		t.Fatalf("found %v, error %v: want the record read once the key is gone", found, err)
	}
}

// vdDecoded is a virtual destination resource on data, its schema, its
// Terraform type and config (JSON) decoded as a value of it; an error
// fails the test.
func vdDecoded(t *testing.T, data *providerData, config string) (*virtualDestinationResource, resource.SchemaResponse, tftypes.Type, tftypes.Value) {
	t.Helper()
	r := NewVirtualDestinationResource().(*virtualDestinationResource)
	r.data = data
	var sr resource.SchemaResponse
	r.Schema(context.Background(), resource.SchemaRequest{}, &sr)
	typ := sr.Schema.Type().TerraformType(context.Background())
	v, err := discovery.ConfigValue(typ, config)
	if err != nil {
		t.Fatal(err)
	}
	return r, sr, typ, v
}

// vdPlan runs mesh_virtual_destination's ModifyPlan for a configuration
// (JSON), with priorID as the instance in state (none if empty), and
// returns its diagnostics.
func vdPlan(t *testing.T, data *providerData, config, priorID string, priorObjects map[string]string) diag.Diagnostics {
	t.Helper()
	ctx := context.Background()
	r, sr, typ, v := vdDecoded(t, data, config)
	state := tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(typ, nil)}
	if priorID != "" {
		state.Raw = v
		if d := state.SetAttribute(ctx, path.Root("id"), priorID); d.HasError() {
			t.Fatal(d)
		}
		if d := state.SetAttribute(ctx, path.Root("objects"), priorObjects); d.HasError() {
			t.Fatal(d)
		}
	}
	req := resource.ModifyPlanRequest{Config: tfsdk.Config{Schema: sr.Schema, Raw: v}, Plan: tfsdk.Plan{Schema: sr.Schema, Raw: v}, State: state}
	resp := resource.ModifyPlanResponse{Plan: req.Plan}
	r.ModifyPlan(ctx, req, &resp)
	return resp.Diagnostics
}

const vdUserConfig = `{"name":"%s","hostname":"user.global","namespace":"istio-system","ports":[{"number":8080,"protocol":"HTTP"}],"backends":[{"cluster":"east","namespace":"users","service":"user"}]}`

func diagText(ds diag.Diagnostics) string {
	var out []string
	for _, d := range ds {
		out = append(out, d.Summary()+": "+d.Detail())
	}
	return strings.Join(out, "\n")
}

// A virtual destination whose hostname another instance's records serve
// (another state, or another address in this one) fails at plan, naming
// both, their instance IDs and clusters, and the fixes. Records of its own
// prior instance (a rename or re-create replacing it) are not a conflict.
func TestPlanRefusesAHostnameServedByAnotherInstance(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	putRecord(t, f, "west", virtualdestination.DefaultRecordsNamespace, "bbbb2222", vdIn("user-b", "users"), "")
	diags := vdPlan(t, recordsData(f), fmt.Sprintf(vdUserConfig, "user"), "", nil)
	text := diagText(diags)
	if !diags.HasError() {
		t.Fatalf("plan of a second virtual destination of user.global passed: %s", text)
	}
	for _, want := range []string{"Hostname served by another virtual destination", `"user-b" (instance bbbb2222, records in cluster west)`,
		`this virtual destination "user" (a new instance`, "another hostname", "terraform import"} {
		if !strings.Contains(text, want) {
			t.Fatalf("the plan error does not say %q:\n%s", want, text)
		}
	}

	// The state's own instance, renamed (a replacement): its records are
	// leftovers it replaces. Terraform plans a replacement twice: with
	// the prior state, then as a create without it.
	f = newFakeClusterSet(t, "east", "west")
	putRecord(t, f, "east", virtualdestination.DefaultRecordsNamespace, "aaaa1111", vdIn("user", "users"), "")
	data := recordsData(f)
	if diags := vdPlan(t, data, fmt.Sprintf(vdUserConfig, "user-v2"), "aaaa1111", nil); diags.HasError() {
		t.Fatalf("the rename of a virtual destination failed at plan: %s", diagText(diags))
	}
	if diags := vdPlan(t, data, fmt.Sprintf(vdUserConfig, "user-v2"), "", nil); diags.HasError() {
		t.Fatalf("the create half of the rename failed at plan: %s", diagText(diags))
	}
}

// After records_namespace changes, the plan of a virtual destination whose
// records are in the former namespace warns, naming both namespaces.
func TestPlanWarnsWhenRecordsMove(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	data := recordsData(f)
	data.RecordsNamespace = "new-records"
	data.Engine.RecordsNamespace = "new-records"
	diags := vdPlan(t, data, fmt.Sprintf(vdUserConfig, "user"), "aaaa1111", map[string]string{"east/ConfigMap/mesh-intent-records/vd-user": "d"})
	text := diagText(diags)
	if diags.HasError() || !strings.Contains(text, "Records move to the new records namespace") ||
		!strings.Contains(text, `now "new-records"`) || !strings.Contains(text, `namespace "mesh-intent-records"`) {
		t.Fatalf("want a warning naming the old and new records namespace, got:\n%s", text)
	}
}

// vdImport imports mesh_virtual_destination "user" from the fake
// clusters and returns the diagnostics and the imported id.
func vdImport(t *testing.T, f fakeClusterSet) (diag.Diagnostics, string) {
	t.Helper()
	ctx := context.Background()
	r := NewVirtualDestinationResource().(*virtualDestinationResource)
	r.data = recordsData(f)
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	resp := resource.ImportStateResponse{State: tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(sr.Schema.Type().TerraformType(ctx), nil)}}
	r.ImportState(ctx, resource.ImportStateRequest{ID: "user"}, &resp)
	var id string
	if !resp.Diagnostics.HasError() {
		var v *string
		resp.Diagnostics.Append(resp.State.GetAttribute(ctx, path.Root("id"), &v)...)
		if v == nil {
			t.Fatalf("imported without an id: %s", diagText(resp.Diagnostics))
		}
		id = *v
	}
	return resp.Diagnostics, id
}

// Import takes one instance with an ID and one kept configuration, or
// refuses: objects without an instance ID (they would make the resource
// the owner of every instance's objects of the name), and kept
// configurations that disagree, are never imported by which was found
// first.
func TestImportRefusesInstancesWithoutIDAndDisagreeingConfigurations(t *testing.T) {
	ns := virtualdestination.DefaultRecordsNamespace
	good := fmt.Sprintf(vdUserConfig, "user")
	t.Run("one instance", func(t *testing.T) {
		f := newFakeClusterSet(t, "east", "west")
		putRecord(t, f, "east", ns, "aaaa1111", vdIn("user", "users"), good)
		putRecord(t, f, "west", ns, "aaaa1111", vdIn("user", "users"), good)
		putRecord(t, f, "west", "elsewhere", "cccc3333", vdIn("user", "evil"), strings.Replace(good, `"users"`, `"evil"`, 1))
		diags, id := vdImport(t, f)
		if diags.HasError() || id != "aaaa1111" {
			t.Fatalf("import: id %q, %s", id, diagText(diags))
		}
	})
	t.Run("no instance ID", func(t *testing.T) {
		f := newFakeClusterSet(t, "east", "west")
		putRecord(t, f, "east", ns, "", vdIn("user", "users"), good)
		diags, id := vdImport(t, f)
		text := diagText(diags)
		if !diags.HasError() || !strings.Contains(text, "Objects without an instance ID") || !strings.Contains(text, "ConfigMap "+ns+"/vd-user in east") {
			t.Fatalf("imported an instance without an ID as %q: %s", id, text)
		}
	})
	t.Run("configurations disagree", func(t *testing.T) {
		f := newFakeClusterSet(t, "east", "west")
		putRecord(t, f, "east", ns, "aaaa1111", vdIn("user", "users"), strings.Replace(good, `"users"`, `"other"`, 1))
		putRecord(t, f, "west", ns, "aaaa1111", vdIn("user", "users"), good)
		diags, id := vdImport(t, f)
		text := diagText(diags)
		if !diags.HasError() || !strings.Contains(text, "Kept configurations disagree") || !strings.Contains(text, "in east") || !strings.Contains(text, "in west") {
			t.Fatalf("imported one of two kept configurations as %q: %s", id, text)
		}
	})
	t.Run("two instances", func(t *testing.T) {
		f := newFakeClusterSet(t, "east", "west")
		putRecord(t, f, "east", ns, "aaaa1111", vdIn("user", "users"), good)
		putRecord(t, f, "west", ns, "bbbb2222", vdIn("user", "users"), good)
		diags, _ := vdImport(t, f)
		text := diagText(diags)
		if !diags.HasError() || !strings.Contains(text, "instance aaaa1111") || !strings.Contains(text, "instance bbbb2222") {
			t.Fatalf("want an error listing both instances: %s", text)
		}
	})
}
