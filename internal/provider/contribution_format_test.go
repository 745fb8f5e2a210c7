package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/runstate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
)

var vsGVR = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}

// planFixture is a provider with one fake cluster, east, and traffic
// policy "mine" on user.global planned there: its owner and entries.
func planFixture(t *testing.T) (*providerData, *dynamicfake.FakeDynamicClient, engine.Owner, []engine.Entry) {
	t.Helper()
	clusters := newFakeClusterSet(t, "east")
	fake := clusters["east"]
	reg := translate.NewRegistry(translate.Cluster{Name: "east"})
	data := &providerData{Registry: reg, Version: "1.0.0", Workspace: "team-a", Engine: &engine.Engine{Clients: clusters, Shared: shareddata.Compositions{}}}
	dest := trafficpolicy.Destination{VirtualDestination: "user.global", VirtualDestinationName: "user", BackendClusters: []string{"east"}}
	self := trafficpolicy.Named{Policy: trafficpolicy.Intent{Name: "mine", Sources: trafficpolicy.Sources{Placement: translate.Placement{Clusters: []string{"east"}}}, Timeout: "2s"}, Destination: dest}
	owner := engine.Owner{Kind: "traffic-policy", Name: "mine", ID: "id-mine", Composition: trafficPolicyComposition(self, data)}
	objs, err := trafficpolicy.Translate(self.Policy, dest, reg)
	if err != nil {
		t.Fatal(err)
	}
	desired, err := engine.Plan(owner, objs)
	if err != nil {
		t.Fatal(err)
	}
	return data, fake, owner, engine.Entries(desired)
}

// seedContributions stores the VirtualService of user.global in the fake
// cluster with contributions a newer provider's composer wrote.
func seedContributions(t *testing.T, fake *dynamicfake.FakeDynamicClient, contributions map[string]string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
		"spec": map[string]any{"hosts": []any{"user.global"}}}}
	obj.SetNamespace("istio-system")
	obj.SetName("tp-user.global")
	annotations, labels, held := map[string]string{}, map[string]string{engine.LabelManagedBy: engine.ManagedByValue}, map[string]any{}
	for name, raw := range contributions {
		k := "traffic-policy.mesh-intent.io/" + name
		annotations[k], labels[k], held["f:"+k] = raw, "id-"+name, map[string]any{}
	}
	obj.SetAnnotations(annotations)
	obj.SetLabels(labels)
	fields, err := json.Marshal(map[string]any{"f:metadata": map[string]any{"f:annotations": held}})
	if err != nil {
		t.Fatal(err)
	}
	obj.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "newer/traffic-policy-composer", Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: "networking.istio.io/v1", FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(fields))}})
	obj.SetResourceVersion("7")
	if err := fake.Tracker().Create(vsGVR, obj, "istio-system"); err != nil {
		t.Fatal(err)
	}
}

