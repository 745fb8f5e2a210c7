package provider

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// versionConstraint finds the provider's version constraints where users
// copy them from: a required_providers entry of mesh, and what terraform
// init prints for it.
var versionConstraint = regexp.MustCompile(`(?:version\s*=\s*|versions matching )"(~>[^"]*)"`)

// The README, the guides, the templates and the examples pin the provider
// with one constraint (issue 38: the README's "~> 0.1" moved to 0.2.0 on
// init -upgrade, while the upgrading guide pinned "~> 0.1.0").
func TestOneVersionConstraintEverywhere(t *testing.T) {
	root := filepath.Join("..", "..")
	found := map[string][]string{}
	files := []string{filepath.Join(root, "README.md")}
	for _, dir := range []string{"docs", "examples", "templates"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(path, ".md") || strings.HasSuffix(path, ".tf") || strings.HasSuffix(path, ".tmpl")) {
				files = append(files, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range versionConstraint.FindAllStringSubmatch(string(src), -1) {
			found[m[1]] = append(found[m[1]], f)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one version constraint, found %d: %v", len(found), found)
	}
	for c, fs := range found {
		if len(fs) < 5 {
			t.Errorf("constraint %q found in %d files only, the scan misses some: %v", c, len(fs), fs)
		}
	}
}
