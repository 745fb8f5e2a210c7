package provider

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/list"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/providerserver"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// listConfig holds two intents of each kind, on two hostnames, a service
// and different clusters.
const listConfig = `
resource "mesh_virtual_destination" "a" {
  name     = "lst-a"
  hostname = "lst-a.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "west", namespace = "users", service = "user", priority = 1 },
  ]
  clients = { clusters = ["east", "west"], namespaces = ["accounts"] }
}

resource "mesh_virtual_destination" "b" {
  name     = "lst-b"
  hostname = "lst-b.global"
  ports    = [{ number = 9090, protocol = "GRPC" }]
  backends = [{ cluster = "onprem", namespace = "users", service = "user" }]
  clients  = { clusters = ["onprem"] }
}

resource "mesh_traffic_policy" "a" {
  name        = "lst-a"
  destination = { virtual_destination = mesh_virtual_destination.a.hostname }
  timeout     = "2s"
  retries     = { attempts = 2, per_try_timeout = "500ms", retry_on = ["5xx"] }
}

resource "mesh_traffic_policy" "svc" {
  name        = "lst-svc"
  destination = { service = "user", namespace = "users" }
  sources     = { clusters = ["west"] }
  timeout     = "1s"
}

resource "mesh_access_policy" "a" {
  name        = "lst-a"
  destination = { virtual_destination = mesh_virtual_destination.b.hostname }
  sources     = [{ namespace = "accounts", service_account = "account" }]
  rules       = [{ methods = ["GET"], paths = ["/v1/*"] }]
}

resource "mesh_access_policy" "svc" {
  name        = "lst-svc"
  destination = { service = "user", namespace = "users", clusters = ["east"] }
  sources     = [{ namespace = "accounts", service_account = "account" }]
}
`

// listed are the intents listConfig declares, by resource type.
var listed = map[string][]string{
	"mesh_virtual_destination": {"lst-a", "lst-b"},
	"mesh_traffic_policy":      {"lst-a", "lst-svc"},
	"mesh_access_policy":       {"lst-a", "lst-svc"},
}

// resourceName is the resource block name of an intent in listConfig.
func resourceName(name string) string {
	if name == "lst-b" {
		return "b"
	}
	return strings.TrimPrefix(name, "lst-")
}

func unionNames(a, b []string) []string {
	out := slices.Compact(slices.Sorted(slices.Values(append(append([]string(nil), a...), b...))))
	if out == nil {
		return []string{}
	}
	return out
}

func namesOrEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// List resources at the protocol level (Terraform 1.14+ list blocks and
// terraform query) against the local mesh: each kind lists exactly the
// intents the clusters hold, before, during and after, and the name,
// hostname and cluster filters, the limit and include_resource do what
// they say. Then the state is lost, and the configuration generated from
// the listed resource objects, as terraform query -generate-config-out
// writes it, imports into a new state with this machine's Terraform with
// no change: the apply writes nothing, and the plan after it is empty.
func TestAccList_intents(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	first, second := newRelTF(t), newRelTF(t)
	relCleanup(t, second, nil,
		engine.Owner{Kind: "virtual-destination", Name: "lst-a"}, engine.Owner{Kind: "virtual-destination", Name: "lst-b"},
		engine.Owner{Kind: "access-policy", Name: "lst-a"}, engine.Owner{Kind: "access-policy", Name: "lst-svc"})
	p := newProtoProvider(t)
	kinds := []string{"mesh_virtual_destination", "mesh_traffic_policy", "mesh_access_policy"}
	baseline := map[string][]string{}
	for _, typ := range kinds {
		baseline[typ] = namesOrEmpty(p.listedNames(typ, nil))
		for _, n := range listed[typ] {
			if slices.Contains(baseline[typ], n) {
				t.Fatalf("%s %s exists before the test wrote it", typ, n)
			}
		}
	}

	first.write(providerConfig(t, "") + listConfig)
	first.apply()
	written := liveVersions(t)

	for _, typ := range kinds {
		if got, want := namesOrEmpty(p.listedNames(typ, nil)), unionNames(baseline[typ], listed[typ]); !reflect.DeepEqual(got, want) {
			t.Errorf("%s lists %v, want %v", typ, got, want)
		}
		if got := p.listedNames(typ, map[string]any{"name": "lst-svc"}); typ != "mesh_virtual_destination" && !reflect.DeepEqual(got, []string{"lst-svc"}) {
			t.Errorf("%s named lst-svc lists %v", typ, got)
		}
		if got := p.listedNames(typ, map[string]any{"name": "lst-nope"}); len(got) != 0 {
			t.Errorf("%s named lst-nope lists %v", typ, got)
		}
		// The cluster filter: the intents with objects in the cluster,
		// by Terraform's own state.
		for _, c := range testClusters {
			var want []string
			for _, n := range listed[typ] {
				for _, k := range objectKeys(stateAttrs(first, typ+"."+resourceName(n))["objects"]) {
					if strings.HasPrefix(k, c+"/") {
						want = append(want, n)
						break
					}
				}
			}
			var got []string
			for _, n := range p.listedNames(typ, map[string]any{"cluster": c}) {
				if slices.Contains(listed[typ], n) {
					got = append(got, n)
				}
			}
			if !reflect.DeepEqual(namesOrEmpty(got), namesOrEmpty(want)) {
				t.Errorf("%s in cluster %s lists %v, want %v", typ, c, got, want)
			}
		}
	}
	// The fixture tells the filters apart: lst-b has no object in east.
	if got := p.listedNames("mesh_virtual_destination", map[string]any{"cluster": "east"}); slices.Contains(got, "lst-b") || !slices.Contains(got, "lst-a") {
		t.Errorf("virtual destinations in east: %v, want lst-a and not lst-b", got)
	}
	for typ, want := range map[string]map[string][]string{
		"mesh_virtual_destination": {"lst-a.global": {"lst-a"}, "lst-b.global": {"lst-b"}},
		"mesh_traffic_policy":      {"lst-a.global": {"lst-a"}, "user.users.svc.cluster.local": {"lst-svc"}, "lst-b.global": nil},
		"mesh_access_policy":       {"lst-b.global": {"lst-a"}, "user.users.svc.cluster.local": {"lst-svc"}, "lst-a.global": nil},
	} {
		for host, names := range want {
			if got := p.listedNames(typ, map[string]any{"hostname": host}); !reflect.DeepEqual(namesOrEmpty(got), namesOrEmpty(names)) {
				t.Errorf("%s on %s lists %v, want %v", typ, host, got, names)
			}
		}
	}
	if got := p.listedNames("mesh_access_policy", map[string]any{"name": "lst-svc", "hostname": "lst-b.global"}); len(got) != 0 {
		t.Errorf("filters must all match: access policy lst-svc on lst-b.global lists %v", got)
	}
	if got := p.list("mesh_traffic_policy", nil, false, 1); len(got) != 1 {
		t.Errorf("a limit of 1 returned %d results", len(got))
	}
	unknown := p.list("mesh_virtual_destination", map[string]any{"cluster": "mars"}, false, 0)
	if len(unknown) != 1 || !strings.Contains(protoErrors(unknown[0].Diagnostics), "Unknown cluster") {
		t.Errorf("listing in an unregistered cluster: want one Unknown cluster error, got %v", unknown)
	}
	requireListConfigValid(t, p, "mesh_access_policy", map[string]any{"name": "lst-a", "cluster": "east"}, "")
	requireListConfigValid(t, p, "mesh_access_policy", map[string]any{"name": "Not_A_Name"}, "Invalid name")

	// Every result of each kind, with its resource object, written as
	// configuration with an import block per intent.
	var generated strings.Builder
	imports := 0
	for _, typ := range kinds {
		for _, r := range p.list(typ, nil, false, 0) {
			if r.Resource != nil {
				t.Errorf("%s: a resource object without include_resource", typ)
			}
		}
		for _, r := range p.list(typ, nil, true, 0) {
			requireNoErrors(t, "ListResource "+typ, r.Diagnostics)
			if r.Identity == nil {
				continue
			}
			id := p.identityOf(typ, r.Identity)
			name, _ := id["name"].(string)
			if !slices.Contains(listed[typ], name) {
				continue
			}
			tf := stateAttrs(first, typ+"."+resourceName(name))
			if id["id"] != tf["id"] {
				t.Errorf("%s %s: identity %v, the state's instance is %v", typ, name, id, tf["id"])
			}
			if r.Resource == nil {
				t.Fatalf("%s %s: no resource object with include_resource", typ, name)
			}
			obj := p.decode(p.resourceType(typ), r.Resource)
			if got, want := objectKeys(obj["objects"]), objectKeys(tf["objects"]); !reflect.DeepEqual(got, want) {
				t.Errorf("%s %s: listed objects %v, the state lists %v", typ, name, got, want)
			}
			if !strings.HasPrefix(r.DisplayName, name) {
				t.Errorf("%s %s: display name %q", typ, name, r.DisplayName)
			}
			block, err := generateConfig(p.schema.ResourceSchemas[typ], typ, resourceName(name), obj)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&generated, "%s\nimport {\n  to = %s.%s\n  id = %q\n}\n", block, typ, resourceName(name), name)
			imports++
		}
	}
	if imports != 6 {
		t.Fatalf("listed %d of the 6 intents with resource objects:\n%s", imports, generated.String())
	}
	loseState(t, first)

	second.write(providerConfig(t, "") + generated.String())
	out, code := second.run("plan")
	if code != 0 || !strings.Contains(out, "Plan: 6 to import, 0 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("the generated configuration does not import with no change (exit %d):\n%s\n%s", code, out, generated.String())
	}
	second.apply()
	requireSameVersions(t, "importing the generated configuration", written, liveVersions(t))
	second.planIsEmpty()
	second.destroy()
	for _, typ := range kinds {
		if got := namesOrEmpty(p.listedNames(typ, nil)); !reflect.DeepEqual(got, baseline[typ]) {
			t.Errorf("after destroy %s lists %v, want %v", typ, got, baseline[typ])
		}
	}
}

