// Command mutate checks that the tests can fail: it applies each mutation
// of mutations.go (a deliberate bug: one exact snippet of one file
// replaced) and runs the tests of its package, which must fail. The tree
// is never touched: the mutated file is handed to `go test -overlay`.
//
//	go run ./tools/mutate            every mutation
//	go run ./tools/mutate -only id   the mutations whose ID contains id
//	go run ./tools/mutate -quick     leave out the slow ones, for a look while editing
//	go run ./tools/mutate -parallel 1   one at a time (default: one per CPU)
//	go run ./tools/mutate -schemata=false   one test binary per mutation
//
// A slow mutation takes a minute or more where the others take seconds:
// its tests start the local mesh (TF_ACC) or run Istio's simulation, whose
// test binary is linked once per run (istio.go). -quick leaves them out
// but for one canary, the first of the Istio ones, which shows that a
// translator mutation still reaches Istio; make mutate, and so make test,
// runs them all.
//
// The mutations of one package whose snippet lies inside a function body
// share one test binary (schemata.go: each runs it with MESH_MUTANT
// naming it), trusted only once it passes its tests unmutated; the others,
// and all with -schemata=false, build their own.
//
// Files: main.go runs the table (mutations.go), cache.go keeps the
// results CAUGHT, istio.go links the simulation once, schemata.go builds
// one binary per package, opentofu.go names the OpenTofu environment.
//
// A mutation whose tests still pass SURVIVED, and the command fails; so
// does one whose snippet is not found exactly once (the table must follow
// the code) and one that does not compile (it would prove nothing).
// `make mutate` runs it; docs/testing.md says how to add a mutation.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

func main() {
	only := flag.String("only", "", "run only the mutations whose ID contains this")
	quick := flag.Bool("quick", false, "leave out the slow mutations (acceptance tests, Istio's simulation) but one canary")
	parallel := flag.Int("parallel", runtime.NumCPU(), "how many mutations run at once (acceptance ones run alone)")
	schema := flag.Bool("schemata", true, "build one test binary per package for the mutations inside function bodies (schemata.go)")
	useCache := flag.Bool("cache", true, "skip a mutation CAUGHT before whose tests' inputs are unchanged (cache.go; $MUTATE_CACHE or the user cache directory)")
	flag.Parse()
	root, err := repoRoot()
	if err != nil {
		fail(err)
	}
	tmp, err := os.MkdirTemp("", "mutate-")
	if err != nil {
		fail(err)
	}
	defer os.RemoveAll(tmp)
	var left int
	canary := ""
	var todo []int
	for i, m := range mutations {
		if *only != "" && !strings.Contains(m.ID, *only) {
			continue
		}
		if *quick && m.slow() {
			if canary != "" || m.acceptance() {
				left++
				continue
			}
			canary = m.ID
		}
		todo = append(todo, i)
	}
	fmt.Printf("%-34s %-9s %6s  %s\n", "mutation", "result", "sec", "failing tests")
	cache := newResultCache(root, "")
	if *useCache {
		cache = newResultCache(root, defaultCacheDir())
	}
	var sc *schemata
	if *schema {
		var ms []mutation
		for _, i := range todo {
			ms = append(ms, mutations[i])
		}
		sc = newSchemata(cache, tmp, ms)
	}
	bad := runAll(cache, sc, newLinker(tmp), tmp, todo, max(*parallel, 1))
	if left > 0 {
		fmt.Printf("%d slow mutations left out (-quick); the canary %s ran. make mutate runs them all.\n", left, canary)
	}
	if bad > 0 {
		fail(fmt.Errorf("%d mutation(s) not caught; see the table", bad))
	}
}

