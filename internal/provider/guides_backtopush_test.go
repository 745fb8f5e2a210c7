package provider

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// "Back to push" ends with the bootstrap objects deleted, but
// kustomize-controller never takes its labels
// (kustomize.toolkit.fluxcd.io/name and /namespace) off what it applied
// (with prune false its finalizer deletes nothing and edits nothing), so
// every object the state now pushes still carries them. The push-beside-
// Flux check (engine/sink_flux.go) then reads the Kustomization they
// name; the Role the prerequisites guide documents cannot read
// kustomizations, and a Kustomization that cannot be read is a plan error
// (TestPushWriteWhereTheKustomizationCannotBeRead). So a state that
// followed the guide to its end, with the documented Role, fails every
// plan on that cluster. The guide must say it: either the documented Role
// grants reading Kustomizations, or "Back to push" says to remove those
// labels (or the provider removes them while retired is set).
func TestBackToPushEndsWithPlansThatPassUnderTheDocumentedRole(t *testing.T) {
	read := func(g string) string {
		b, err := os.ReadFile(filepath.Join("..", "..", "docs", "guides", g+".md"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	prerequisites := read("prerequisites")
	guide := read("clusters-unreachable")
	_, back, ok := strings.Cut(guide, "## Back to push")
	if !ok {
		t.Fatal("no section \"Back to push\"")
	}
	if next := strings.Index(back, "\n## "); next >= 0 {
		back = back[:next]
	}
	if !strings.Contains(prerequisites, "kustomizations") && !strings.Contains(back, "kustomize.toolkit.fluxcd.io/name") {
		t.Errorf("after \"Back to push\" the objects keep Flux's labels and the documented Role cannot read kustomizations: every plan fails; neither the prerequisites' Role nor \"Back to push\" says what to do")
	}
}
