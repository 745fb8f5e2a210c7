package main

// Mutant schemata: one test binary per package. Building a package's test
// binary (compile with its test files, link) costs far more than running
// the few tests that judge a mutation, and every mutation of the same
// package used to pay it again. Instead, the mutations of one package
// whose snippet lies inside one function's body are all compiled into one
// binary: each mutated function F starts with a dispatch
//
//	if zzMutant() == "<mutation ID>" { return zzm<k>_F(params...) }
//
// and a copy of F, renamed zzm<k>_F, with that one mutation applied, is
// appended to its file (the copies are prefixed, not suffixed, so that a
// mutated TestX never becomes a test TestX_zzm0 the binary would run).
// zzMutant() is MESH_MUTANT, declared in a file the overlay adds to the
// package. The binary is built once; each mutation then runs it with
// MESH_MUTANT naming it.
//
// Lossless: before any mutation runs on it, the binary runs the union of
// its mutations' tests with MESH_MUTANT unset (the baseline) and must
// pass; a build that fails (a mutation that does not compile, or a bug
// here) or a baseline that fails sends every mutation of the group back
// to its own `go test -overlay` (runPackage), which judges it as before.
// Any mutation that does not fit (a file that is not Go, several suites
// or packages, the tools/istio module, a snippet outside a function body,
// a function that asks runtime.Caller where it is) runs that way too.
// The baseline sees only the unmutated path, so what would make a copy
// behave otherwise than the mutated file alone runs that way as well: a
// function calling recover() itself, a mutation removing an import's
// only use or setting a GO* variable, and every mutation while GOFLAGS
// holds test flags.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
)

// mutantEnv selects the mutation a schemata binary runs; unset, none.
const mutantEnv = "MESH_MUTANT"

// mutantVar is the call that returns mutantEnv in a schemata build: a
// function, not a package variable, so that a variable initialized before
// it (its initializer reaching a mutated function through an interface,
// which is not a dependency the compiler orders by) still sees the
// mutation; it reads the environment once (mutantFile).
const mutantVar = "zzMutant()"

// schemata holds the groups of one run, by mutation ID.
type schemata struct {
	byID map[string]*schemaGroup
}

// schemaGroup is the mutations judged by one package's test binary.
type schemaGroup struct {
	root, dir string // the repository; where the overlay and binary go
	pkg       string // import path
	pkgDir    string
	members   []mutation

	buildOnce sync.Once
	bin       string
	buildErr  error

	mu        sync.Mutex
	baselines map[string]*baseline // by variant (environment and arguments)
}

type baseline struct {
	once sync.Once
	ok   bool
}

// groupOf returns the group that judges m, or nil (m runs alone).
func (s *schemata) groupOf(m mutation) *schemaGroup {
	if s == nil {
		return nil
	}
	return s.byID[m.ID]
}

// schemaSuite is the one suite of m in the provider's module, or false.
func schemaSuite(m mutation) (suite, bool) {
	switch {
	case len(m.Suites) == 0:
		return suite{Package: m.Package, Run: m.Run}, true
	case len(m.Suites) == 1 && m.Suites[0].Dir == "":
		return m.Suites[0], true
	}
	return suite{}, false
}

// newSchemata groups the mutations todo that are not already cached as
// CAUGHT and that fit (see the top of this file) by package.
func newSchemata(cache *resultCache, tmp string, todo []mutation) *schemata {
	s := &schemata{byID: map[string]*schemaGroup{}}
	if f := goflagsTestFlags(goFlags()); len(f) > 0 {
		fmt.Fprintf(os.Stderr, "mutate: GOFLAGS holds test flags (%s) go test hands its binaries: every mutation builds its own\n", strings.Join(f, " "))
		return s
	}
	groups := map[string]*schemaGroup{}
	var order []string
	for _, m := range todo {
		su, ok := schemaSuite(m)
		if !ok || !strings.HasSuffix(m.File, ".go") {
			continue
		}
		l := cache.list(su)
		if l.err != nil || len(l.pkgs) != 1 {
			continue
		}
		if key, keyed := cache.key(m, []suite{su}); keyed {
			if _, hit := cache.lookup(key); hit {
				continue
			}
		}
		src, err := os.ReadFile(filepath.Join(cache.root, m.File))
		if err != nil || bytes.Count(src, []byte(m.From)) != 1 {
			continue // run reports it STALE
		}
		if _, ok := mutatedFunc(src, m.From); !ok || !keepsImportsUsed(src, m) || setsGoEnv(m) {
			continue
		}
		g := groups[l.pkgs[0]]
		if g == nil {
			g = &schemaGroup{root: cache.root, dir: filepath.Join(tmp, fmt.Sprintf("schemata%d", len(groups))), pkg: l.pkgs[0], pkgDir: l.dirs[0], baselines: map[string]*baseline{}}
			groups[l.pkgs[0]] = g
			order = append(order, l.pkgs[0])
		}
		g.members = append(g.members, m)
	}
	for _, p := range order {
		for _, m := range groups[p].members {
			s.byID[m.ID] = groups[p]
		}
	}
	return s
}

