package shareddata

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition/compositiontest"
)

// Review of issue 36, item 2 ("the plan checks what the apply will
// write: ... every object's annotation total"): Limits counts only the
// contributions on a composed object, not the other annotations the
// object holds and keeps through the composer's apply (a
// kubectl.kubernetes.io/last-applied-configuration left by a client-side
// `kubectl apply` restore, which repeats every contribution; another
// tool's annotations). The API server limits all annotations together,
// so the plan passes and the apply is refused.
func TestLimitsCountTheObjectsOtherAnnotations(t *testing.T) {
	e, fc, d := crowdedComposedObject(t)
	ctx := context.Background()
	ann := enginetest.Live(t, fc["east"], d.Entry).GetAnnotations()
	e.Wrote("east", schema.FromAPIVersionAndKind(d.Entry.APIVersion, d.Entry.Kind))
	mine := enginetest.ComposedOwner("mine")
	mine.Composition.Contribution = compositiontest.Part(fmt.Sprintf("%010000d", 0))
	found, errs := Contributions(ctx, e, mine, []engine.Entry{d.Entry})
	if len(errs) > 0 || len(found) != 4 {
		t.Fatalf("contributions %d (%v)", len(found), errs)
	}
	total := len("traffic-policy.mesh-intent.io/mine") + 10000
	for k, v := range ann {
		total += len(k) + len(v)
	}
	if total <= engine.MaxAnnotationBytes {
		t.Fatalf("test setup: %d bytes of annotations fit", total)
	}
	for _, l := range e.Limits(mine, []engine.Entry{d.Entry}, found, KeptByTheWrite(mine)) {
		if l.Limit == "annotations" {
			return
		}
	}
	t.Fatalf("the object's annotations would be %d bytes after this apply (limit %d), and the plan's Limits says nothing", total, engine.MaxAnnotationBytes)
}

