package provider

import (
	"context"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// The identity schema of every resource, as Terraform 1.12+ asks for it:
// intents by name (required for import) and instance ID (optional),
// mesh_cluster by name, mesh_workspace by its identity.
func TestIdentitySchemas(t *testing.T) {
	s, _ := servedProvider(t)
	resp, err := s.GetResourceIdentitySchemas(context.Background(), &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "GetResourceIdentitySchemas", resp.Diagnostics)
	got := map[string]string{}
	for typ, is := range resp.IdentitySchemas {
		var attrs []string
		for _, a := range is.IdentityAttributes {
			how := "optional"
			if a.RequiredForImport {
				how = "required"
			}
			if a.RequiredForImport == a.OptionalForImport {
				t.Errorf("%s.%s: exactly one of RequiredForImport and OptionalForImport must be set", typ, a.Name)
			}
			if !a.Type.Is(tftypes.String) {
				t.Errorf("%s.%s is %s, want a string", typ, a.Name, a.Type)
			}
			attrs = append(attrs, a.Name+" "+how)
		}
		sort.Strings(attrs)
		got[typ] = strings.Join(attrs, ", ")
	}
	want := map[string]string{
		"mesh_cluster":             "name required",
		"mesh_virtual_destination": "id optional, name required",
		"mesh_traffic_policy":      "id optional, name required",
		"mesh_access_policy":       "id optional, name required",
		"mesh_workspace":           "id required",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("identity schemas:\n got %v\nwant %v", got, want)
	}
}

// applyIdentityConfig applies identityConfig, with the local mesh's
// clusters, and serves a provider configured for them.
func applyIdentityConfig(t *testing.T) (*relTF, *protoProvider) {
	t.Helper()
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "cluster", Name: "west"}, engine.Owner{Kind: "virtual-destination", Name: "idn"}, engine.Owner{Kind: "access-policy", Name: "idn"})
	w.write(providerConfig(t, "") + identityConfig)
	w.apply()
	return w, newProtoProvider(t)
}

// identityConfig declares one resource of each type.
const identityConfig = `
resource "mesh_cluster" "west" {
  name      = "west"
  mtls_mode = "STRICT"
}

resource "mesh_virtual_destination" "idn" {
  name     = "idn"
  hostname = "idn.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "west", namespace = "users", service = "user", priority = 1 },
  ]
  clients = { clusters = ["east", "west"], namespaces = ["accounts"] }
}

resource "mesh_traffic_policy" "idn" {
  name        = "idn"
  destination = { virtual_destination = mesh_virtual_destination.idn.hostname }
  timeout     = "2s"
}

resource "mesh_access_policy" "idn" {
  name        = "idn"
  destination = { virtual_destination = mesh_virtual_destination.idn.hostname }
  sources     = [{ namespace = "accounts", service_account = "account" }]
}

resource "mesh_workspace" "this" {
  traffic_policies = [mesh_traffic_policy.idn.name]
}
`

// stateAttrs are the attributes of a managed resource (type.name) in a
// working directory's state file.
func stateAttrs(w *relTF, addr string) map[string]any {
	w.t.Helper()
	typ, name, _ := strings.Cut(addr, ".")
	s, _ := w.stateFile()
	for _, r := range s.Resources {
		if r.Mode == "managed" && r.Type == typ && r.Name == name && len(r.Instances) == 1 {
			return r.Instances[0].Attributes
		}
	}
	w.t.Fatalf("%s is not in the state", addr)
	return nil
}