// runAll runs the mutations todo (indexes into mutations), parallel at a
// time, and prints their rows in the table's order as they complete; it
// returns how many were not caught. Each mutation has its own overlay
// and the go command's build cache is safe to share; a mutation whose
// tests start the local mesh runs alone.
func runAll(cache *resultCache, sc *schemata, ln *linker, tmp string, todo []int, parallel int) int {
	type row struct {
		line   string
		caught bool
	}
	rows := make([]chan row, len(todo))
	for k := range rows {
		rows[k] = make(chan row, 1)
	}
	var alone sync.RWMutex
	slots := make(chan struct{}, parallel)
	go func() {
		for k, i := range todo {
			slots <- struct{}{}
			go func() {
				defer func() { <-slots }()
				m := mutations[i]
				if m.acceptance() {
					alone.Lock()
					defer alone.Unlock()
				} else {
					alone.RLock()
					defer alone.RUnlock()
				}
				start := time.Now()
				result, detail := run(cache, sc, ln, filepath.Join(tmp, fmt.Sprint(i)), m)
				rows[k] <- row{fmt.Sprintf("%-34s %-9s %6.1f  %s\n", m.ID, result, time.Since(start).Seconds(), detail), result == "CAUGHT"}
			}()
		}
	}()
	bad := 0
	for _, c := range rows {
		r := <-c
		fmt.Print(r.line)
		if !r.caught {
			bad++
		}
	}
	return bad
}

// acceptance reports whether m's tests start the local mesh.
func (m mutation) acceptance() bool { return slices.Contains(m.Env, "TF_ACC=1") }

// slow reports whether m takes a minute or more: its tests start the
// local mesh, or run in the tools/istio module, whose test binaries link
// much of istiod again for every mutation.
func (m mutation) slow() bool {
	if m.acceptance() {
		return true
	}
	for _, su := range m.Suites {
		if su.Dir == "tools/istio" {
			return true
		}
	}
	return false
}

// run applies one mutation and reports CAUGHT, SURVIVED, STALE (snippet
// not found exactly once) or BROKEN (does not compile). A CAUGHT found in
// the cache, its inputs unchanged, is reported without running.
func run(cache *resultCache, sc *schemata, ln *linker, dir string, m mutation) (string, string) {
	root := cache.root
	path := filepath.Join(root, m.File)
	src, err := os.ReadFile(path)
	if err != nil {
		return "STALE", err.Error()
	}
	if n := bytes.Count(src, []byte(m.From)); n != 1 {
		return "STALE", fmt.Sprintf("%s: snippet found %d times, want once: %q", m.File, n, m.From)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "BROKEN", err.Error()
	}
	mutated := filepath.Join(dir, filepath.Base(m.File))
	if err := os.WriteFile(mutated, bytes.Replace(src, []byte(m.From), []byte(m.To), 1), 0o644); err != nil {
		return "BROKEN", err.Error()
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{path: mutated}})
	if err != nil {
		return "BROKEN", err.Error()
	}
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return "BROKEN", err.Error()
	}
	suites := m.Suites
	if len(suites) == 0 {
		suites = []suite{{Package: m.Package, Run: m.Run}}
	}
	key, keyed := cache.key(m, suites)
	if keyed {
		if detail, ok := cache.lookup(key); ok {
			return "CAUGHT", "(cached) " + detail
		}
	}
	var caught []string
	var logs []testLog
	for k, su := range suites {
		result, detail, suiteLogs := runSuite(cache, sc, ln, overlayFile, mutated, m, su, filepath.Join(dir, fmt.Sprintf("suite%d", k)))
		if result != "CAUGHT" {
			if su.Dir != "" {
				detail = su.Dir + " " + su.Package + ": " + detail
			}
			return result, detail
		}
		caught = append(caught, detail)
		logs = append(logs, suiteLogs...)
	}
	detail := strings.Join(caught, " ")
	if keyed {
		if err := cache.store(key, detail, logs, m.acceptance()); err != nil {
			fmt.Fprintf(os.Stderr, "mutate: %s: result not cached: %v\n", m.ID, err)
		}
	}
	return "CAUGHT", detail
}