// future is a contribution of format version 99 that this build cannot
// compose, written by provider 9.0.0, padded to pad bytes.
func future(t *testing.T, name string, pad int) string {
	t.Helper()
	raw, err := json.Marshal(map[string]any{"v": 99, "min": 99, "provider": "9.0.0", "quantumRouting": strings.Repeat("x", pad),
		"policy": map[string]any{"name": name}})
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

func errorsOf(diags diag.Diagnostics) string {
	var out []string
	for _, d := range diags.Errors() {
		out = append(out, d.Summary()+": "+d.Detail())
	}
	return strings.Join(out, "\n")
}

// The plan of a policy whose object holds a contribution in a newer
// format fails, naming the policy, the object, the format version and the
// provider versions, where it used to warn that the apply would remove it.
func TestPlanRefusesAContributionInANewerFormat(t *testing.T) {
	data, fake, owner, entries := planFixture(t)
	seedContributions(t, fake, map[string]string{"future": future(t, "future", 10)})
	diags := checkComposition(data, owner, entries, sharedContributions(context.Background(), data, owner, entries))
	got := errorsOf(diags)
	for _, want := range []string{"Contribution in a newer format", `traffic policy "future"`, "tp-user.global", "cluster east", "format version 99",
		"terraform-provider-mesh 9.0.0", "9.0.0 or later", "this provider is version 1.0.0"} {
		if !strings.Contains(got, want) {
			t.Fatalf("plan errors %q do not name %q (all diagnostics: %v)", got, want, diags)
		}
	}
}

// The plan fails on the annotations limit of an object, counting the
// contributions others keep there, and on a field manager name over 128
// characters, naming the attribute to change; nothing is written.
func TestPlanChecksKubernetesLimits(t *testing.T) {
	data, fake, owner, entries := planFixture(t)
	others := map[string]string{}
	for i := 0; i < 9; i++ {
		others[fmt.Sprintf("other-%d", i)] = future(t, fmt.Sprintf("other-%d", i), 30000)
	}
	seedContributions(t, fake, others)
	got := errorsOf(checkLimits(data, owner, entries, sharedContributions(context.Background(), data, owner, entries)))
	for _, want := range []string{"Kubernetes limit exceeded: annotations", "tp-user.global", "the 9 others found on it", "262144", "merge some of the policies"} {
		if !strings.Contains(got, want) {
			t.Fatalf("plan errors %q do not name %q", got, want)
		}
	}
	if rv := fake.Actions(); len(rv) == 0 {
		t.Fatal("the plan read nothing")
	} else {
		for _, a := range rv {
			if a.GetVerb() != "list" && a.GetVerb() != "get" && a.GetVerb() != "watch" {
				t.Fatalf("the plan wrote: %v", a)
			}
		}
	}
	data.Engine.FieldManager = strings.Repeat("m", 80)
	long := engine.Owner{Kind: "virtual-destination", Name: strings.Repeat("v", 63), ID: "id"}
	got = errorsOf(checkLimits(data, long, nil, nil))
	if !strings.Contains(got, "Kubernetes limit exceeded: field manager") || !strings.Contains(got, "field_manager") {
		t.Fatalf("plan errors %q do not report the field manager limit naming field_manager", got)
	}
}

// A contribution of the policy's name is this policy's only when its
// instance is this one or one this run holds (the previous instance of a
// replacement); another instance's, or one without an instance ID, is a
// plan error, whatever workspace it names.
func TestPlanRefusesTheNameOfAnInstanceThisStateDoesNotHold(t *testing.T) {
	data, fake, owner, entries := planFixture(t)
	mine, err := trafficpolicy.NewContribution(trafficpolicy.Named{Policy: trafficpolicy.Intent{Name: "mine",
		Sources: trafficpolicy.Sources{Placement: translate.Placement{Clusters: []string{"east"}}}, Timeout: "2s"},
		Destination: trafficpolicy.Destination{VirtualDestination: "user.global", VirtualDestinationName: "user", BackendClusters: []string{"east"}}},
		trafficpolicy.Writer{Workspace: "team-a"}, data.Registry)
	if err != nil {
		t.Fatal(err)
	}
	seedContributions(t, fake, map[string]string{"mine": mine}) // instance id-mine
	ctx := context.Background()
	if got := errorsOf(checkComposition(data, owner, entries, sharedContributions(ctx, data, owner, entries))); got != "" {
		t.Fatalf("the policy's own contribution is refused: %s", got)
	}
	owner.ID = "id-new"
	if got := errorsOf(checkComposition(data, owner, entries, sharedContributions(ctx, data, owner, entries))); !strings.Contains(got, "Name taken by another instance") || !strings.Contains(got, "id-mine") {
		t.Fatalf("another instance's contribution of the name (same workspace): errors %q, want Name taken naming id-mine", got)
	}
	data.Roster = &runstate.WorkspaceRoster{}
	data.Roster.Hold("mine", "id-mine")
	if got := errorsOf(checkComposition(data, owner, entries, sharedContributions(ctx, data, owner, entries))); got != "" {
		t.Fatalf("the previous instance this run holds is refused: %s", got)
	}
	vs, err := fake.Tracker().Get(vsGVR, "istio-system", "tp-user.global")
	if err != nil {
		t.Fatal(err)
	}
	u := vs.(*unstructured.Unstructured)
	labels := u.GetLabels()
	labels["traffic-policy.mesh-intent.io/mine"] = "true"
	u.SetLabels(labels)
	if err := fake.Tracker().Update(vsGVR, u, "istio-system"); err != nil {
		t.Fatal(err)
	}
	data.Engine = &engine.Engine{Clients: data.Engine.Clients, Shared: shareddata.Compositions{}} // a new run: fresh listings
	if got := errorsOf(checkComposition(data, owner, entries, sharedContributions(ctx, data, owner, entries))); !strings.Contains(got, "without an instance") {
		t.Fatalf("a contribution of the name without an instance ID: errors %q, want it refused", got)
	}
}