// objectKeys are the keys of an objects attribute, sorted.
func objectKeys(v any) []string {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Identity round trip for every resource, at the protocol level, against
// what Terraform (this machine's, which knows no identities) applied: an
// import by identity (Terraform 1.12+ import blocks with identity) finds
// the resource, the read after it returns the identity with the instance
// ID and the objects Terraform's state lists, a refresh keeps it, a read
// of a state that has no identity yet (a state written by an older
// Terraform) returns it, and an identity naming another instance is
// refused.
func TestAccIdentity_roundTrip(t *testing.T) {
	w, p := applyIdentityConfig(t)

	for _, typ := range []string{"mesh_virtual_destination", "mesh_traffic_policy", "mesh_access_policy"} {
		t.Run(typ, func(t *testing.T) {
			p.t = t
			tf := stateAttrs(w, typ+".idn")
			id, _ := tf["id"].(string)
			if id == "" {
				t.Fatalf("no instance ID in the state: %v", tf)
			}
			want := map[string]any{"name": "idn", "id": id}

			imp := p.importByIdentity(typ, map[string]any{"name": "idn"})
			requireNoErrors(t, "import by identity", imp.Diagnostics)
			if len(imp.ImportedResources) != 1 {
				t.Fatalf("import returned %d resources", len(imp.ImportedResources))
			}
			ir := imp.ImportedResources[0]
			read := p.read(typ, ir.State, ir.Identity, ir.Private)
			requireNoErrors(t, "read after import", read.Diagnostics)
			if got := p.identityOf(typ, read.NewIdentity); !reflect.DeepEqual(got, want) {
				t.Fatalf("identity after import: got %v, want %v", got, want)
			}
			st := p.decode(p.resourceType(typ), read.NewState)
			if st["id"] != id || st["name"] != "idn" {
				t.Fatalf("imported state has id %v, name %v; want %s, idn", st["id"], st["name"], id)
			}
			if got, wantKeys := objectKeys(st["objects"]), objectKeys(tf["objects"]); len(got) == 0 || !reflect.DeepEqual(got, wantKeys) {
				t.Fatalf("imported objects %v, Terraform's state lists %v", got, wantKeys)
			}

			refresh := p.read(typ, read.NewState, read.NewIdentity, read.Private)
			requireNoErrors(t, "refresh", refresh.Diagnostics)
			if got := p.identityOf(typ, refresh.NewIdentity); !reflect.DeepEqual(got, want) {
				t.Fatalf("identity after refresh: got %v, want %v", got, want)
			}
			// A state written by Terraform 1.11 or earlier has no identity:
			// the first read gives it one.
			first := p.read(typ, read.NewState, nil, read.Private)
			requireNoErrors(t, "read without identity", first.Diagnostics)
			if got := p.identityOf(typ, first.NewIdentity); !reflect.DeepEqual(got, want) {
				t.Fatalf("identity of a state that had none: got %v, want %v", got, want)
			}

			byID := p.importByIdentity(typ, map[string]any{"name": "idn", "id": id})
			requireNoErrors(t, "import by identity with the instance ID", byID.Diagnostics)
			if got := p.decode(p.resourceType(typ), byID.ImportedResources[0].State)["id"]; got != id {
				t.Fatalf("import naming instance %s imported %v", id, got)
			}
			other := p.importByIdentity(typ, map[string]any{"name": "idn", "id": "0123456789abcdef"})
			if msg := protoErrors(other.Diagnostics); !strings.Contains(msg, "No such instance") || !strings.Contains(msg, id) {
				t.Fatalf("import naming an instance the clusters do not hold: want No such instance naming %s, got %q", id, msg)
			}
			adopt := p.importByIdentity(typ, map[string]any{"name": adoptPrefix + "idn"})
			if msg := protoErrors(adopt.Diagnostics); !strings.Contains(msg, "Invalid import id") {
				t.Fatalf("an identity name with the adopt: prefix: want Invalid import id, got %q", msg)
			}
		})
	}

	t.Run("mesh_cluster", func(t *testing.T) {
		p.t = t
		tf := stateAttrs(w, "mesh_cluster.west")
		imp := p.importByIdentity("mesh_cluster", map[string]any{"name": "west"})
		requireNoErrors(t, "import by identity", imp.Diagnostics)
		ir := imp.ImportedResources[0]
		read := p.read("mesh_cluster", ir.State, ir.Identity, ir.Private)
		requireNoErrors(t, "read after import", read.Diagnostics)
		if got := p.identityOf("mesh_cluster", read.NewIdentity); !reflect.DeepEqual(got, map[string]any{"name": "west"}) {
			t.Fatalf("identity: got %v, want name west", got)
		}
		st := p.decode(p.resourceType("mesh_cluster"), read.NewState)
		if st["id"] != tf["id"] || st["mtls_mode"] != "STRICT" {
			t.Fatalf("imported mesh_cluster: id %v, mtls_mode %v; want %v, STRICT", st["id"], st["mtls_mode"], tf["id"])
		}
	})

	t.Run("mesh_workspace", func(t *testing.T) {
		p.t = t
		tf := stateAttrs(w, "mesh_workspace.this")
		wsID, _ := tf["id"].(string)
		imp := p.importByIdentity("mesh_workspace", map[string]any{"id": wsID})
		requireNoErrors(t, "import by identity", imp.Diagnostics)
		ir := imp.ImportedResources[0]
		read := p.read("mesh_workspace", ir.State, ir.Identity, ir.Private)
		requireNoErrors(t, "read after import", read.Diagnostics)
		if got := p.identityOf("mesh_workspace", read.NewIdentity); !reflect.DeepEqual(got, map[string]any{"id": wsID}) {
			t.Fatalf("identity: got %v, want id %s", got, wsID)
		}
		st := p.decode(p.resourceType("mesh_workspace"), read.NewState)
		if fmt.Sprint(st["traffic_policies"]) != "[idn]" {
			t.Fatalf("imported roster lists %v, want [idn]", st["traffic_policies"])
		}
		missing := p.importByIdentity("mesh_workspace", map[string]any{"id": "nobody-00000000"})
		if msg := protoErrors(missing.Diagnostics); !strings.Contains(msg, "No claim of this workspace identity") {
			t.Fatalf("import of an unclaimed identity: got %q", msg)
		}
	})
}

// vdImportWith imports mesh_virtual_destination from the fake clusters by
// import id (id) or, when identity is set, by identity, and returns the
// diagnostics, the imported instance ID and the identity the import
// returns.
func vdImportWith(t *testing.T, f fakeClusterSet, id string, identity map[string]string) (diag.Diagnostics, string, map[string]string) {
	t.Helper()
	ctx := context.Background()
	r := NewVirtualDestinationResource().(*virtualDestinationResource)
	r.data = recordsData(f)
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	var ir resource.IdentitySchemaResponse
	r.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &ir)
	null := func() *tfsdk.ResourceIdentity {
		return &tfsdk.ResourceIdentity{Schema: ir.IdentitySchema, Raw: tftypes.NewValue(ir.IdentitySchema.Type().TerraformType(ctx), nil)}
	}
	req := resource.ImportStateRequest{ID: id}
	if identity != nil {
		req.Identity = null()
		for k, v := range identity {
			if d := req.Identity.SetAttribute(ctx, path.Root(k), v); d.HasError() {
				t.Fatal(diagText(d))
			}
		}
	}
	resp := resource.ImportStateResponse{
		State:    tfsdk.State{Schema: sr.Schema, Raw: tftypes.NewValue(sr.Schema.Type().TerraformType(ctx), nil)},
		Identity: null(),
	}
	if req.Identity != nil {
		resp.Identity.Raw = req.Identity.Raw.Copy() // as the framework pre-populates it
	}
	r.ImportState(ctx, req, &resp)
	got := map[string]string{}
	var instance string
	if !resp.Diagnostics.HasError() {
		var v types.String
		resp.Diagnostics.Append(resp.State.GetAttribute(ctx, path.Root("id"), &v)...)
		instance = v.ValueString()
		for _, k := range []string{identityName, identityID} {
			var x types.String
			resp.Diagnostics.Append(resp.Identity.GetAttribute(ctx, path.Root(k), &x)...)
			got[k] = x.ValueString()
		}
	}
	return resp.Diagnostics, instance, got
}

