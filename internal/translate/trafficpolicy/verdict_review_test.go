package trafficpolicy

import (
	"errors"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
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
	v := shareddata.Judge(writer, []engine.LiveContribution{copied})[0]
	if !v.Composed() {
		return // not composed: the verdict decided it
	}
	if _, err := composer.Compose(key, map[string]composition.Contribution{copied.Name: c}); err != nil {
		t.Fatalf("the verdict calls %s %q (%s) with problem %v, but composing it fails every writer of the object: %v",
			v.Annotation("traffic-policy"), copied.Name, v.Standing, v.Problem(), err)
	}
}

// Review of issue 36, item 8 ("an untrusted same-name contribution fails
// the plan instead of being ignored"): a contribution in this build's own
// format (v 1, which has no such field) with a field added by hand is
// judged "in a newer format", not invalid: every writer of the object
// refuses to write it, its own policy included, and the message tells to
// upgrade the provider ("composing it needs a provider that knows that
// field (the version that wrote it or later)"), which no provider
// version does: format 1 never had the field. The policy that owns the
// name can never write its own contribution again; only a hand edit
// undoes it.
func TestHandEditedContributionOfThisFormatIsNotANewerOne(t *testing.T) {
	reg := testRegistry()
	in, dest := seed()
	raw, err := NewContribution(Named{Policy: in, Destination: dest}, Writer{}, reg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(raw, `{"v":1,`) {
		t.Fatalf("test setup: contribution %.40s… is not format 1", raw)
	}
	tampered := `{"note":"checked by ops",` + strings.TrimPrefix(raw, "{")
	composer := &Composer{Version: "1.2.3"}
	c, derr := composer.Decode(tampered)
	if derr == nil {
		t.Fatal("test setup: the tampered contribution decodes")
	}
	lc := engine.LiveContribution{Name: in.Name, ID: "id-a", Raw: tampered, Contribution: c, Untrusted: derr.Error(), Unreadable: errors.As(derr, new(composition.Unreadable))}
	self := engine.Owner{Kind: "traffic-policy", Name: in.Name, ID: "id-a", Composition: &engine.Composition{Composer: composer}}
	v := shareddata.Judge(self, []engine.LiveContribution{lc})[0]
	if p := v.Problem(); p != nil && p.Error {
		t.Fatalf("the policy's own contribution, edited by hand in format 1, blocks its own plan and apply (%s): %s", v.Standing, p.Detail)
	}
}
