package simulation

import (
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// examples is where TestAccExamplesPlan had each example's plan write the
// translator's input of its intents (MESH_CASES_DIR), one folder per
// example, holding one folder per owner kind: what make test passes here.
var examples = flag.String("examples", "", "a directory of example cases written by TestAccExamplesPlan (MESH_EXAMPLE_CASES); make test sets it")

// TestExamplesAgree replays every intent of every example under examples/
// in Istio's simulation, as the golden cases are replayed (the same
// assertions from the intent, without recorded tables), and checks the
// routing statement the example's plan showed against Istio's answer for
// the objects the plan writes: a virtual destination's written as a
// statement (checkStatement), a traffic or access policy's read back and
// put in the place of the computed statement (planned_test.go). Istio's
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
					// The plan's statement takes the place of the computed
					// one in the simulation's comparisons with Istio
					// (plannedTraffic): shift, mirror, timeout, retries,
					// fault, source clusters.
					forEachCaseIn(t, kind, folder, false, nil, func(t *testing.T, g *goldenCase, tc tpCase) string {
						if len(tc.Compose) == 0 {
							hasPlanned(t, g)
						} // else every policy planned on one destination, composed: their own cases carry the statements
						return simulateTrafficPolicy(t, g, tc)
					})
				case "access-policy":
					// Likewise (plannedAccess): enforcing clusters, and the
					// verdict on every caller and request.
					forEachCaseIn(t, kind, folder, false, nil, func(t *testing.T, g *goldenCase, ap apCase) string {
						hasPlanned(t, g)
						return simulateAccessPolicy(t, g, ap)
					})
				}
			})
		}
	}
}

// hasPlanned fails when g carries no routing statement: the plan writes
// the one it shows into the case (MESH_CASES_DIR).
func hasPlanned(t *testing.T, g *goldenCase) {
	t.Helper()
	if g.planned == nil {
		t.Fatalf("%s: the case carries no routing statement; the plan writes the one it shows (MESH_CASES_DIR)", g.name)
	}
}
