package trafficpolicy

import (
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/composition"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// Review of issue 36 ("one verdict per contribution ... the messages of
// plan and apply come from the same verdict"): a well-formed contribution
// filed under another annotation name (a careless operator renaming a
// policy by copying its annotation, or a backup tool's transform) is
// judged another state's, composable, with nothing to say; the composer
// then refuses the whole object ("the contribution under the name ... is
// traffic policy ..."), so every state's plan and apply on that object
// fail with a message the verdict never gave and no fix. The verdict must
// decide it: either it is not composed (untrusted, with its problem), or
// what it calls composable composes.
func TestVerdictDecidesAContributionFiledUnderAnotherName(t *testing.T) {
	reg := testRegistry()
	in, dest := seed()
	raw, err := NewContribution(Named{Policy: in, Destination: dest}, Writer{Workspace: "team-a"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	composer := &Composer{Version: "1.2.3"}
	c, err := composer.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := Compose([]Named{{Policy: in, Destination: dest}}, reg)
	if err != nil || len(objs) == 0 {
		t.Fatalf("compose: %v (%d objects)", err, len(objs))
	}
	key := objs[0].Key()
	en := engine.Entry{Cluster: key.Cluster, APIVersion: key.APIVersion, Kind: key.Kind, Namespace: key.Namespace, Name: key.Name}
	copied := engine.LiveContribution{Entry: en, Name: in.Name + "-renamed", ID: "id-other", Raw: raw, Workspace: "team-a", Contribution: c}
	writer := engine.Owner{Kind: "traffic-policy", Name: "b-writer", ID: "id-b", Composition: &engine.Composition{Composer: composer}}
	v := engine.Judge(writer, []engine.LiveContribution{copied})[0]
	if !v.Composed() {
		return // not composed: the verdict decided it
	}
	if _, err := composer.Compose(key, map[string]composition.Contribution{copied.Name: c}); err != nil {
		t.Fatalf("the verdict calls %s %q (%s) with problem %v, but composing it fails every writer of the object: %v",
			v.Annotation("traffic-policy"), copied.Name, v.Standing, v.Problem(), err)
	}
}