// Review of issue 36 ("one verdict ... used by plan, apply, refresh and
// destroy"): a same-name contribution of an instance this state holds is
// Mine whichever way the write goes. On release that is wrong: with
// create_before_destroy (`terraform apply -replace` of a traffic policy
// with that lifecycle), the new instance is created first and the state
// holds it (Roster.Hold at its create); the old instance's destroy then
// judges the new instance's contribution "this instance's" and removes
// it. The new policy's routes are gone while its state says it applied,
// until its next apply.
func TestReleaseOfAnOldInstanceKeepsTheNewInstancesContribution(t *testing.T) {
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	old := workspaceOwner("a", "id-old", "ws", "id-new")
	if _, err := e.Apply(ctx, old, []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Apply(ctx, workspaceOwner("b", "id-b", "ws"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	replacement := workspaceOwner("a", "id-new", "ws", "id-old")
	if _, err := e.Apply(ctx, replacement, []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	if id := enginetest.Live(t, fc["east"], d.Entry).GetLabels()["traffic-policy.mesh-intent.io/a"]; id != "id-new" {
		t.Fatalf("after the replacement's create: label %q", id)
	}
	if _, err := e.Delete(ctx, old, []engine.Entry{d.Entry}); err != nil {
		t.Fatalf("destroying the old instance: %v", err)
	}
	got := enginetest.Live(t, fc["east"], d.Entry)
	if got == nil || got.GetLabels()["traffic-policy.mesh-intent.io/a"] != "id-new" || got.GetAnnotations()["traffic-policy.mesh-intent.io/a"] == "" {
		var labels map[string]string
		if got != nil {
			labels = got.GetLabels()
		}
		t.Fatalf("the old instance's destroy removed the new instance's contribution: object %v, labels %v", got != nil, labels)
	}
}

// The apply counts the same total as the plan (Limits): the object's
// other annotations, which its write keeps, with the contributions. The
// fake API server enforces no limit, so only the engine's own check can
// refuse the write.
func TestApplyCountsTheObjectsOtherAnnotations(t *testing.T) {
	e, fc, d := crowdedComposedObject(t)
	ctx := context.Background()
	mine := enginetest.ComposedOwner("mine")
	mine.Composition.Contribution = compositiontest.Part(fmt.Sprintf("%010000d", 0))
	_, err := e.Apply(ctx, mine, []engine.Desired{d}, nil)
	if err == nil || !strings.Contains(err.Error(), "Kubernetes limit exceeded: annotations") {
		t.Fatalf("the apply writes annotations over %d bytes in all: %v", engine.MaxAnnotationBytes, err)
	}
	if got := enginetest.Live(t, fc["east"], d.Entry).GetAnnotations()["traffic-policy.mesh-intent.io/mine"]; got != "" {
		t.Fatal("the refused write wrote the contribution")
	}
}

// crowdedComposedObject is a composed VirtualService in east holding four
// other states' contributions of 30,000 characters each and 140,000 bytes
// of another tool's annotation (a client-side apply's
// last-applied-configuration): under the API server's annotation limit
// counted by contributions alone, over it counted whole.
func crowdedComposedObject(t *testing.T) (*engine.Engine, enginetest.Clusters, engine.Desired) {
	t.Helper()
	e, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	ctx := context.Background()
	for i := 0; i < 4; i++ {
		o := enginetest.ComposedOwner(fmt.Sprintf("other-%d", i))
		o.Composition.Contribution = compositiontest.Part(fmt.Sprintf("%030000d", i))
		if _, err := e.Apply(ctx, o, []engine.Desired{d}, nil); err != nil {
			t.Fatal(err)
		}
	}
	u := enginetest.Live(t, fc["east"], d.Entry).DeepCopy()
	ann := u.GetAnnotations()
	ann["kubectl.kubernetes.io/last-applied-configuration"] = strings.Repeat("x", 140000)
	u.SetAnnotations(ann)
	bumpVersion(t, u)
	if err := fc["east"].Tracker().Update(vsResource, u, d.Entry.Namespace); err != nil {
		t.Fatal(err)
	}
	return e, fc, d
}

// namedContribution is a readable contribution whose content names the
// policy it is (a copied or renamed annotation when that is not the
// name it is filed under).
type namedContribution struct{ policy string }

func (c namedContribution) Workspace() string { return "" }
func (c namedContribution) Name() string      { return c.policy }

// One verdict for plan and apply (issue 36): the plan's annotation limit
// counts only the contributions the write keeps, as the verdict decides
// them. A contribution filed under another name than the one its content
// records (an annotation copied by hand) is Untrusted by the verdict and
// removed by the next write; counting it made the plan refuse a write
// the apply would make (the engine had its own, narrower filter).
func TestLimitsCountWhatTheVerdictKeeps(t *testing.T) {
	e := &engine.Engine{}
	en := enginetest.ComposedEntry().Entry
	mine := enginetest.ComposedOwner("mine")
	mine.Composition.Contribution = compositiontest.Part(fmt.Sprintf("%0100d", 0))
	var found []engine.LiveContribution
	for i := 0; i < 8; i++ {
		name := fmt.Sprintf("other-%d", i)
		found = append(found, engine.LiveContribution{Entry: en, Name: name, ID: "id-" + name, Raw: fmt.Sprintf("%030000d", i), Contribution: namedContribution{name}})
	}
	copied := engine.LiveContribution{Entry: en, Name: "copy", ID: "id-copy", Raw: fmt.Sprintf("%030000d", 9), Contribution: namedContribution{"other-0"}}
	if v := Judge(mine, []engine.LiveContribution{copied})[0]; v.Standing != Untrusted {
		t.Fatalf("test setup: the copied contribution is %s, not untrusted", v.Standing)
	}
	for _, l := range e.Limits(mine, []engine.Entry{en}, append(found, copied), KeptByTheWrite(mine)) {
		if l.Limit == "annotations" {
			t.Fatalf("the write removes the copied contribution, and 8 others of 30000 bytes fit; the plan refuses: %s", l.Detail)
		}
	}
	found = append(found, engine.LiveContribution{Entry: en, Name: "other-8", ID: "id-other-8", Raw: fmt.Sprintf("%030000d", 8), Contribution: namedContribution{"other-8"}})
	refused := false
	for _, l := range e.Limits(mine, []engine.Entry{en}, found, KeptByTheWrite(mine)) {
		refused = refused || l.Limit == "annotations"
	}
	if !refused {
		t.Fatal("9 contributions of 30000 bytes another state keeps and this one's exceed 256 KiB, and the plan says nothing")
	}
}