// funcSpan is the function declaration a snippet lies in.
type funcSpan struct {
	decl *ast.FuncDecl
	fset *token.FileSet
	file *ast.File
}

// mutatedFunc finds the function whose body holds from (found once in
// src), between its braces. ok is false when there is none, or when the
// function asks runtime.Caller(s) where it is (the copy would answer
// differently).
func mutatedFunc(src []byte, from string) (funcSpan, bool) {
	at := bytes.Index(src, []byte(from))
	if at < 0 {
		return funcSpan{}, false
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return funcSpan{}, false
	}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Name.Name == "_" {
			continue
		}
		open, end := fset.Position(fd.Body.Lbrace).Offset, fset.Position(fd.Body.Rbrace).Offset
		if at <= open || at+len(from) > end {
			continue
		}
		if asksCaller(fd.Body) || callsRecover(fd.Body) {
			return funcSpan{}, false
		}
		return funcSpan{decl: fd, fset: fset, file: f}, true
	}
	return funcSpan{}, false
}

// edit replaces src[at:at+del] by text.
type edit struct {
	at, del int
	text    string
}

// schemataSources rewrites the files the mutations touch (paths relative
// to root) and adds the file declaring mutantVar to each package they
// touch. It returns the new content by absolute path: a touched file's
// replacement or an added file.
func schemataSources(root string, muts []mutation) (map[string][]byte, error) {
	byFile := map[string][]mutation{}
	var files []string
	for _, m := range muts {
		if byFile[m.File] == nil {
			files = append(files, m.File)
		}
		byFile[m.File] = append(byFile[m.File], m)
	}
	sort.Strings(files)
	out := map[string][]byte{}
	// The package clause of each touched file, by directory: whether a
	// non-test file of it was touched (then the variable is declared in a
	// non-test file, which its internal tests see too).
	type pkgKey struct{ dir, name string }
	nonTest := map[pkgKey]bool{}
	var pkgs []pkgKey
	k := 0
	for _, file := range files {
		path := filepath.Join(root, file)
		src, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var edits []edit
		var copies []string
		dispatch := map[*ast.FuncDecl]*edit{}
		var name string
		for _, m := range byFile[file] {
			fn, ok := mutatedFunc(src, m.From)
			if !ok {
				return nil, fmt.Errorf("%s: %s: snippet not in one function body", m.ID, file)
			}
			name = fn.file.Name.Name
			// The same function parsed again each time: find the one
			// already edited by its position.
			var fd *ast.FuncDecl
			for d := range dispatch {
				if d.Pos() == fn.decl.Pos() {
					fd = d
				}
			}
			if fd == nil {
				fd = fn.decl
				_, hdr := header(fn.fset, fd)
				edits = append(edits, hdr...)
				dispatch[fd] = &edit{at: fn.fset.Position(fd.Body.Lbrace).Offset + 1}
			}
			copyName := fmt.Sprintf("zzm%d_%s", k, fd.Name.Name)
			k++
			names, _ := header(fn.fset, fd)
			call := callExpr(fd, copyName, names)
			line := fmt.Sprintf("\nif %s == %q { ", mutantVar, m.ID)
			if fd.Type.Results != nil && len(fd.Type.Results.List) > 0 {
				line += "return " + call + " }"
			} else {
				line += call + "; return }"
			}
			dispatch[fd].text += line
			start, end := fn.fset.Position(fd.Pos()).Offset, fn.fset.Position(fd.End()).Offset
			nameAt := fn.fset.Position(fd.Name.Pos()).Offset - start
			decl := string(src[start:end])
			decl = decl[:nameAt] + copyName + decl[nameAt+len(fd.Name.Name):]
			if strings.Count(decl, m.From) != 1 {
				return nil, fmt.Errorf("%s: %s: snippet not found once in its function", m.ID, file)
			}
			copies = append(copies, directives(fd)+strings.Replace(decl, m.From, m.To, 1))
		}
		for _, d := range dispatch {
			d.text += "\n"
			edits = append(edits, *d)
		}
		sort.SliceStable(edits, func(i, j int) bool { return edits[i].at > edits[j].at })
		b := append([]byte(nil), src...)
		for _, e := range edits {
			b = append(b[:e.at:e.at], append([]byte(e.text), b[e.at+e.del:]...)...)
		}
		for _, c := range copies {
			b = append(b, "\n\n"...)
			b = append(b, c...)
			b = append(b, '\n')
		}
		formatted, err := format.Source(b)
		if err != nil {
			return nil, fmt.Errorf("%s: the schemata do not parse: %v", file, err)
		}
		out[path] = formatted
		pk := pkgKey{filepath.Dir(path), name}
		if _, seen := nonTest[pk]; !seen {
			pkgs = append(pkgs, pk)
			nonTest[pk] = false
		}
		if !strings.HasSuffix(file, "_test.go") {
			nonTest[pk] = true
		}
	}
	for _, pk := range pkgs {
		// "_mutant" last: a name ending in the package's name would carry a
		// build constraint for a package named windows, amd64, ...
		base := "zz_schemata_" + pk.name + "_mutant"
		if !nonTest[pk] {
			base += "_test"
		}
		path := filepath.Join(pk.dir, base+".go")
		if _, err := os.Stat(path); err == nil {
			return nil, fmt.Errorf("%s exists", path)
		}
		out[path] = []byte(fmt.Sprintf(mutantFile, pk.name, mutantEnv))
	}
	return out, nil
}

