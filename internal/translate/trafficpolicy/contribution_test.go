package trafficpolicy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/translatetest"
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
		raw, err := NewContribution(p, Writer{Workspace: []string{"team-a", "team-b"}[i]}, writer)
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
	raw, err := NewContribution(Named{Policy: in, Destination: dest}, Writer{Workspace: "team-a"}, testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeContribution(raw)
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != WrittenVersion || c.Workspace != "team-a" || strings.Join(c.Policy.Sources.Clusters, ",") != "east,onprem" || len(c.Policy.Sources.ClusterSelector) != 0 {
		t.Fatalf("contribution %s: want version %d, workspace team-a, sources east,onprem by name", raw, WrittenVersion)
	}
}

// What was not written by a traffic policy is refused on read, with why.
func TestDecodeContributionRefuses(t *testing.T) {
	in, dest := seed()
	good, err := NewContribution(Named{Policy: in, Destination: dest}, Writer{Workspace: "team-a"}, testRegistry())
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
		"newer version":     {edit(func(m map[string]any) { m["v"], m["min"], m["provider"] = 9, 9, "9.1.0" }), "format version 9, written by terraform-provider-mesh 9.1.0; composing it needs a provider that reads format version 9 (9.1.0 or later)"},
		"min over v":        {edit(func(m map[string]any) { m["min"] = 3 }), "not a contribution format version"},
		"selector":          {edit(func(m map[string]any) { m["policy"].(map[string]any)["sources"].(map[string]any)["Clusters"] = nil }), "not listed by name"},
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
	// Newer versions are not refused as invalid: they are not understood
	// (FormatError), and kept by every writer. An unknown field at a
	// version this build reads was added by hand: not valid.
	var fe *FormatError
	if _, err := DecodeContribution(cases["newer version"].raw); !errors.As(err, &fe) {
		t.Errorf("newer version: %v is no FormatError", err)
	}
	if _, err := DecodeContribution(cases["unknown field"].raw); errors.As(err, &fe) {
		t.Errorf("unknown field at version 1: %v is a FormatError (a newer format), not a hand edit", err)
	}
}