// requireListConfigValid validates a list block's configuration through
// ValidateListResourceConfig: no error when wantErr is empty, else an
// error containing it.
func requireListConfigValid(t *testing.T, p *protoProvider, typ string, config map[string]any, wantErr string) {
	t.Helper()
	resp, err := p.ls.ValidateListResourceConfig(context.Background(), &tfprotov6.ValidateListResourceConfigRequest{
		TypeName: typ, Config: p.dynamic(p.schema.ListResourceSchemas[typ].ValueType(), config),
	})
	if err != nil {
		t.Fatal(err)
	}
	msg := protoErrors(resp.Diagnostics)
	if (wantErr == "") != (msg == "") || !strings.Contains(msg, wantErr) {
		t.Errorf("validating %s list configuration %v: got errors %q, want %q", typ, config, msg, wantErr)
	}
}

// The list resources, at the protocol level without clusters: one per
// intent kind, with the name, hostname and cluster filters.
func TestListResourceSchemas(t *testing.T) {
	s, err := providerserver.NewProtocol6WithError(New("test")())()
	if err != nil {
		t.Fatal(err)
	}
	schema, err := s.GetProviderSchema(context.Background(), &tfprotov6.GetProviderSchemaRequest{})
	if err != nil {
		t.Fatal(err)
	}
	requireNoErrors(t, "GetProviderSchema", schema.Diagnostics)
	var got []string
	for typ, ls := range schema.ListResourceSchemas {
		var attrs []string
		for _, a := range ls.Block.Attributes {
			if !a.Optional || a.Required || a.Computed {
				t.Errorf("%s.%s: want an optional filter", typ, a.Name)
			}
			attrs = append(attrs, a.Name)
		}
		sort.Strings(attrs)
		got = append(got, typ+": "+strings.Join(attrs, ","))
	}
	sort.Strings(got)
	want := []string{"mesh_access_policy: cluster,hostname,name", "mesh_traffic_policy: cluster,hostname,name", "mesh_virtual_destination: cluster,hostname,name"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("list resources:\n got %v\nwant %v", got, want)
	}
}