// mutantFile declares mutantVar in package %[1]s: the environment's
// %[2]s, read at the first call, at the latest while the package's
// variables are initialized (so that a test clearing the environment does
// not switch the mutation off). The imports are renamed: a package may
// declare an "os" or "atomic" of its own.
const mutantFile = `package %[1]s

import (
	zzatomic "sync/atomic"
	zzsyscall "syscall"
)

var zzMutantID zzatomic.Value

var _ = zzMutant()

func zzMutant() string {
	if v, ok := zzMutantID.Load().(string); ok {
		return v
	}
	v, _ := zzsyscall.Getenv(%[2]q)
	zzMutantID.Store(v)
	return v
}
`

// asksCaller reports whether body calls X.Caller or X.Callers (runtime's,
// under whatever name it is imported): the copy would be told another
// function and line.
func asksCaller(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if _, ok := sel.X.(*ast.Ident); ok && (sel.Sel.Name == "Caller" || sel.Sel.Name == "Callers") {
				found = true
			}
		}
		return !found
	})
	return found
}

// callsRecover reports whether body calls recover() itself (not in a
// function literal): recover stops a panic only when called by the
// deferred function, so the dispatch's extra frame would make the copy's
// recover() return nil and let the panic through.
func callsRecover(body *ast.BlockStmt) bool {
	found := false
	ast.Inspect(body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && id.Name == "recover" {
				found = true
			}
		}
		return !found
	})
	return found
}

