package provider

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// guides are the pages under docs/guides, rendered from templates/guides.
var guides = []string{"getting-started", "prerequisites", "environments", "team-modules", "migrating", "hcp-terraform", "upgrading", "reviewing-plans", "clusters-unreachable", "troubleshooting", "cluster-outage"}

var terraformBlock = regexp.MustCompile("(?s)```(?:terraform|hcl)\n(.*?)```")

// Every HCL snippet in the guides is, verbatim, a file under examples/,
// and TestExamplesValidate runs terraform init and validate on every one of
// those: no snippet in the guides is unchecked.
func TestGuideSnippetsAreValidatedExamples(t *testing.T) {
	examples := map[string]string{}
	root := filepath.Join("..", "..", "examples")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".tf") {
			return err
		}
		b, err := os.ReadFile(p)
		examples[strings.TrimSpace(string(b))] = p
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range guides {
		page, err := os.ReadFile(filepath.Join("..", "..", "docs", "guides", g+".md"))
		if err != nil {
			t.Errorf("guide %s is not rendered: %v (run make docs)", g, err)
			continue
		}
		blocks := terraformBlock.FindAllStringSubmatch(string(page), -1)
		if len(blocks) == 0 {
			t.Errorf("guide %s has no configuration", g)
		}
		for i, b := range blocks {
			if _, ok := examples[strings.TrimSpace(b[1])]; !ok {
				t.Errorf("snippet %d of guide %s is no file under examples/, so nothing validates it; include it with tffile:\n%s", i+1, g, b[1])
			}
		}
	}
	// Snippets written into the templates by hand would be caught above
	// only once rendered: the templates must include files.
	entries, err := os.ReadDir(filepath.Join("..", "..", "templates", "guides"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(guides) {
		t.Errorf("templates/guides has %d pages, the test knows %d: %v", len(entries), len(guides), guides)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join("..", "..", "templates", "guides", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if terraformBlock.Match(b) {
			t.Errorf("templates/guides/%s writes HCL inline; include a file from examples/ with tffile", e.Name())
		}
	}
}
