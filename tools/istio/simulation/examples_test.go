package simulation

import (
	"flag"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
)

// examples is where TestAccExamplesPlan had each example's plan write the
// translator's input of its intents (MESH_CASES_DIR), one folder per
// example, holding one folder per owner kind: what make test passes here.
var examples = flag.String("examples", "", "a directory of example cases written by TestAccExamplesPlan (MESH_EXAMPLE_CASES); make test sets it")

// TestExamplesAgree replays every intent of every example under examples/
// in Istio's simulation, as the golden cases are replayed (the same
// assertions from the intent, without recorded tables), and checks the
// routing statement the example's plan showed: a virtual destination's
// against Istio's answer for the objects the plan writes, written as a
// statement (checkStatement); a policy's against the one computed here
// from the intent (which the simulation compares with Istio). Istio's
// answers, the intent's promises and the plan's words must agree for
// what users copy, not only for our cases.
func TestExamplesAgree(t *testing.T) {
	if *examples == "" {
		t.Fatal("no -examples directory: make test runs this after TestAccExamplesPlan has written the examples' cases " +
			"(make simulation-examples); make simulation leaves it out (-skip TestExamplesAgree)")
	}
	kinds := map[string]bool{"cluster": true, "virtual-destination": true, "traffic-policy": true, "access-policy": true}
	found := map[string]int{}
	byExample := map[string][]string{} // example -> kinds with cases
	err := filepath.WalkDir(*examples, func(p string, d os.DirEntry, err error) error {
		if err != nil || !d.IsDir() || !kinds[d.Name()] {
			return err
		}
		example, err := filepath.Rel(*examples, filepath.Dir(p))
		if err != nil {
			return err
		}
		byExample[example] = append(byExample[example], d.Name())
		files, err := filepath.Glob(filepath.Join(p, "*.yaml"))
		found[d.Name()] += len(files)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	// The examples hold intents of every kind; a run that finds none of
	// one kind proves nothing about it (a plan that stopped writing them).
	for k := range kinds {
		if found[k] == 0 {
			t.Errorf("no %s case under %s: did TestAccExamplesPlan run with %s set?", k, *examples, "MESH_EXAMPLE_CASES")
		}
	}
	names := make([]string, 0, len(byExample))
	for e := range byExample {
		names = append(names, e)
	}
	sort.Strings(names)
	ours := providerGateway(t)
	for _, e := range names {
		for _, kind := range byExample[e] {
			folder := filepath.Join(*examples, e, kind)
			t.Run(e+"/"+kind, func(t *testing.T) {
				switch kind {
				case "cluster":
					forEachCaseIn(t, kind, folder, false, func(_ *goldenCase, in clusterCase) bool { return in.DefaultDeny }, simulateDefaultDeny)
				case "virtual-destination":
					// The plan's statement against Istio's answer
					// (checkStatement), not against the statement
					// recomputed from the same intent.
					simulateVirtualDestinationsWith(t, folder, false, ours, func(t *testing.T, g *goldenCase) {
						if g.planned == nil {
							t.Errorf("%s: the case carries no routing statement; the plan writes the one it shows (MESH_CASES_DIR)", g.name)
						}
					})
				case "traffic-policy":
					forEachCaseIn(t, kind, folder, false, nil, func(t *testing.T, g *goldenCase, tc tpCase) string {
						if len(tc.Compose) == 0 {
							checkPlanned(t, g, g.tpRoutings(t, []pd{{tc.Policy, tc.Destination.withBackends(g)}})[0].Statement())
						} // else every policy planned on one destination, composed: their own cases carry the statements
						return simulateTrafficPolicy(t, g, tc)
					})
				case "access-policy":
					forEachCaseIn(t, kind, folder, false, nil, func(t *testing.T, g *goldenCase, ap apCase) string {
						checkPlanned(t, g, g.apRouting(t).Statement())
						return simulateAccessPolicy(t, g, ap)
					})
				}
			})
		}
	}
}

// checkPlanned fails when the plan's routing statement of g is not want.
func checkPlanned(t *testing.T, g *goldenCase, want routing.Statement) {
	t.Helper()
	if g.planned == nil {
		t.Errorf("%s: the case carries no routing statement; the plan writes the one it shows (MESH_CASES_DIR)", g.name)
		return
	}
	if !maps.Equal(g.planned, want) {
		t.Errorf("%s: the plan shows routing %v; computed from the intent here: %v", g.name, g.planned, want)
	}
}