// runSuite runs one suite's tests on the mutated file, one package at a
// time, each writing its test log (the files and variables it read) for
// the result cache.
func runSuite(cache *resultCache, sc *schemata, ln *linker, overlayFile, mutated string, m mutation, su suite, dir string) (string, string, []testLog) {
	l := cache.list(su)
	if l.err != nil {
		return "BROKEN", l.err.Error(), nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "BROKEN", err.Error(), nil
	}
	var failed, logs = []string{}, []testLog{}
	for k, pkg := range l.pkgs {
		logFile := filepath.Join(dir, fmt.Sprintf("testlog%d.txt", k))
		var result, detail string
		if g := sc.groupOf(m); g != nil && g.ready(m, su) {
			result, detail = g.run(m, su, logFile)
		} else if su.Dir == istioModule && ln.prebuiltReaches(cache.root, m.File) {
			result, detail = runPrebuilt(cache, ln, overlayFile, m, su, pkg, l.dirs[k], logFile)
		} else {
			result, detail = runPackage(cache.root, overlayFile, mutated, m, su, pkg, logFile)
		}
		switch result {
		case "CAUGHT":
			failed = append(failed, detail)
			logs = append(logs, testLog{path: logFile, dir: l.dirs[k]})
		case "SURVIVED":
			logs = append(logs, testLog{path: logFile, dir: l.dirs[k]})
		default:
			return result, detail, nil
		}
	}
	if len(failed) == 0 {
		return "SURVIVED", "tests pass with the mutation", nil
	}
	return "CAUGHT", strings.Join(failed, " "), logs
}

// runPackage runs one package's tests on the mutated file.
func runPackage(root, overlayFile, mutated string, m mutation, su suite, pkg, logFile string) (string, string) {
	args := append(append([]string{"test", "-count=1", "-vet=off"}, buildFlags...), "-overlay", overlayFile, pkg)
	if su.Run != "" {
		args = append(args, "-run", su.Run)
	}
	args = append(append(append(args, "-args"), su.Args...), "-test.testlogfile="+logFile)
	cmd := exec.Command("go", args...)
	cmd.Dir = filepath.Join(root, su.Dir)
	cmd.Env = testEnv(m)
	if !strings.HasSuffix(m.File, ".go") {
		// The overlay reaches only what the go command reads. A test that
		// runs another file (the GNUmakefile) finds the mutated copy here.
		cmd.Env = append(cmd.Env, mutatedFileEnv+"="+m.File+"="+mutated)
	}
	out, err := cmd.CombinedOutput()
	if err == nil {
		return "SURVIVED", "tests pass with the mutation"
	}
	if bytes.Contains(out, []byte("[build failed]")) || bytes.Contains(out, []byte("[setup failed]")) {
		return "BROKEN", "does not compile:\n" + string(out)
	}
	failed := failingTests(out)
	if len(failed) == 0 {
		return "BROKEN", "go test failed without a failing test:\n" + string(out)
	}
	return "CAUGHT", strings.Join(failed, " ")
}

// testEnv is the environment m's tests run in: ours, without a
// translating program of our own, and m's.
func testEnv(m mutation) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, oracleEnv+"=") {
			env = append(env, kv)
		}
	}
	return append(env, m.Env...)
}

// mutatedFileEnv names, for a mutation of a file that is not Go source,
// "<file>=<mutated copy>" (file relative to the repository root).
const mutatedFileEnv = "MUTATE_FILE"

var failLine = regexp.MustCompile(`(?m)^\s*--- FAIL: (\S+)`)

func failingTests(out []byte) []string {
	seen := map[string]bool{}
	for _, m := range failLine.FindAllSubmatch(out, -1) {
		name := string(m[1])
		if i := strings.IndexByte(name, '/'); i > 0 {
			name = name[:i]
		}
		seen[name] = true
	}
	var names []string
	for n := range seen {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func repoRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", err
	}
	mod := strings.TrimSpace(string(out))
	if mod == "" || mod == os.DevNull {
		return "", fmt.Errorf("run from inside the provider's module")
	}
	return filepath.Dir(mod), nil
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "mutate:", err)
	os.Exit(1)
}