// keepsImportsUsed reports whether m, applied alone, leaves every import
// of its file used. One that removes an import's only use does not
// compile alone, but would in the schemata, where the unmutated function
// still uses it. Syntactic, by the parser's resolution of names within
// the file (which leaves package names unresolved): a name X of an X.Sel
// the file does not resolve that the mutated file no longer refers to.
// A dot import cannot be told, so its file runs alone.
func keepsImportsUsed(src []byte, m mutation) bool {
	mutated := bytes.Replace(src, []byte(m.From), []byte(m.To), 1)
	fset := token.NewFileSet()
	before, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		return false
	}
	after, err := parser.ParseFile(fset, "y.go", mutated, 0)
	if err != nil {
		return false
	}
	for _, im := range before.Imports {
		if im.Name != nil && im.Name.Name == "." {
			return false
		}
	}
	unresolved := map[*ast.Ident]bool{}
	for _, id := range before.Unresolved {
		unresolved[id] = true
	}
	bases := map[string]bool{}
	ast.Inspect(before, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && unresolved[id] {
				bases[id.Name] = true
			}
		}
		return true
	})
	still := map[string]bool{}
	for _, id := range after.Unresolved {
		still[id.Name] = true
	}
	for b := range bases {
		if !still[b] {
			return false
		}
	}
	return true
}

// setsGoEnv reports whether m's environment sets a variable of the go
// command (GOFLAGS, GOEXPERIMENT, CGO_ENABLED, ...): its own go test builds
// with it, the schemata binary is built without.
func setsGoEnv(m mutation) bool {
	for _, kv := range m.Env {
		if strings.HasPrefix(kv, "GO") || strings.HasPrefix(kv, "CGO_") {
			return true
		}
	}
	return false
}

// goTestFlags are the flags go test hands its test binary (-test.<name>),
// from GOFLAGS too (cmd/go/internal/test's passFlagToTest), and -json,
// which changes the output runPackage reads.
var goTestFlags = map[string]bool{
	"artifacts": true, "bench": true, "benchmem": true, "benchtime": true, "blockprofile": true,
	"blockprofilerate": true, "count": true, "coverprofile": true, "cpu": true, "cpuprofile": true,
	"failfast": true, "fullpath": true, "fuzz": true, "fuzzminimizetime": true, "fuzztime": true,
	"list": true, "memprofile": true, "memprofilerate": true, "mutexprofile": true,
	"mutexprofilefraction": true, "outputdir": true, "parallel": true, "run": true, "short": true,
	"shuffle": true, "skip": true, "timeout": true, "trace": true, "v": true, "json": true,
}

// goFlags is GOFLAGS as the go command sees it: the environment's, or
// its configuration file's (go env -w).
func goFlags() string {
	out, err := exec.Command("go", "env", "GOFLAGS").Output()
	if err != nil {
		return os.Getenv("GOFLAGS")
	}
	return strings.TrimSpace(string(out))
}

// goflagsTestFlags are the entries of goflags (GOFLAGS) that go test
// would hand a test binary: a schemata binary, run directly, would not
// get them.
func goflagsTestFlags(goflags string) []string {
	var found []string
	for _, f := range strings.Fields(goflags) {
		name := strings.TrimLeft(strings.Trim(f, `'"`), "-")
		name, _, _ = strings.Cut(name, "=")
		if goTestFlags[strings.TrimPrefix(name, "test.")] {
			found = append(found, f)
		}
	}
	return found
}

// directives are fd's compiler directives (//go:norace, //go:nosplit,
// ...), one a line, for its copy to be built as it is; not
// //go:linkname, which names one symbol.
func directives(fd *ast.FuncDecl) string {
	var b strings.Builder
	if fd.Doc != nil {
		for _, c := range fd.Doc.List {
			if strings.HasPrefix(c.Text, "//go:") && !strings.HasPrefix(c.Text, "//go:linkname") {
				b.WriteString(c.Text + "\n")
			}
		}
	}
	return b.String()
}

// fieldNames walks a receiver or parameter list: the name each field is
// passed on by, and the edits naming an unnamed or blank one
// (prefix<n>, n its index) so that the dispatch can pass it.
func fieldNames(fset *token.FileSet, fields *ast.FieldList, prefix string) ([]string, []edit) {
	var names []string
	var edits []edit
	if fields == nil {
		return nil, nil
	}
	for _, f := range fields.List {
		if len(f.Names) == 0 {
			name := fmt.Sprintf("%s%d", prefix, len(names))
			edits = append(edits, edit{at: fset.Position(f.Type.Pos()).Offset, text: name + " "})
			names = append(names, name)
			continue
		}
		for _, id := range f.Names {
			name := id.Name
			if name == "_" {
				name = fmt.Sprintf("%s%d", prefix, len(names))
				edits = append(edits, edit{at: fset.Position(id.Pos()).Offset, del: 1, text: name})
			}
			names = append(names, name)
		}
	}
	return names, edits
}

