package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/runstate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// origins are n CORS origins.
func origins(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("https://app-%03d.frontend.example.com", i)
	}
	return out
}

// The plan checks a traffic policy's contribution as the apply writes it,
// with the configuration it keeps for import: 600 CORS origins fit in the
// contribution alone, but not with the configuration (which repeats
// them), and the apply would refuse it; so the plan refuses it too.
func TestPlanCountsTheKeptConfigurationInTheContributionSize(t *testing.T) {
	clusters := newFakeClusterSet(t, "east")
	reg := translate.NewRegistry(translate.Cluster{Name: "east"})
	data := &providerData{Registry: reg, Version: "1.0.0", Engine: &engine.Engine{Clients: clusters, Shared: shareddata.Compositions{}}, Planned: &runstate.PlannedObjects{}}
	dest := trafficpolicy.Destination{VirtualDestination: "user.global", VirtualDestinationName: "user", BackendClusters: []string{"east"}}
	policy := trafficpolicy.Intent{Name: "mine", Sources: trafficpolicy.Sources{Placement: translate.Placement{Clusters: []string{"east"}}},
		CORS: &trafficpolicy.CORS{AllowOrigins: origins(600)}}
	self := trafficpolicy.Named{Policy: policy, Destination: dest}
	spec := intentSpec{
		Owner: engine.Owner{Kind: intentkind.TrafficPolicy.Owner, Name: "mine", ID: "id-mine", Composition: trafficPolicyComposition(self, data)},
		Kinds: intentkind.TrafficPolicy.Writes,
		Translate: func(reg *translate.Registry) ([]translate.Object, error) {
			return trafficpolicy.Translate(policy, dest, reg)
		},
	}
	cfg, err := json.Marshal(map[string]any{"name": "mine", "destination": map[string]any{"virtual_destination": "user.global"},
		"sources": map[string]any{"clusters": []string{"east"}}, "cors": map[string]any{"allow_origins": origins(600)}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, _, diags := planObjects(ctx, data, spec, types.MapNull(types.StringType), false); diags.HasError() {
		t.Fatalf("without a kept configuration the contribution fits (the test needs it to): %v", diags)
	}
	spec.KeptConfig = string(cfg)
	kept, err := spec.keeping()
	if err != nil {
		t.Fatal(err)
	}
	plain, written := len(spec.Owner.Composition.Contribution.For("east").Raw), len(kept.Composition.Contribution.For("east").Raw)
	if plain > trafficpolicy.MaxContributionBytes || written <= trafficpolicy.MaxContributionBytes {
		t.Fatalf("contribution %d bytes alone, %d with the kept configuration: the test needs the first to fit in %d and the second not", plain, written, trafficpolicy.MaxContributionBytes)
	}
	data.Planned = &runstate.PlannedObjects{}
	_, _, diags := planObjects(ctx, data, spec, types.MapNull(types.StringType), false)
	got := errorsOf(diags)
	for _, want := range []string{"Traffic policy contribution too large", fmt.Sprint(written), "configuration it keeps for import"} {
		if !strings.Contains(got, want) {
			t.Fatalf("plan errors %q do not say %q", got, want)
		}
	}
	if len(spec.Owner.Composition.Contribution.For("east").Raw) != plain {
		t.Fatal("the plan changed the spec's own contribution")
	}
}

// The plan checks the annotations of the objects of every kind, not only
// composed ones: a virtual destination whose configuration, kept for
// import on its record, makes the record's annotations exceed 256 KiB
// fails at the attribute that makes most of it, saying what to do.
func TestPlanChecksTheAnnotationsOfEveryKind(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	data := recordsData(f)
	in := vdIn("user", "users")
	spec := intentSpec{
		Owner:      engine.Owner{Kind: intentkind.VirtualDestination.Owner, Name: "user", ID: "id-user"},
		Kinds:      intentkind.VirtualDestination.Writes,
		ConfigKind: intentkind.VirtualDestination.ConfigKind,
		Translate: func(reg *translate.Registry) ([]translate.Object, error) {
			objs, err := virtualdestination.Translate(in, reg)
			if err != nil {
				return nil, err
			}
			return virtualdestination.WithRecords(in, objs, data.recordsNamespace())
		},
	}
	ctx := context.Background()
	if _, _, diags := planObjects(ctx, data, spec, types.MapNull(types.StringType), false); diags.HasError() {
		t.Fatal(diags)
	}
	var backends []map[string]any
	for i := range 3000 {
		backends = append(backends, map[string]any{"cluster": "east", "namespace": fmt.Sprintf("team-%04d-with-a-long-namespace-name", i), "service": "user-service-with-a-long-name", "priority": i})
	}
	cfg, err := json.Marshal(map[string]any{"name": "user", "hostname": "user.global", "backends": backends})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg) <= engine.MaxAnnotationBytes {
		t.Fatalf("the configuration is %d bytes: the test needs more than %d", len(cfg), engine.MaxAnnotationBytes)
	}
	spec.KeptConfig = string(cfg)
	data.Planned = &runstate.PlannedObjects{}
	_, _, diags := planObjects(ctx, data, spec, types.MapNull(types.StringType), false)
	if !diags.HasError() {
		t.Fatal("a record whose kept configuration exceeds the annotations limit plans clean")
	}
	for _, d := range diags.Errors() {
		withPath, ok := d.(interface{ Path() path.Path })
		if !ok || withPath.Path().String() != "backends" || d.Summary() != "Kubernetes limit exceeded: annotations" ||
			!strings.Contains(d.Detail(), "ConfigMap") || !strings.Contains(d.Detail(), "Shrink backends") || !strings.Contains(d.Detail(), "262144") {
			t.Fatalf("diagnostic %q: %q, want the annotations limit at backends naming the record and the fix", d.Summary(), d.Detail())
		}
	}
}

// Through ModifyPlan: the plan of a virtual destination with a very large
// configuration (8,000 ports) fails on the annotations its record would
// carry with the configuration kept for import, at ports.
func TestVirtualDestinationPlanCountsTheKeptConfiguration(t *testing.T) {
	f := newFakeClusterSet(t, "east", "west")
	var ports []string
	for i := 1; i <= 8000; i++ {
		ports = append(ports, fmt.Sprintf(`{"number":%d,"protocol":"HTTP"}`, i))
	}
	config := `{"name":"user","hostname":"user.global","namespace":"istio-system","ports":[` + strings.Join(ports, ",") + `],"backends":[{"cluster":"east","namespace":"users","service":"user"}]}`
	diags := vdPlan(t, recordsData(f), config, "", nil)
	got := diagText(diags)
	if !diags.HasError() || !strings.Contains(got, "Kubernetes limit exceeded: annotations") || !strings.Contains(got, "Shrink ports") {
		t.Fatalf("diagnostics %q, want the annotations limit at ports", got)
	}
}
