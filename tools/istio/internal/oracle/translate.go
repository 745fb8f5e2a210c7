package oracle

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/translatetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// The oracles translate each case's intent LIVE, with the provider's own
// translator (this module requires the provider's module, replaced by the
// working tree ../..), instead of reading the checked-in golden output.
// A bug in the translator therefore reaches Istio, and a mutation of the
// translator (tools/mutate, go test -overlay) is judged by Istio's
// answers, not by a byte comparison with a golden file. The translator's
// own TestGolden keeps the golden files equal to this output.

// Translated is one case's output: per cluster, its YAML documents (each
// starting with "# cluster: <name>", as the golden files write them), or
// the plan error.
type Translated struct {
	Objects map[string][]string
	Failed  string
}

// Translate translates the case at input (testdata/<case>.yaml of the
// intent's translator package, intent being "cluster",
// "virtual-destination", "traffic-policy" or "access-policy").
func Translate(t testing.TB, intent, input string) Translated {
	t.Helper()
	raw, err := os.ReadFile(input)
	if err != nil {
		t.Fatal(err)
	}
	var in struct {
		Registry []RegistryCluster `json:"registry"`
		Intent   json.RawMessage   `json:"intent"`
		// Routing is the statement a plan showed, in an example's case
		// (MESH_CASES_DIR); the golden cases have none.
		Routing map[string]string `json:"routing,omitempty"`
	}
	if err := yaml.UnmarshalStrict(raw, &in); err != nil {
		t.Fatalf("%s: %v", input, err)
	}
	objs, err := TranslateIntent(intent, in.Intent, Registry(in.Registry))
	var out Translated
	if err != nil {
		out = Translated{Failed: err.Error()}
	} else {
		out = Render(t, objs)
	}
	checkOutcome(t, input, out)
	return out
}

// checkOutcome fails the test when a golden case's live translation and
// its golden file disagree on whether it translates: a case whose golden
// records objects but whose translation fails here would otherwise reach
// no oracle (nothing to simulate or analyze) and pass unchecked, and one
// whose golden records a plan error but that translates here is a check
// the translator lost. A case without a golden file (an example's, written
// by a plan) is the caller's to judge.
func checkOutcome(t testing.TB, input string, live Translated) {
	t.Helper()
	path := strings.TrimSuffix(input, ".yaml") + ".golden.yaml"
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return
	}
	golden, err := GoldenObjects(path)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return
	}
	switch {
	case golden.Failed == "" && live.Failed != "":
		t.Errorf("%s: the golden file records objects, but the translation fails here: %s (no oracle could judge this case)", input, live.Failed)
	case golden.Failed != "" && live.Failed == "":
		t.Errorf("%s: the golden file records the plan error %q, but the translation succeeds here with objects for %d clusters", input, golden.Failed, len(live.Objects))
	}
}

// Render splits objects into YAML documents per cluster.
func Render(t testing.TB, objs []translate.Object) Translated {
	t.Helper()
	out := Translated{Objects: map[string][]string{}}
	for _, o := range objs {
		doc := translatetest.RenderYAML(t, []translate.Object{o})
		out.Objects[o.Cluster] = append(out.Objects[o.Cluster], string(doc))
	}
	return out
}

// TranslateIntent runs the translator of intent on a golden case's intent.
func TranslateIntent(intent string, raw json.RawMessage, reg *translate.Registry) ([]translate.Object, error) {
	switch intent {
	case "cluster":
		var in cluster.Intent
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		return cluster.Translate(in, reg)
	case "virtual-destination":
		var in virtualdestination.Intent
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		return virtualdestination.Translate(in, reg)
	case "traffic-policy":
		var in struct {
			Policy      *trafficpolicy.Intent     `json:"policy,omitempty"`
			Destination trafficpolicy.Destination `json:"destination"`
			Compose     []trafficpolicy.Named     `json:"compose,omitempty"`
		}
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		if len(in.Compose) > 0 {
			return trafficpolicy.Compose(in.Compose, reg)
		}
		if in.Policy == nil {
			return nil, errors.New("golden case has neither policy nor compose")
		}
		return trafficpolicy.Translate(*in.Policy, in.Destination, reg)
	case "access-policy":
		var in struct {
			Policy      accesspolicy.Intent      `json:"policy"`
			Destination accesspolicy.Destination `json:"destination"`
		}
		if err := yaml.UnmarshalStrict(raw, &in); err != nil {
			return nil, err
		}
		return accesspolicy.Translate(in.Policy, in.Destination, reg)
	}
	return nil, fmt.Errorf("no translator for intent %q", intent)
}

// RegistryCluster is one cluster of a case's registry, as the golden
// inputs (and the plans' cases, MESH_CASES_DIR) write it.
type RegistryCluster = translate.CaseCluster

// Gateway is a cluster's east-west gateway as the cases write it.
type Gateway = translate.CaseGateway

// Registry is the translator's registry of a case.
func Registry(cs []RegistryCluster) *translate.Registry { return translate.CaseRegistry(cs) }

// GoldenObjects reads a golden file's documents per cluster (for the
// checks that the live output is what the golden file records).
func GoldenObjects(path string) (Translated, error) {
	golden, err := os.ReadFile(path)
	if err != nil {
		return Translated{}, err
	}
	if msg, ok := strings.CutPrefix(string(golden), "error: "); ok {
		return Translated{Failed: strings.TrimSpace(msg)}, nil
	}
	out := Translated{Objects: map[string][]string{}}
	if strings.HasPrefix(string(golden), "# no objects") {
		return out, nil
	}
	for _, doc := range strings.Split(string(golden), "\n---\n") {
		c, ok := strings.CutPrefix(strings.SplitN(doc, "\n", 2)[0], "# cluster: ")
		if !ok {
			return Translated{}, fmt.Errorf("golden document without a '# cluster:' line: %.60q", doc)
		}
		out.Objects[c] = append(out.Objects[c], doc)
	}
	return out, nil
}
