package main

import (
	"os"
	"path/filepath"
	"testing"
)

// A cached CAUGHT is found again only while every file and variable its
// tests read is unchanged, and a log cut short caches nothing.
func TestResultCacheIsKeyedOnWhatTheTestsRead(t *testing.T) {
	work := t.TempDir()
	// Paths under the temporary directory are the tests' scratch space,
	// which the cache leaves out: move it away from the files read here.
	t.Setenv("TMPDIR", t.TempDir())
	read := filepath.Join(work, "golden.yaml")
	write(t, read, "a: 1\n")
	dir := filepath.Join(work, "listing")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MESH_SOMETHING", "one")
	log := filepath.Join(work, "testlog.txt")
	write(t, log, "# test log\nopen golden.yaml\nopen listing\ngetenv MESH_SOMETHING\nstat missing.txt\n")

	c := newResultCache(work, filepath.Join(work, "cache"))
	if err := c.store("k1", "TestX", []testLog{{path: log, dir: work}}, false); err != nil {
		t.Fatal(err)
	}
	hit := func() bool {
		fresh := newResultCache(work, filepath.Join(work, "cache")) // a new run: no hashes remembered
		_, ok := fresh.lookup("k1")
		return ok
	}
	if !hit() {
		t.Fatal("nothing changed, yet the result was not found")
	}
	write(t, read, "a: 2\n")
	if hit() {
		t.Error("a file the tests opened changed, yet the cached result was used")
	}
	write(t, read, "a: 1\n")
	write(t, filepath.Join(dir, "new.yaml"), "")
	if hit() {
		t.Error("a directory the tests listed gained a file, yet the cached result was used")
	}
	if err := os.Remove(filepath.Join(dir, "new.yaml")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("MESH_SOMETHING", "two")
	if hit() {
		t.Error("a variable the tests read changed, yet the cached result was used")
	}
	t.Setenv("MESH_SOMETHING", "one")
	write(t, filepath.Join(work, "missing.txt"), "")
	if hit() {
		t.Error("a file the tests found missing appeared, yet the cached result was used")
	}
	if err := os.Remove(filepath.Join(work, "missing.txt")); err != nil {
		t.Fatal(err)
	}
	if !hit() {
		t.Error("everything back as it was, yet the result was not found")
	}

	cut := filepath.Join(work, "cut.txt")
	write(t, cut, "open golden.yaml\n") // no header: the binary exited before flushing its log
	if err := c.store("k2", "TestY", []testLog{{path: cut, dir: work}}, false); err != nil {
		t.Fatal(err)
	}
	if _, ok := c.lookup("k2"); ok {
		t.Error("a run whose test log was cut short was cached")
	}
}

// A test that looks a program up in PATH runs a child whose reads the
// log cannot see: its result is keyed on the whole tracked tree too.
func TestResultCacheKeysChildProcessesOnTheTree(t *testing.T) {
	work := t.TempDir()
	t.Setenv("TMPDIR", t.TempDir())
	bin := filepath.Join(work, "bin")
	write(t, filepath.Join(bin, "terraform"), "#!/bin/sh\n")
	t.Setenv("PATH", bin)
	log := filepath.Join(work, "testlog.txt")
	write(t, log, "# test log\nstat "+filepath.Join(bin, "terraform")+"\n")
	ops, lookedUp, err := readTestLog(log, work)
	if err != nil {
		t.Fatal(err)
	}
	if !lookedUp || len(ops) != 1 {
		t.Errorf("readTestLog = %v, looked up %v; want the stat and a program looked up in PATH", ops, lookedUp)
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A clone of the same content in another directory (a CI runner's fresh
// checkout) finds the results the first clone stored, and misses them
// when its own copy of a file the tests read differs.
func TestResultCacheFollowsTheRepositoryToAnotherDirectory(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	cache := filepath.Join(t.TempDir(), "cache")
	first, second := t.TempDir(), t.TempDir()
	for _, root := range []string{first, second} {
		write(t, filepath.Join(root, "testdata", "golden.yaml"), "a: 1\n")
	}
	log := filepath.Join(first, "testlog.txt")
	write(t, log, "# test log\nopen testdata/golden.yaml\n")
	if err := newResultCache(first, cache).store("k", "TestX", []testLog{{path: log, dir: first}}, false); err != nil {
		t.Fatal(err)
	}
	if _, ok := newResultCache(second, cache).lookup("k"); !ok {
		t.Fatal("a clone with the same content elsewhere did not find the stored result")
	}
	if err := os.RemoveAll(first); err != nil { // the first clone gone, as on a fresh runner
		t.Fatal(err)
	}
	if _, ok := newResultCache(second, cache).lookup("k"); !ok {
		t.Error("the stored result depends on the first clone's directory still existing")
	}
	write(t, filepath.Join(second, "testdata", "golden.yaml"), "a: 2\n")
	if _, ok := newResultCache(second, cache).lookup("k"); ok {
		t.Error("the second clone's golden file differs, yet the stored result was used")
	}
}