// listVDs lists mesh_virtual_destination in the fake clusters with the
// given filters and returns the names listed (with their instance IDs)
// and the warnings.
func listVDs(t *testing.T, f fakeClusterSet, filters map[string]string) (names []string, warnings string) {
	t.Helper()
	ctx := context.Background()
	l := &intentList{newResource: NewVirtualDestinationResource, hostnames: vdHostnames, data: recordsData(f)}
	r := NewVirtualDestinationResource().(*virtualDestinationResource)
	var sr resource.SchemaResponse
	r.Schema(ctx, resource.SchemaRequest{}, &sr)
	var ir resource.IdentitySchemaResponse
	r.IdentitySchema(ctx, resource.IdentitySchemaRequest{}, &ir)
	var ls list.ListResourceSchemaResponse
	l.ListResourceConfigSchema(ctx, list.ListResourceSchemaRequest{}, &ls)
	vals := map[string]tftypes.Value{}
	for _, k := range []string{"name", "hostname", "cluster"} {
		if v, ok := filters[k]; ok {
			vals[k] = tftypes.NewValue(tftypes.String, v)
		} else {
			vals[k] = tftypes.NewValue(tftypes.String, nil)
		}
	}
	req := list.ListRequest{
		Config:          tfsdk.Config{Schema: ls.Schema, Raw: tftypes.NewValue(ls.Schema.Type().TerraformType(ctx), vals)},
		IncludeResource: true, ResourceSchema: sr.Schema, ResourceIdentitySchema: ir.IdentitySchema,
	}
	var stream list.ListResultsStream
	l.List(ctx, req, &stream)
	for res := range stream.Results {
		if res.Diagnostics.HasError() {
			t.Fatalf("list %v: %s", filters, diagText(res.Diagnostics))
		}
		if res.Identity == nil {
			warnings += diagText(res.Diagnostics)
			continue
		}
		var name, id, stateID types.String
		res.Diagnostics.Append(res.Identity.GetAttribute(ctx, path.Root("name"), &name)...)
		res.Diagnostics.Append(res.Identity.GetAttribute(ctx, path.Root("id"), &id)...)
		res.Diagnostics.Append(res.Resource.GetAttribute(ctx, path.Root("id"), &stateID)...)
		if res.Diagnostics.HasError() {
			t.Fatal(diagText(res.Diagnostics))
		}
		if id.ValueString() != stateID.ValueString() {
			t.Errorf("%s: identity instance %s, resource object instance %s", name.ValueString(), id.ValueString(), stateID.ValueString())
		}
		names = append(names, name.ValueString()+"/"+id.ValueString())
	}
	return names, warnings
}

// A list finds the virtual destinations by their records in every
// cluster, filters them by name, hostname and cluster, and reports in a
// warning, without listing it, one that an import would refuse (two
// instances of one name).
func TestListVirtualDestinationsFromRecords(t *testing.T) {
	ns := virtualdestination.DefaultRecordsNamespace
	f := newFakeClusterSet(t, "east", "west")
	putRecord(t, f, "east", ns, "aaaa1111", vdIn("user", "users"), fmt.Sprintf(vdUserConfig, "user"))
	b := vdIn("user-b", "users")
	b.Hostname = "b.global"
	putRecord(t, f, "west", ns, "bbbb2222", b, strings.Replace(fmt.Sprintf(vdUserConfig, "user-b"), "user.global", "b.global", 1))
	putRecord(t, f, "east", ns, "cccc3333", vdIn("dup", "users"), fmt.Sprintf(vdUserConfig, "dup"))
	putRecord(t, f, "west", ns, "dddd4444", vdIn("dup", "users"), fmt.Sprintf(vdUserConfig, "dup"))

	for _, c := range []struct {
		filters map[string]string
		want    []string
	}{
		{nil, []string{"user-b/bbbb2222", "user/aaaa1111"}},
		{map[string]string{"name": "user"}, []string{"user/aaaa1111"}},
		{map[string]string{"hostname": "b.global"}, []string{"user-b/bbbb2222"}},
		{map[string]string{"cluster": "east"}, []string{"user/aaaa1111"}},
		{map[string]string{"cluster": "west", "hostname": "user.global"}, nil},
	} {
		names, warnings := listVDs(t, f, c.filters)
		sort.Strings(names)
		if !reflect.DeepEqual(names, c.want) {
			t.Errorf("list %v: got %v, want %v", c.filters, names, c.want)
		}
		if c.filters["name"] == "" && (!strings.Contains(warnings, `virtual-destination "dup" not listed: More than one instance to import`)) {
			t.Errorf("list %v: no warning about dup: %q", c.filters, warnings)
		}
	}
}