// header is fd's receiver name ("" for a function) followed by its
// parameters' names, and the edits that name them all.
func header(fset *token.FileSet, fd *ast.FuncDecl) ([]string, []edit) {
	recv, edits := fieldNames(fset, fd.Recv, "zzRecv")
	params, more := fieldNames(fset, fd.Type.Params, "zzP")
	names := []string{""}
	if len(recv) == 1 {
		names[0] = recv[0]
	}
	return append(names, params...), append(edits, more...)
}

// callExpr is the call of the copy named name with fd's receiver and
// parameters (names from header).
func callExpr(fd *ast.FuncDecl, name string, names []string) string {
	call := name
	if names[0] != "" {
		call = names[0] + "." + name
	}
	if tp := fd.Type.TypeParams; tp != nil && len(tp.List) > 0 {
		var ts []string
		for _, f := range tp.List {
			for _, id := range f.Names {
				ts = append(ts, id.Name)
			}
		}
		call += "[" + strings.Join(ts, ", ") + "]"
	}
	args := names[1:]
	if ps := fd.Type.Params.List; len(ps) > 0 && len(args) > 0 {
		if _, ok := ps[len(ps)-1].Type.(*ast.Ellipsis); ok {
			args = append(append([]string(nil), args[:len(args)-1]...), args[len(args)-1]+"...")
		}
	}
	return call + "(" + strings.Join(args, ", ") + ")"
}

// build writes the group's overlay and builds its test binary, once.
func (g *schemaGroup) build() error {
	g.buildOnce.Do(func() {
		g.bin, g.buildErr = g.buildUncached()
	})
	return g.buildErr
}

func (g *schemaGroup) buildUncached() (string, error) {
	srcs, err := schemataSources(g.root, g.members)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(g.dir, 0o755); err != nil {
		return "", err
	}
	replace := map[string]string{}
	var paths []string
	for p := range srcs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for k, p := range paths {
		copyPath := filepath.Join(g.dir, fmt.Sprintf("%d_%s", k, filepath.Base(p)))
		if err := os.WriteFile(copyPath, srcs[p], 0o644); err != nil {
			return "", err
		}
		replace[p] = copyPath
	}
	overlay, err := json.Marshal(map[string]any{"Replace": replace})
	if err != nil {
		return "", err
	}
	overlayFile := filepath.Join(g.dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		return "", err
	}
	bin := filepath.Join(g.dir, filepath.Base(g.pkg)+".test") // go test's name for it
	cmd := exec.Command("go", append([]string{"test", "-c", "-vet=off"}, append(buildFlags, "-o", bin, "-overlay", overlayFile, g.pkg)...)...)
	cmd.Dir = g.root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go test -c %s: %v\n%s", g.pkg, err, out)
	}
	if _, err := os.Stat(bin); err != nil {
		return "", fmt.Errorf("go test -c %s wrote no binary (no test files?)", g.pkg)
	}
	return bin, nil
}

// buildFlags are added to every go test that builds a mutation's binary.
var buildFlags = []string{"-ldflags=-w"}

// variant is what a mutation's run adds to the binary besides the ID:
// its environment and arguments. A baseline holds for one variant.
func variant(m mutation, su suite) string {
	b, err := json.Marshal([]any{m.Env, su.Args})
	if err != nil {
		return fmt.Sprint(m.Env, su.Args)
	}
	return string(b)
}

// ready builds the binary and runs the baseline of m's variant, once
// each; false sends m to runPackage.
func (g *schemaGroup) ready(m mutation, su suite) bool {
	if err := g.build(); err != nil {
		g.once("build", func() {
			fmt.Fprintf(os.Stderr, "mutate: %s: one binary for %d mutations does not build, each runs alone: %v\n", g.pkg, len(g.members), firstLine(err.Error()))
		})
		return false
	}
	v := variant(m, su)
	g.mu.Lock()
	b := g.baselines[v]
	if b == nil {
		b = &baseline{}
		g.baselines[v] = b
	}
	g.mu.Unlock()
	b.once.Do(func() {
		b.ok = true
		for _, run := range baselineRuns(g.members, v) {
			out, err := g.exec(m, su, "", run, "")
			if err != nil {
				b.ok = false
				fmt.Printf("%s: the unmutated schemata binary fails its tests (%s); its mutations run alone\n", g.pkg, strings.Join(failingTests(out), " "))
				return
			}
		}
	})
	return b.ok
}

