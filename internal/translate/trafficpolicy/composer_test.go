package trafficpolicy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// The typed interface composes what the stored contributions compose: a
// policy's own part, kept configuration included, and another policy's
// contribution decoded from its annotation give the object
// ComposeContributions gives from the annotations; the digest's form
// leaves the configuration and the provider version out.
func TestComposerComposesAsTheAnnotations(t *testing.T) {
	reg := testRegistry()
	in, dest := seed()
	mine := Named{Policy: in, Destination: dest}
	part, err := NewPart(mine, Writer{Workspace: "team-a"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	kept, err := WithConfig(part, `{"name":"`+in.Name+`"}`)
	if err != nil {
		t.Fatal(err)
	}
	if cfg, ok := KeptConfig(kept.Whole.Raw); !ok || cfg != `{"name":"`+in.Name+`"}` {
		t.Fatalf("kept configuration %q (%v) in %s", cfg, ok, kept.Whole.Raw)
	}
	composer := &Composer{Version: "1.2.3"}
	if composer.Canonical(kept.Whole.Raw) != composer.Canonical(part.Whole.Raw) || strings.Contains(composer.Canonical(part.Whole.Raw), `"provider"`) {
		t.Fatalf("canonical forms differ with the configuration, or keep the provider version:\n%s\n%s", composer.Canonical(kept.Whole.Raw), composer.Canonical(part.Whole.Raw))
	}
	other := Named{Policy: Intent{Name: "b-timeouts", Sources: Sources{Placement: translate.Placement{Clusters: []string{"east"}}, Namespaces: []string{"web"}}, Timeout: "7s"}, Destination: dest}
	raw, err := NewContribution(other, Writer{Workspace: "team-b"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	theirs, err := composer.Decode(raw)
	if err != nil || theirs.Workspace() != "team-b" {
		t.Fatalf("decoded %v (workspace %q), error %v", theirs, theirs.Workspace(), err)
	}
	objs, err := Compose([]Named{mine, other}, reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		own := kept.For(o.Key().Cluster)
		typed, err := composer.Compose(o.Key(), map[string]composition.Contribution{in.Name: own.Contribution, other.Policy.Name: theirs})
		if err != nil {
			t.Fatal(err)
		}
		stored, err := ComposeContributions(o.Key(), map[string]string{in.Name: own.Raw, other.Policy.Name: raw}, nil)
		if err != nil {
			t.Fatal(err)
		}
		a, err := yaml.Marshal(typed)
		if err != nil {
			t.Fatal(err)
		}
		b, err := yaml.Marshal(stored)
		if err != nil {
			t.Fatal(err)
		}
		if typed == nil || string(a) != string(b) {
			t.Fatalf("%s composed from typed contributions:\n%s\nfrom the annotations:\n%s", o.Key(), a, b)
		}
	}
}

// A contribution in a format this build does not read is
// composition.Unreadable, naming the provider version that wrote it and
// this one's; one that is not a policy's is refused otherwise.
func TestComposerDecodeTellsNewerFormats(t *testing.T) {
	in, dest := seed()
	good, err := NewContribution(Named{Policy: in, Destination: dest}, Writer{Workspace: "team-a"}, testRegistry())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(good), &m); err != nil {
		t.Fatal(err)
	}
	m["v"], m["min"], m["provider"] = 99, 99, "9.0.0"
	newer, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	composer := &Composer{Version: "1.2.3"}
	_, err = composer.Decode(string(newer))
	var u composition.Unreadable
	if !errors.As(err, &u) || !strings.Contains(err.Error(), "9.0.0") || !strings.Contains(err.Error(), "this provider is version 1.2.3") {
		t.Fatalf("decoding a newer format: %v; want composition.Unreadable naming 9.0.0 and 1.2.3", err)
	}
	if _, err := composer.Decode("route-of-evil"); err == nil || errors.As(err, &u) {
		t.Fatalf("decoding what is no contribution: %v; want an error other than Unreadable", err)
	}
}

// Targets says which objects a contribution composes into: those its
// policy writes, in its clusters or (no cluster given) any.
func TestComposerTargetsOnlyItsPolicysObjects(t *testing.T) {
	reg := testRegistry()
	in, dest := seed()
	raw, err := NewContribution(Named{Policy: in, Destination: dest}, Writer{}, reg)
	if err != nil {
		t.Fatal(err)
	}
	p := &Composer{}
	c, err := p.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Compose([]Named{{Policy: in, Destination: dest}}, reg)
	if err != nil || len(objs) == 0 {
		t.Fatalf("compose: %v (%d objects)", err, len(objs))
	}
	key := objs[0].Key()
	if !p.Targets(key, c) {
		t.Errorf("the contribution does not target %s, which its policy writes", key)
	}
	anywhere := key
	anywhere.Cluster = ""
	if !p.Targets(anywhere, c) {
		t.Errorf("the contribution does not target %s in any cluster", key)
	}
	other := key
	other.Name += "-other"
	if p.Targets(other, c) {
		t.Errorf("the contribution targets %s, which its policy does not write", other)
	}
	bad, _ := p.Decode("not a contribution")
	if p.Targets(key, bad) {
		t.Error("a contribution that does not decode targets the object")
	}
}