// The format contract (ContributionVersion): a newer version whose min
// this build reads is composed, its unknown fields ignored; version 0 and
// 1 contributions, as earlier builds wrote them, are read as before.
func TestDecodeContributionVersions(t *testing.T) {
	in, dest := seed()
	good, err := NewContribution(Named{Policy: in, Destination: dest}, Writer{Workspace: "team-a"}, testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(good), &m); err != nil {
		t.Fatal(err)
	}
	_, hasMin := m["min"]
	_, hasProvider := m["provider"]
	if m["v"] != float64(WrittenVersion) || hasMin || hasProvider {
		t.Fatalf("contribution %s: want v %d, without min and provider (version 1 has no place for them)", good, WrittenVersion)
	}
	reencode := func(edit func(map[string]any)) string {
		var c map[string]any
		if err := json.Unmarshal([]byte(good), &c); err != nil {
			t.Fatal(err)
		}
		edit(c)
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	readable := map[string]string{
		"newer, min readable": reencode(func(c map[string]any) {
			c["v"], c["min"], c["futureField"] = 99, ContributionVersion, map[string]any{"x": 1}
		}),
		"version 1": reencode(func(c map[string]any) { c["v"] = 1; delete(c, "min"); delete(c, "provider") }),
		"version 0": reencode(func(c map[string]any) { delete(c, "v"); delete(c, "min"); delete(c, "provider") }),
	}
	for name, raw := range readable {
		c, err := DecodeContribution(raw)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.Policy.Name != in.Name || c.Workspace != "team-a" {
			t.Fatalf("%s decoded as %+v", name, c)
		}
	}
}

// v1Contribution is the contribution format of the builds that read
// version 1 only (the first builds of 0.1): the fields they know.
type v1Contribution struct {
	Version   int    `json:"v,omitempty"`
	Workspace string `json:"workspace,omitempty"`
	Named
	Config json.RawMessage `json:"config,omitempty"`
}

// What this build writes, whole or restricted to a cluster and with its
// kept configuration, a build that reads only version 1 reads as it reads
// its own: version at most 1, no field it does not know (it would remove
// the contribution, and with it another team's routes, on its next write),
// sources by name, and the same policy.
func TestVersion1BuildsReadWhatThisBuildWrites(t *testing.T) {
	type written struct {
		p   Named
		reg *translate.Registry
	}
	var cases []written
	for _, c := range translatetest.Inputs(t) {
		var in goldenIntent
		if err := yaml.UnmarshalStrict(c.Intent, &in); err != nil {
			t.Fatal(err)
		}
		policies := in.Compose
		if in.Policy != nil {
			policies = []Named{{Policy: *in.Policy, Destination: in.Destination}}
		}
		for _, p := range policies {
			cases = append(cases, written{p, c.Registry})
		}
	}
	reg, dest := fleet(10)
	for _, p := range fleetPolicies(reg, dest) {
		cases = append(cases, written{p, reg})
	}
	checked := 0
	for _, w := range cases {
		p := w.p
		part, err := NewPart(p, Writer{Workspace: "team-a"}, w.reg)
		if err != nil {
			continue // a golden case that does not resolve writes nothing
		}
		kept, err := WithConfig(part, `{"name":"`+p.Policy.Name+`"}`)
		if err != nil {
			t.Fatal(err)
		}
		encodings := []composition.Encoded{kept.Whole}
		for _, e := range kept.In {
			encodings = append(encodings, e)
		}
		for _, e := range encodings {
			var old v1Contribution
			dec := json.NewDecoder(strings.NewReader(e.Raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&old); err != nil {
				t.Fatalf("%s: a version 1 build refuses %s: %v", p.Policy.Name, e.Raw, err)
			}
			if old.Version > 1 || len(old.Policy.Sources.Clusters) == 0 || old.Policy.Name != p.Policy.Name {
				t.Fatalf("%s: a version 1 build cannot compose %s", p.Policy.Name, e.Raw)
			}
			checked++
		}
	}
	if checked < 50 {
		t.Fatalf("only %d contributions checked", checked)
	}
}

// A newer contribution this build may compose (its min) but whose policy
// this build's checks refuse (a value the newer build allows) is not
// understood: a FormatError, so that it is kept and the plan fails naming
// the version, never a contribution removed as invalid. The same policy
// in this build's own format is plainly invalid.
func TestDecodeNewerContributionThatFailsChecksIsNotUnderstood(t *testing.T) {
	in, dest := seed()
	good, err := NewContribution(Named{Policy: in, Destination: dest}, Writer{Workspace: "team-a"}, testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	edit := func(v int) string {
		var c map[string]any
		if err := json.Unmarshal([]byte(good), &c); err != nil {
			t.Fatal(err)
		}
		c["v"], c["min"], c["provider"] = v, ContributionVersion, "9.0.0"
		c["policy"].(map[string]any)["timeout"] = "a-duration-of-a-newer-build"
		raw, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		return string(raw)
	}
	_, err = DecodeContribution(edit(ContributionVersion + 1))
	var format *FormatError
	if !errors.As(err, &format) || format.Refused == "" || !strings.Contains(err.Error(), "9.0.0 or later") {
		t.Fatalf("a newer contribution this build's checks refuse: got %v, want a FormatError naming the provider it needs", err)
	}
	// Of this build's format, the same value is not checked: kept and
	// composed (TestDecodeKeepsWhatALaterBuildWouldRefuse).
	if _, err = DecodeContribution(edit(ContributionVersion)); err != nil {
		t.Fatalf("a contribution of this build's format with a value its checks refuse: %v, want it read (kept, composed)", err)
	}
}

// A later build that tightens validation does not remove older
// contributions (issue 36, item 8): a contribution written under a rule
// this build no longer allows (here retries with attempts = 0 and a
// per-try timeout, which this build refuses as doing nothing) is decoded
// and composed as written, while this build refuses to write the same
// policy. Only what this build writes is validated by its rules.
func TestDecodeKeepsWhatALaterBuildWouldRefuse(t *testing.T) {
	in, dest := seed()
	in.Retries = &Retries{Attempts: 0, PerTryTimeout: "1s"}
	if errs := Validate(in, dest); len(errs) == 0 {
		t.Fatal("the test needs a policy this build's checks refuse")
	}
	// What an earlier build, without that rule, wrote: the same format,
	// encoded as this build encodes it.
	raw, err := NewContribution(Named{Policy: in, Destination: dest}, Writer{}, testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeContribution(raw); err != nil {
		t.Fatalf("an older contribution this build's checks refuse is not read (the next writer would remove it): %v", err)
	}
	composer := &Composer{}
	c, err := composer.Decode(raw)
	if err != nil {
		t.Fatalf("Composer.Decode: %v", err)
	}
	valid, _ := seed()
	objs, err := Translate(valid, dest, testRegistry()) // the objects' keys
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.Key().Kind != "VirtualService" {
			continue
		}
		vs, err := composer.Compose(o.Key(), map[string]composition.Contribution{in.Name: c})
		if err != nil {
			t.Fatalf("composing it: %v", err)
		}
		// This build's own part of the same policy is checked by its rules:
		// it does not compose.
		own, err := NewPart(Named{Policy: in, Destination: dest}, Writer{}, testRegistry())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := composer.Compose(o.Key(), map[string]composition.Contribution{in.Name: own.Whole.Contribution}); err == nil {
			t.Fatal("this build writes a policy its checks refuse")
		}
		got, _ := json.Marshal(vs["spec"])
		if !strings.Contains(string(got), `"perTryTimeout":"1s"`) {
			t.Fatalf("the composed VirtualService leaves out what the contribution asks for: %s", got)
		}
		return
	}
	t.Fatal("the policy writes no VirtualService")
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
	ra, err := NewContribution(a, Writer{Workspace: "team-a"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := NewContribution(b, Writer{Workspace: "team-b"}, reg)
	if err != nil {
		t.Fatal(err)
	}
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