// baselineRuns are the -test.run patterns that together run every test
// the members of variant v select: their union in one pattern ("" for all
// tests when one selects all), and apart each pattern naming subtests
// (a '/' splits a pattern by level, which an alternation cannot join).
func baselineRuns(members []mutation, v string) []string {
	var union, apart []string
	for _, o := range members {
		osu, _ := schemaSuite(o)
		if variant(o, osu) != v {
			continue
		}
		switch {
		case osu.Run == "":
			return []string{""}
		case strings.Contains(osu.Run, "/"):
			if !slices.Contains(apart, osu.Run) {
				apart = append(apart, osu.Run)
			}
		default:
			union = append(union, "(?:"+osu.Run+")")
		}
	}
	if len(union) > 0 {
		apart = append([]string{strings.Join(union, "|")}, apart...)
	}
	return apart
}

// once prints a group's message once.
func (g *schemaGroup) once(what string, f func()) {
	g.mu.Lock()
	b := g.baselines["\x00"+what]
	if b == nil {
		b = &baseline{}
		g.baselines["\x00"+what] = b
	}
	g.mu.Unlock()
	b.once.Do(f)
}

// testTimeout is go test's default -timeout, which runPackage keeps.
const testTimeout = 10 * time.Minute

// exec runs the group's binary as go test would (command).
func (g *schemaGroup) exec(m mutation, su suite, id, run, logFile string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout+time.Minute)
	defer cancel()
	return g.command(ctx, m, su, id, run, logFile).CombinedOutput()
}

// command is the group's binary run as go test runs a test binary: in the
// package's directory, with the tests matching run, m's environment with
// $GOROOT/bin first in PATH and mutantEnv=id (none when id is ""); killed
// a minute after its own timeout (ctx), and its output pipes closed a
// minute after it exits, so that a process it started and left running
// (holding them) does not hang the run.
func (g *schemaGroup) command(ctx context.Context, m mutation, su suite, id, run, logFile string) *exec.Cmd {
	args := []string{"-test.paniconexit0", "-test.timeout=" + testTimeout.String()}
	if run != "" {
		args = append(args, "-test.run="+run)
	}
	args = append(args, su.Args...)
	if logFile != "" {
		args = append(args, "-test.testlogfile="+logFile)
	}
	cmd := exec.CommandContext(ctx, g.bin, args...)
	cmd.Dir = g.pkgDir
	cmd.WaitDelay = testTimeout / 10
	var env []string
	path := ""
	for _, kv := range testEnv(m) {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = p
		}
		if !strings.HasPrefix(kv, mutantEnv+"=") && !strings.HasPrefix(kv, "PWD=") {
			env = append(env, kv)
		}
	}
	if bin := goRootBin(); bin != "" {
		if path != "" {
			bin += string(os.PathListSeparator) + path
		}
		env = append(env, "PATH="+bin)
	}
	env = append(env, "PWD="+g.pkgDir)
	if id != "" {
		env = append(env, mutantEnv+"="+id)
	}
	cmd.Env = env
	return cmd
}

// goRootBin is $GOROOT/bin, which go test puts first in a test binary's
// PATH; "" if go env fails.
var goRootBin = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil || strings.TrimSpace(string(out)) == "" {
		return ""
	}
	return filepath.Join(strings.TrimSpace(string(out)), "bin")
})

// run judges m with the group's binary, as runPackage judges go test's
// output.
func (g *schemaGroup) run(m mutation, su suite, logFile string) (string, string) {
	out, err := g.exec(m, su, m.ID, su.Run, logFile)
	if err == nil {
		return "SURVIVED", "tests pass with the mutation"
	}
	failed := failingTests(out)
	if len(failed) == 0 {
		return "BROKEN", "the test binary failed without a failing test:\n" + string(out)
	}
	return "CAUGHT", strings.Join(failed, " ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
