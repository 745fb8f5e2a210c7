package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/oraclecall"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// The oracles translate each case's intent LIVE, with the provider's own
// translator (this module requires the provider's module, replaced by the
// working tree ../..), instead of reading the checked-in golden output.
// A bug in the translator therefore reaches Istio, and a mutation of the
// translator (tools/mutate, go test -overlay) is judged by Istio's
// answers, not by a byte comparison with a golden file. The translator's
// own TestGolden keeps the golden files equal to this output.
//
// The translator runs through internal/oraclecall: in this process, or,
// when MESH_ORACLE_TRANSLATOR names a program (tools/oracletranslate),
// in that program, one request per run. tools/mutate builds this module's
// test binaries once and hands each translator mutation's program to
// them, so that a mutation does not relink istiod.

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
	out := TranslateIntent(t, intent, in.Intent, in.Registry)
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

// TranslateIntent runs the translator of intent on a case's intent and
// registry.
func TranslateIntent(t testing.TB, intent string, raw json.RawMessage, reg []RegistryCluster) Translated {
	t.Helper()
	resp, err := Call(oraclecall.Request{Op: "translate", Intent: intent, Raw: raw, Registry: reg})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Err != "" {
		return Translated{Failed: resp.Err}
	}
	return Translated{Objects: resp.Objects}
}

// Call answers req: through the program MESH_ORACLE_TRANSLATOR names, or
// in this process. An error is the program's failure, not the answer's.
func Call(req oraclecall.Request) (oraclecall.Response, error) {
	prog := os.Getenv(oraclecall.Env)
	if prog == "" {
		return oraclecall.Do(req), nil
	}
	in, err := json.Marshal(req)
	if err != nil {
		return oraclecall.Response{}, err
	}
	cmd := exec.Command(prog)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return oraclecall.Response{}, fmt.Errorf("%s (%s): %v: %s", prog, oraclecall.Env, err, stderr.String())
	}
	var resp oraclecall.Response
	if err := json.Unmarshal(out, &resp); err != nil {
		return oraclecall.Response{}, fmt.Errorf("%s (%s) answered %.200q: %v", prog, oraclecall.Env, out, err)
	}
	return resp, nil
}

// RegistryCluster is one cluster of a case's registry, as the golden
// inputs (and the plans' cases, MESH_CASES_DIR) write it.
type RegistryCluster = translate.CaseCluster

// Gateway is a cluster's east-west gateway as the cases write it.
type Gateway = translate.CaseGateway

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