// Import by identity: the identity's name is the import id; its instance
// ID picks one of several instances of that name, which an import by
// name alone refuses; an instance the clusters do not hold is refused,
// naming those they do. The identity returned is the imported state's.
func TestImportByIdentityPicksTheInstance(t *testing.T) {
	ns := virtualdestination.DefaultRecordsNamespace
	one := newFakeClusterSet(t, "east", "west")
	putRecord(t, one, "east", ns, "aaaa1111", vdIn("user", "users"), fmt.Sprintf(vdUserConfig, "user"))
	diags, instance, identity := vdImportWith(t, one, "", map[string]string{identityName: "user"})
	if diags.HasError() || instance != "aaaa1111" || !reflect.DeepEqual(identity, map[string]string{identityName: "user", identityID: "aaaa1111"}) {
		t.Fatalf("import by identity {name = user}: instance %q, identity %v, diagnostics %s", instance, identity, diagText(diags))
	}

	two := newFakeClusterSet(t, "east", "west")
	putRecord(t, two, "east", ns, "aaaa1111", vdIn("user", "users"), fmt.Sprintf(vdUserConfig, "user"))
	putRecord(t, two, "west", ns, "bbbb2222", vdIn("user", "users"), fmt.Sprintf(vdUserConfig, "user"))
	if diags, _, _ := vdImportWith(t, two, "user", nil); !strings.Contains(diagText(diags), "More than one instance to import") {
		t.Fatalf("import by name of two instances: %s", diagText(diags))
	}
	diags, instance, identity = vdImportWith(t, two, "", map[string]string{identityName: "user", identityID: "bbbb2222"})
	if diags.HasError() || instance != "bbbb2222" || identity[identityID] != "bbbb2222" {
		t.Fatalf("import by identity naming instance bbbb2222: instance %q, identity %v, diagnostics %s", instance, identity, diagText(diags))
	}
	diags, _, _ = vdImportWith(t, two, "", map[string]string{identityName: "user", identityID: "cccc3333"})
	if text := diagText(diags); !strings.Contains(text, "No such instance to import") || !strings.Contains(text, "aaaa1111, bbbb2222") {
		t.Fatalf("import by identity naming an instance that is not there: %s", text)
	}
	if diags, _, _ := vdImportWith(t, one, "", map[string]string{identityName: "adopt:user"}); !strings.Contains(diagText(diags), "Invalid import id") {
		t.Fatalf("an identity naming adopt:user: %s", diagText(diags))
	}
}

