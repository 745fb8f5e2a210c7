package trafficpolicy

import (
	"encoding/json"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// A resolved contribution composes to the same object whoever reads it:
// with no registry, or with a registry that lacks the writer's clusters
// and labels, the object is the one Compose gives with the writer's own
// registry.
func TestContributionsComposeWithoutTheWritersRegistry(t *testing.T) {
	writer := testRegistry()
	in, dest := seed()
	other := Named{Policy: Intent{Name: "b-timeouts", Sources: Sources{Placement: translate.Placement{Clusters: []string{"east"}}, Namespaces: []string{"web"}}, Timeout: "7s"}, Destination: dest}
	policies := []Named{{Policy: in, Destination: dest}, other}
	want, err := Compose(policies, writer)
	if err != nil {
		t.Fatal(err)
	}
	contributions := map[string]string{}
	for i, p := range policies {
		raw, err := NewContribution(p, []string{"team-a", "team-b"}[i], writer)
		if err != nil {
			t.Fatal(err)
		}
		contributions[p.Policy.Name] = raw
	}
	readers := map[string]*translate.Registry{
		"no registry":       nil,
		"another registry":  translate.NewRegistry(translate.Cluster{Name: "east"}),
		"the same registry": writer,
	}
	for name, reg := range readers {
		t.Run(name, func(t *testing.T) {
			for _, o := range want {
				got, err := ComposeContributions(o.Key(), contributions, reg)
				if err != nil {
					t.Fatal(err)
				}
				w, err := o.Manifest()
				if err != nil {
					t.Fatal(err)
				}
				a, _ := yaml.Marshal(got)
				b, _ := yaml.Marshal(w)
				if string(a) != string(b) {
					t.Fatalf("%s composed from contributions:\n%s\nwant (the writer's composition):\n%s", o.Key(), a, b)
				}
			}
		})
	}
}

// A contribution is resolved: its sources are cluster names, its
// workspace recorded.
func TestNewContributionResolvesTheSources(t *testing.T) {
	in, dest := seed()
	raw, err := NewContribution(Named{Policy: in, Destination: dest}, "team-a", testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeContribution(raw)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != ContributionVersion || c.Workspace != "team-a" || strings.Join(c.Policy.Sources.Clusters, ",") != "east,onprem" || len(c.Policy.Sources.ClusterSelector) != 0 {
		t.Fatalf("contribution %s: want version %d, workspace team-a, sources east,onprem by name", raw, ContributionVersion)
	}
}

// What was not written by a traffic policy is refused on read, with why.
func TestDecodeContributionRefuses(t *testing.T) {
	in, dest := seed()
	good, err := NewContribution(Named{Policy: in, Destination: dest}, "team-a", testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) string {
		var m map[string]any
		if err := json.Unmarshal([]byte(good), &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		raw, _ := json.Marshal(m)
		return string(raw)
	}
	cases := map[string]struct{ raw, want string }{
		"too large":         {edit(func(m map[string]any) { m["config"] = map[string]any{"x": strings.Repeat("a", MaxContributionBytes)} }), "bytes"},
		"unknown field":     {edit(func(m map[string]any) { m["routes"] = []any{"evil"} }), "unknown field"},
		"newer version":     {edit(func(m map[string]any) { m["v"] = 9 }), "newer provider"},
		"selector":          {edit(func(m map[string]any) { m["policy"].(map[string]any)["sources"].(map[string]any)["Clusters"] = nil }), "not listed by name"},
		"invalid policy":    {edit(func(m map[string]any) { m["policy"].(map[string]any)["timeout"] = "forever" }), "not valid"},
		"not JSON":          {"route: evil", "not a traffic policy contribution"},
		"trailing content":  {good + `{"v":1}`, "after the contribution"},
		"config not object": {edit(func(m map[string]any) { m["config"] = "x" }), "not an object"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeContribution(tc.raw)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("DecodeContribution(%.80s…) = %v, want an error containing %q", tc.raw, err, tc.want)
			}
		})
	}
	if _, err := DecodeContribution(good); err != nil {
		t.Fatalf("the good contribution is refused: %v", err)
	}
}

// A conflict found composing contributions names both policies, their
// workspaces and the attribute.
func TestComposeContributionsConflictNamesWorkspaces(t *testing.T) {
	reg := testRegistry()
	dest := Destination{VirtualDestination: "user.global", BackendClusters: []string{"east", "onprem"}, VirtualDestinationName: "user"}
	a := Named{Policy: Intent{Name: "a", Timeout: "1s"}, Destination: dest}
	b := Named{Policy: Intent{Name: "b", Timeout: "2s"}, Destination: dest}
	objs, err := Translate(a.Policy, dest, reg)
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := NewContribution(a, "team-a", reg)
	rb, _ := NewContribution(b, "team-b", reg)
	_, err = ComposeContributions(objs[0].Key(), map[string]string{"a": ra, "b": rb}, nil)
	if err == nil {
		t.Fatal("conflicting contributions composed")
	}
	for _, want := range []string{`"a" from workspace "team-a"`, `"b" from workspace "team-b"`, "timeout"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
