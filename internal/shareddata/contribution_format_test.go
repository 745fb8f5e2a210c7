package shareddata

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest/fakeapply"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

// policyOwner is a traffic policy as the provider makes it
// (traffic_policy_resource.go): its contributions restricted to each
// cluster, composed and checked by trafficpolicy, a contribution in a
// newer format reported as Unreadable.
func policyOwner(t testing.TB, p trafficpolicy.Named, id, workspace string, reg *translate.Registry) (engine.Owner, []engine.Desired) {
	t.Helper()
	part, err := trafficpolicy.NewPart(p, trafficpolicy.Writer{Workspace: workspace}, reg)
	if err != nil {
		t.Fatal(err)
	}
	o := engine.Owner{Kind: "traffic-policy", Name: p.Policy.Name, ID: id, Composition: &engine.Composition{
		Contribution: part,
		Composer:     &trafficpolicy.Composer{Registry: reg, Version: "1.0.0-test"},
	}}
	objs, err := trafficpolicy.Translate(p.Policy, p.Destination, reg)
	if err != nil {
		t.Fatal(err)
	}
	desired, err := engine.Plan(o, objs)
	if err != nil {
		t.Fatal(err)
	}
	return o, desired
}

// futureContribution is what a provider of a later format version writes
// for policy "future": version 99 with a field this build does not know,
// readable by this build (min 2) or not (min 99).
func futureContribution(t *testing.T, reg *translate.Registry, dest trafficpolicy.Destination, min int) string {
	t.Helper()
	p := trafficpolicy.Named{Policy: trafficpolicy.Intent{Name: "future", Sources: trafficpolicy.Sources{Placement: translate.Placement{Clusters: []string{"east"}}},
		Match: []trafficpolicy.Match{{URIPrefix: "/future"}}, Retries: &trafficpolicy.Retries{Attempts: 7}}, Destination: dest}
	raw, err := trafficpolicy.NewContribution(p, trafficpolicy.Writer{Workspace: "team-future"}, reg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	m["v"], m["min"], m["provider"], m["quantumRouting"] = 99, min, "9.0.0", map[string]any{"entangled": true}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// A contribution in a newer format version, written by a newer provider's
// composer, is somebody's live route: this build's apply and release of
// its own policy on the same object keep it byte for byte with its label.
// When this build can compose it (min), it does, its unknown field
// ignored; when it cannot, the apply and the release write nothing and
// say which format version and provider version it needs.
func TestNewerContributionIsKeptUntouched(t *testing.T) {
	reg := translate.NewRegistry(translate.Cluster{Name: "east"}, translate.Cluster{Name: "west"})
	dest := trafficpolicy.Destination{VirtualDestination: "user.global", VirtualDestinationName: "user", BackendClusters: []string{"east", "west"},
		ClientBackends: map[string][]string{"east": {"east", "west"}, "west": {"east", "west"}}}
	mine := trafficpolicy.Named{Policy: trafficpolicy.Intent{Name: "mine", Sources: trafficpolicy.Sources{Placement: translate.Placement{Clusters: []string{"east", "west"}}},
		Timeout: "2s"}, Destination: dest}
	for _, min := range []int{trafficpolicy.ContributionVersion, 99} {
		t.Run("min "+strconv.Itoa(min), func(t *testing.T) {
			ctx := context.Background()
			e, fc := newEngine("east", "west")
			owner, desired := policyOwner(t, mine, "id-mine", "team-a", reg)
			if _, err := e.Apply(ctx, owner, desired, nil); err != nil {
				t.Fatal(err)
			}
			var vs engine.Entry
			for _, d := range desired {
				if d.Entry.Cluster == "east" && d.Entry.Kind == "VirtualService" {
					vs = d.Entry
				}
			}
			// The newer provider's composer adds its contribution.
			key, future := "traffic-policy.mesh-intent.io/future", futureContribution(t, reg, dest, min)
			gvr := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}
			obj := enginetest.Live(t, fc["east"], vs).DeepCopy()
			a, l := obj.GetAnnotations(), obj.GetLabels()
			a[key], l[key] = future, "id-future"
			obj.SetAnnotations(a)
			obj.SetLabels(l)
			obj.SetManagedFields(append(obj.GetManagedFields(), fakeapply.MetadataFields(obj, "terraform-provider-mesh/traffic-policy-composer", metav1.ManagedFieldsOperationApply)...))
			obj.SetResourceVersion("50")
			if err := fc["east"].Tracker().Update(gvr, obj, vs.Namespace); err != nil {
				t.Fatal(err)
			}
			untouched := func(when string) {
				t.Helper()
				got := enginetest.Live(t, fc["east"], vs)
				if got == nil || got.GetAnnotations()[key] != future || got.GetLabels()[key] != "id-future" {
					t.Fatalf("after %s: the newer contribution was changed or removed: %v", when, got)
				}
				if min == 99 && got.GetResourceVersion() != "50" {
					t.Fatalf("after %s: the object was written (resourceVersion %s) although it holds a contribution this build cannot compose", when, got.GetResourceVersion())
				}
			}
			// The plan sees it as unreadable, never as untrusted.
			found, errs := Contributions(ctx, e, owner, []engine.Entry{vs})
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			for _, c := range found {
				if c.Name == "future" && c.Unreadable != (min == 99) {
					t.Fatalf("contribution %+v: unreadable %v, want %v", c, c.Unreadable, min == 99)
				}
			}
			// This build changes its own policy: the apply rewrites the
			// object (or refuses to).
			mine2 := mine
			mine2.Policy.Timeout = "3s"
			owner2, desired2 := policyOwner(t, mine2, "id-mine", "team-a", reg)
			_, err := e.Apply(ctx, owner2, desired2, engine.Entries(desired))
			if min == 99 {
				for _, want := range []string{`traffic policy "future"`, "format version 99", "terraform-provider-mesh 9.0.0", "9.0.0 or later", "1.0.0-test", "Nothing was written"} {
					if err == nil || !strings.Contains(err.Error(), want) {
						t.Fatalf("apply: %v, want an error naming %q", err, want)
					}
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				spec, err := json.Marshal(enginetest.Live(t, fc["east"], vs).Object["spec"])
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(spec), `"attempts":7`) || !strings.Contains(string(spec), `"3s"`) {
					t.Fatalf("composed spec %s: want both the newer policy's route (7 attempts) and ours (3s)", spec)
				}
			}
			untouched("this build's apply")
			// This build releases its policy (terraform destroy).
			_, err = e.Delete(ctx, owner2, engine.Entries(desired2))
			if min == 99 {
				if err == nil || !strings.Contains(err.Error(), "format version 99") {
					t.Fatalf("release: %v, want an error naming format version 99", err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			untouched("this build's release")
			if min != 99 {
				got := enginetest.Live(t, fc["east"], vs)
				if _, ok := got.GetAnnotations()["traffic-policy.mesh-intent.io/mine"]; ok {
					t.Fatalf("the released contribution is still there: %v", got.GetAnnotations())
				}
				spec, err := json.Marshal(got.Object["spec"])
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(string(spec), `"attempts":7`) || strings.Contains(string(spec), `"3s"`) {
					t.Fatalf("spec after the release %s: want the newer policy's route alone", spec)
				}
			}
		})
	}
}
