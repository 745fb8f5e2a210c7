package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every mutation still applies (its snippet is in its file exactly once)
// and has its row in docs/testing.md: a change that moves or rewrites a
// mutated line fails here, in the unit tests, rather than as STALE in a
// mutation run.
func TestEveryMutationApplies(t *testing.T) {
	root := filepath.Join("..", "..")
	table, err := os.ReadFile(filepath.Join(root, "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, m := range mutations {
		if seen[m.ID] {
			t.Errorf("%s: two mutations with this ID", m.ID)
		}
		seen[m.ID] = true
		b, err := os.ReadFile(filepath.Join(root, m.File))
		if err != nil {
			t.Errorf("%s: %v", m.ID, err)
			continue
		}
		if n := strings.Count(string(b), m.From); n != 1 {
			t.Errorf("%s: snippet found %d times in %s, want once: %q", m.ID, n, m.File, m.From)
		}
		if !strings.Contains(string(table), "| "+m.ID+" |") {
			t.Errorf("%s: no row in docs/testing.md", m.ID)
		}
	}
}