// Objects without an instance ID beside the instance an identity names
// are refused as an import by name refuses them (the named instance's
// selector would not tell them apart).
func TestImportByIdentityRefusesObjectsWithoutID(t *testing.T) {
	ns := virtualdestination.DefaultRecordsNamespace
	f := newFakeClusterSet(t, "east", "west")
	putRecord(t, f, "east", ns, "", vdIn("user", "users"), fmt.Sprintf(vdUserConfig, "user"))
	putRecord(t, f, "west", ns, "bbbb2222", vdIn("user", "users"), fmt.Sprintf(vdUserConfig, "user"))
	if d, _, _ := vdImportWith(t, f, "user", nil); !strings.Contains(diagText(d), "Objects without an instance ID") {
		t.Fatalf("import by name: %s", diagText(d))
	}
	d, instance, identity := vdImportWith(t, f, "", map[string]string{identityName: "user", identityID: "bbbb2222"})
	if !strings.Contains(diagText(d), "Objects without an instance ID") {
		t.Fatalf("import by identity {name = user, id = bbbb2222}: instance %q, identity %v, diagnostics %q", instance, identity, diagText(d))
	}
}

// A mesh_workspace state written by a build before the roster had a token
// (id = the Terraform workspace's name, token null), refreshed and
// applied by a Terraform that knows identities (1.12+): the read gives
// the old id as identity, and the plan keeps it but replaces the roster
// (the id forces it), so the minted id comes with a create, where an
// identity may be new. An update asked to mint fails before it writes a
// claim; the replacement claims the minted id only.
func TestAccIdentity_workspaceOfOldBuild(t *testing.T) {
	w, p := applyIdentityConfig(t)
	ctx := context.Background()
	typ := "mesh_workspace"
	rt := p.resourceType(typ)
	tf := stateAttrs(w, "mesh_workspace.this")
	old := map[string]any{}
	for k, v := range tf {
		old[k] = v
	}
	old["id"], old["token"] = "default", nil
	read := p.read(typ, p.dynamic(rt, old), nil, nil)
	requireNoErrors(t, "read", read.Diagnostics)
	if got := p.identityOf(typ, read.NewIdentity); !reflect.DeepEqual(got, map[string]any{identityID: "default"}) {
		t.Fatalf("identity after the first read: %v", got)
	}
	cfg := p.dynamic(rt, map[string]any{"traffic_policies": tf["traffic_policies"]})
	plan, err := p.s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: typ, PriorState: read.NewState, ProposedNewState: read.NewState, Config: cfg,
		PriorPrivate: read.Private, PriorIdentity: read.NewIdentity,
	})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "plan", plan.Diagnostics)
	if len(plan.RequiresReplace) != 1 || !plan.RequiresReplace[0].Equal(tftypes.NewAttributePath().WithAttributeName("id")) {
		t.Fatalf("the plan of an old build's roster does not replace it by its id: requires replace %v", plan.RequiresReplace)
	}
	if got := p.identityOf(typ, plan.PlannedIdentity); !reflect.DeepEqual(got, map[string]any{identityID: "default"}) {
		t.Fatalf("planned identity %v, want the one read", got)
	}
	before := workspaceClaims(t)

	// An update that would mint (what the apply did before the
	// replacement) refuses before it writes anything.
	update, err := p.s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
		TypeName: typ, PriorState: read.NewState, PlannedState: plan.PlannedState, Config: cfg,
		PlannedPrivate: plan.PlannedPrivate, PlannedIdentity: plan.PlannedIdentity,
	})
	if err != nil {
		t.Fatal(err)
	}
	if msg := protoErrors(update.Diagnostics); !strings.Contains(msg, "Workspace identity not planned") {
		t.Fatalf("an update minting the identity: %q", msg)
	}
	if after := workspaceClaims(t); !reflect.DeepEqual(after, before) {
		t.Fatalf("the refused update wrote claims: before %v, after %v", before, after)
	}

	// The replacement, as Terraform runs it: destroy, plan the create
	// without the prior state, create.
	destroy, err := p.s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
		TypeName: typ, PriorState: read.NewState, PlannedState: p.dynamic(rt, nil), Config: p.dynamic(rt, nil),
		PlannedPrivate: read.Private, PlannedIdentity: read.NewIdentity,
	})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "destroy", destroy.Diagnostics)
	null := p.dynamic(rt, nil)
	plan, err = p.s.PlanResourceChange(ctx, &tfprotov6.PlanResourceChangeRequest{
		TypeName: typ, PriorState: null, ProposedNewState: plan.PlannedState, Config: cfg,
	})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "plan of the create", plan.Diagnostics)
	create, err := p.s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
		TypeName: typ, PriorState: null, PlannedState: plan.PlannedState, Config: cfg,
		PlannedPrivate: plan.PlannedPrivate, PlannedIdentity: plan.PlannedIdentity,
	})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "create", create.Diagnostics)
	id, _ := p.decode(rt, create.NewState)["id"].(string)
	if !strings.HasPrefix(id, "default-") || !reflect.DeepEqual(p.identityOf(typ, create.NewIdentity), map[string]any{identityID: id}) {
		t.Fatalf("created roster %q, identity %v", id, p.identityOf(typ, create.NewIdentity))
	}
	if got := claimsOf(t, id); len(got) != len(testClusters) {
		t.Fatalf("claims of the minted identity %s: %v", id, got)
	}
	if got := claimsOf(t, "default"); len(got) > 0 {
		t.Fatalf("the old id was claimed: %v", got)
	}
	// The state Terraform would keep: the created roster, whose claim
	// the cleanup of this directory's state would not release.
	t.Cleanup(func() {
		del, err := p.s.ApplyResourceChange(ctx, &tfprotov6.ApplyResourceChangeRequest{
			TypeName: typ, PriorState: create.NewState, PlannedState: p.dynamic(rt, nil), Config: p.dynamic(rt, nil),
			PlannedPrivate: create.Private, PlannedIdentity: create.NewIdentity,
		})
		if err != nil {
			t.Error(err)
			return
		}
		requireNoErrors(t, "release of the created roster", del.Diagnostics)
	})
}

// workspaceClaims are the names of the workspace claims in every test
// cluster, as "<cluster>/<name>", sorted.
func workspaceClaims(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, c := range testClusters {
		l, err := dyn(t, c).Resource(gvrConfigMap).Namespace("mesh-intent-records").List(context.Background(), metav1.ListOptions{})
		if err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
		if l == nil {
			continue
		}
		for _, o := range l.Items {
			if strings.HasPrefix(o.GetName(), "mesh-workspace-") {
				out = append(out, c+"/"+o.GetName())
			}
		}
	}
	sort.Strings(out)
	return out
}