// A list reads each cluster a fixed number of times whatever the number of
// intents it finds: one LIST per kind the intent writes to find them, and
// one per kind for reading their objects (the engine's list cache), never
// a search per intent (the import of each listed intent takes the
// instances the list found).
func TestListSearchesEachClusterOncePerKind(t *testing.T) {
	ns := virtualdestination.DefaultRecordsNamespace
	f := newFakeClusterSet(t, "east", "west")
	const intents = 4
	for i := range intents {
		name := fmt.Sprintf("svc%d", i)
		in := vdIn(name, "users")
		in.Hostname = name + ".global"
		putRecord(t, f, "east", ns, fmt.Sprintf("aaaa111%d", i), in, fmt.Sprintf(vdUserConfig, name))
	}
	names, warnings := listVDs(t, f, nil)
	if len(names) != intents {
		t.Fatalf("listed %v (warnings %q), want %d intents", names, warnings, intents)
	}
	most := 2 * len(intentkind.VirtualDestination.Writes)
	for cluster, client := range f {
		lists := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "list" {
				lists++
			}
		}
		if lists > most {
			t.Errorf("cluster %s: %d LIST calls to list %d intents, want at most %d (one per kind to find them, one per kind to read them)", cluster, lists, intents, most)
		}
	}
}

// The identity import and list block examples the resource pages show
// (Terraform 1.12 and 1.14 syntax, which this machine's Terraform cannot
// validate) use only attributes the provider's schemas have: every
// identity attribute required for import is given, and every list block
// names a list resource and filters it has.
func TestIdentityAndListExamplesMatchTheSchemas(t *testing.T) {
	ctx := context.Background()
	s, schema := servedProvider(t)
	ids, err := s.GetResourceIdentitySchemas(ctx, &tfprotov6.GetResourceIdentitySchemasRequest{})
	if err != nil {
		t.Fatal(err)
	}
	identityBlock := regexp.MustCompile(`(?m)^(?:# )?\s*identity = \{\n((?:(?:# )?\s+\w+\s+= "[^"]*"\n)+)`)
	key := regexp.MustCompile(`(\w+)\s+= "`)
	for typ, is := range ids.IdentitySchemas {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "resources", typ, "import-by-identity.hcl"))
		if err != nil {
			t.Errorf("%s: no identity import example: %v", typ, err)
			continue
		}
		blocks := identityBlock.FindAllStringSubmatch(string(b), -1)
		if len(blocks) == 0 {
			t.Errorf("%s: the example has no identity block:\n%s", typ, b)
		}
		for _, blk := range blocks {
			given := map[string]bool{}
			for _, k := range key.FindAllStringSubmatch(blk[1], -1) {
				given[k[1]] = true
			}
			for _, a := range is.IdentityAttributes {
				if a.RequiredForImport && !given[a.Name] {
					t.Errorf("%s: an identity example lacks %s:\n%s", typ, a.Name, blk[0])
				}
				delete(given, a.Name)
			}
			if len(given) > 0 {
				t.Errorf("%s: an identity example gives attributes the identity does not have: %v", typ, given)
			}
		}
	}
	listBlock := regexp.MustCompile(`(?s)list "(\w+)" "\w+" \{(.*?)\n\}`)
	configKey := regexp.MustCompile(`(?s)config \{(.*?)\}`)
	seen := 0
	for typ, ls := range schema.ListResourceSchemas {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "list-resources", typ, "example.tfquery.hcl"))
		if err != nil {
			t.Errorf("%s: no list example: %v", typ, err)
			continue
		}
		for _, m := range listBlock.FindAllStringSubmatch(string(b), -1) {
			seen++
			if m[1] != typ {
				t.Errorf("the list example of %s lists %s", typ, m[1])
			}
			if c := configKey.FindStringSubmatch(m[2]); c != nil {
				for _, k := range key.FindAllStringSubmatch(c[1], -1) {
					if !slices.ContainsFunc(ls.Block.Attributes, func(a *tfprotov6.SchemaAttribute) bool { return a.Name == k[1] }) {
						t.Errorf("the list example of %s filters by %s, which it does not have", typ, k[1])
					}
				}
			}
		}
	}
	if seen != len(schema.ListResourceSchemas) {
		t.Errorf("%d list blocks in the examples for %d list resources", seen, len(schema.ListResourceSchemas))
	}
}

// The Terraform 1.12 and 1.14 examples, which this machine's Terraform
// cannot run (examplesCoveredElsewhere).
const (
	identityExampleCoverage = "TestIdentityAndListExamplesMatchTheSchemas checks it against the identity schema; TestAccIdentity_roundTrip imports by such identities at the protocol level"
	listExampleCoverage     = "TestIdentityAndListExamplesMatchTheSchemas checks it against the list resource schema; TestAccList_intents lists with these filters at the protocol level"
)
