package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A renamed function whose doc comment and design document still use the
// old name are both reported; the current names and cited ones are not.
func TestStaleNamesAreReported(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("pkg/a.go", "package pkg\n\n// applyCluster writes one cluster.\nfunc upsertCluster() {}\n\n// upsertOnce writes once.\nfunc upsertOnce() {}\n")
	write("docs/design.md", "`applyCluster` and `upsertOnce` and `buildSubsetCluster` and `KUBE_TOKEN` and `meshConfig.trustDomain`\n")
	got, err := check(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, "\n")
	if len(got) != 2 || !strings.Contains(all, "begins with applyCluster") || !strings.Contains(all, "`applyCluster`: no such name") {
		t.Errorf("got %d problems, want the doc comment and the design document naming applyCluster:\n%s", len(got), strings.Join(got, "\n"))
	}
}

// A package doc that lists its package's files is reported when it misses
// one or names one that is gone; names of another package's files, and
// globs (<resource>_resource.go), are fine.
func TestPackageFileListsAreChecked(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("other/util.go", "package other\n")
	write("pkg/doc.go", "// Package pkg: apply.go, read.go, gone.go, the <kind>_resource.go files, and util.go of another package.\npackage pkg\n")
	for _, f := range []string{"apply.go", "read.go", "access_resource.go", "new.go"} {
		write("pkg/"+f, "package pkg\n")
	}
	got, err := check(dir)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(got, "\n")
	if len(got) != 2 || !strings.Contains(all, "names gone.go, which is no file") || !strings.Contains(all, "but not new.go") {
		t.Errorf("got %d problems, want gone.go named and new.go missing:\n%s", len(got), all)
	}
}
