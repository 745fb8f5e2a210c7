package main

// Istio's simulation linked once. The tools/istio module's test binaries
// link much of istiod; `go test -overlay` relinks them for every
// translator mutation (one and a half to four minutes each on two cores).
// Instead, each test binary of that module is built once per run, from
// the tree as it is (no overlay), and a mutation's overlay builds only
// tools/oracletranslate, the small program that runs the provider's
// translator and routing statement (internal/oraclecall). The prebuilt
// test binary runs with MESH_ORACLE_TRANSLATOR naming that program, so
// every object Istio judges and every statement it is compared with come
// from the mutated code, while the simulation's own expectations (from
// the intent, in the test binary) do not.

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// istioModule is the module whose test binaries are linked once.
const istioModule = "tools/istio"

// translatorPkg is the program a mutation's overlay builds instead.
const translatorPkg = "./tools/oracletranslate"

// oracleEnv is internal/oraclecall.Env (tools/mutate does not import the
// provider's packages).
const oracleEnv = "MESH_ORACLE_TRANSLATOR"

// linker builds each test binary of the tools/istio module once per run.
type linker struct {
	dir string
	mu  sync.Mutex
	bin map[string]*linked

	depsOnce sync.Once
	deps     map[string]bool // the directories tools/oracletranslate is built from
}

type linked struct {
	once sync.Once
	path string
	err  error
}

func newLinker(dir string) *linker { return &linker{dir: dir, bin: map[string]*linked{}} }

// prebuiltReaches reports whether the translating program is built from
// file (relative to root): only then does a prebuilt test binary see the
// mutation, through the program.
func (l *linker) prebuiltReaches(root, file string) bool {
	l.depsOnce.Do(func() {
		out, err := goList(root, "-deps", "-f", "{{.Dir}}", translatorPkg)
		if err != nil {
			return // every mutation then relinks, as before
		}
		l.deps = map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			l.deps[d] = true
		}
	})
	return l.deps[filepath.Dir(filepath.Join(root, file))]
}

// testBinary is pkg's test binary (pkg an import path of the module in
// moduleDir), built on first use without any overlay.
func (l *linker) testBinary(moduleDir, pkg string) (string, error) {
	l.mu.Lock()
	b, ok := l.bin[pkg]
	if !ok {
		b = &linked{path: filepath.Join(l.dir, fmt.Sprintf("%d.test", len(l.bin)))}
		l.bin[pkg] = b
	}
	l.mu.Unlock()
	b.once.Do(func() {
		cmd := exec.Command("go", "test", "-c", "-o", b.path, pkg)
		cmd.Dir = moduleDir
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("building the test binary of %s once: %v\n%s", pkg, err, out)
		}
	})
	return b.path, b.err
}

// buildTranslator builds tools/oracletranslate with the mutation's overlay
// into dir; it fails with the compiler's words when the mutation does not
// compile.
func buildTranslator(root, overlayFile, dir string) (string, error) {
	out := filepath.Join(dir, "oracletranslate")
	cmd := exec.Command("go", "build", "-overlay", overlayFile, "-o", out, translatorPkg)
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v\n%s", err, b)
	}
	return out, nil
}

// runPrebuilt runs pkg's prebuilt test binary in its directory, as go test
// would, with the mutated translator; it reports what runPackage reports.
func runPrebuilt(cache *resultCache, ln *linker, overlayFile string, m mutation, su suite, pkg, pkgDir, logFile string) (string, string) {
	moduleDir := filepath.Join(cache.root, su.Dir)
	bin, err := ln.testBinary(moduleDir, pkg)
	if err != nil {
		return "BROKEN", err.Error()
	}
	translator, err := buildTranslator(cache.root, overlayFile, filepath.Dir(logFile))
	if err != nil {
		return "BROKEN", "does not compile:\n" + err.Error()
	}
	args := []string{"-test.count=1", "-test.timeout=30m", "-test.paniconexit0"}
	if su.Run != "" {
		args = append(args, "-test.run", su.Run)
	}
	args = append(append(args, su.Args...), "-test.testlogfile="+logFile)
	cmd := exec.Command(bin, args...)
	cmd.Dir = pkgDir
	cmd.Env = append(testEnv(m), oracleEnv+"="+translator)
	out, err := cmd.CombinedOutput()
	if err == nil {
		return "SURVIVED", "tests pass with the mutation"
	}
	if bytes.Contains(out, []byte(oracleEnv)) && !bytes.Contains(out, []byte("--- FAIL")) {
		return "BROKEN", "the translating program failed:\n" + string(out)
	}
	failed := failingTests(out)
	if len(failed) == 0 {
		return "BROKEN", "the test binary failed without a failing test:\n" + string(out)
	}
	return "CAUGHT", strings.Join(failed, " ")
}
