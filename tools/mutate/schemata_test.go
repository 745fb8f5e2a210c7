package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A small module whose functions cover what the schemata transform must
// handle; each function has its own test, which fails on its mutation.
var schemaModule = map[string]string{
	"go.mod": "module example.com/sch\n\ngo 1.22\n",
	"lib.go": `package sch

func Add(a, b int) int { return a + b }

type T struct{ n int }

func (T) Get(_ int, _ string) int { return 41 + 1 }

func Sum(base int, xs ...int) int {
	s := base
	for _, x := range xs {
		s += x
	}
	return s
}

func Max[N int | float64](a, b N) N {
	if a > b {
		return a
	}
	return b
}

type Box[V any] struct{ v V }

func (b *Box[V]) Set(v V) { b.v = v }

var Log []string

func Note(s string) { Log = append(Log, "note:"+s) }

var Inited string

func init() { Inited = "yes" }

func Two(x int) int {
	if x > 0 {
		return x * 2
	}
	return -x * 3
}

var Outside = 7
`,
	"lib_test.go": `package sch

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("Add")
	}
}

func TestGet(t *testing.T) {
	if (T{}).Get(0, "") != 42 {
		t.Fatal("Get")
	}
}

func TestSum(t *testing.T) {
	if Sum(1, 2, 3) != 6 {
		t.Fatal("Sum")
	}
}

func TestMax(t *testing.T) {
	if Max(2, 3) != 3 || Max(2.5, 1.5) != 2.5 {
		t.Fatal("Max")
	}
}

func TestSet(t *testing.T) {
	var b Box[string]
	b.Set("x")
	if b.v != "x" {
		t.Fatal("Set")
	}
}

func TestNote(t *testing.T) {
	Log = nil
	Note("a")
	if len(Log) != 1 || Log[0] != "note:a" {
		t.Fatal("Note")
	}
}

func TestInit(t *testing.T) {
	if Inited != "yes" {
		t.Fatal("init")
	}
}

func TestTwoPositive(t *testing.T) {
	if Two(2) != 4 {
		t.Fatal("Two positive")
	}
}

func TestTwoNegative(t *testing.T) {
	if Two(-2) != 6 {
		t.Fatal("Two negative")
	}
}
`,
}

// The mutations of schemaModule, and the one test each must fail.
var schemaMutations = []struct {
	m    mutation
	test string
}{
	{mutation{ID: "add", File: "lib.go", From: "return a + b", To: "return a - b"}, "TestAdd"},
	{mutation{ID: "get-unnamed-receiver", File: "lib.go", From: "return 41 + 1", To: "return 41"}, "TestGet"},
	{mutation{ID: "sum-variadic", File: "lib.go", From: "s += x", To: "s -= x"}, "TestSum"},
	{mutation{ID: "max-generic", File: "lib.go", From: "if a > b {", To: "if a < b {"}, "TestMax"},
	{mutation{ID: "set-generic-method", File: "lib.go", From: "b.v = v", To: "_ = v"}, "TestSet"},
	{mutation{ID: "note-no-results", File: "lib.go", From: `"note:"+s`, To: `"x:"+s`}, "TestNote"},
	{mutation{ID: "init", File: "lib.go", From: `Inited = "yes"`, To: `Inited = "no"`}, "TestInit"},
	{mutation{ID: "two-positive", File: "lib.go", From: "return x * 2", To: "return x * 4"}, "TestTwoPositive"},
	{mutation{ID: "two-negative", File: "lib.go", From: "return -x * 3", To: "return -x * 5"}, "TestTwoNegative"},
}

func writeModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func schemaMembers() []mutation {
	var ms []mutation
	for _, sm := range schemaMutations {
		m := sm.m
		m.Package = "."
		ms = append(ms, m)
	}
	outside := mutation{ID: "outside", File: "lib.go", From: "Outside = 7", To: "Outside = 8", Package: "."}
	return append(ms, outside)
}

// Every mutation inside a function body is grouped, the one outside is
// not; the group's binary, built once, fails exactly the test of the
// mutation MESH_MUTANT names, and with it unset passes (the baseline).
func TestSchemataDispatchSelectsExactlyTheMutation(t *testing.T) {
	dir := writeModule(t, schemaModule)
	cache := newResultCache(dir, "")
	sc := newSchemata(cache, t.TempDir(), schemaMembers())
	if g := sc.groupOf(mutation{ID: "outside"}); g != nil {
		t.Errorf("a snippet outside any function body was grouped")
	}
	var g *schemaGroup
	for _, sm := range schemaMutations {
		got := sc.groupOf(sm.m)
		if got == nil {
			t.Fatalf("%s: not grouped", sm.m.ID)
		}
		if g != nil && got != g {
			t.Fatalf("%s: in another group than the rest of its package", sm.m.ID)
		}
		g = got
	}
	su := suite{Package: "."}
	if !g.ready(schemaMutations[0].m, su) {
		t.Fatalf("the group did not build or its baseline failed: %v", g.buildErr)
	}
	if out, err := g.exec(mutation{}, su, "", "", ""); err != nil {
		t.Fatalf("MESH_MUTANT unset: tests fail:\n%s", out)
	}
	for _, sm := range schemaMutations {
		result, detail := g.run(sm.m, su, filepath.Join(t.TempDir(), "log"))
		if result != "CAUGHT" || detail != sm.test {
			t.Errorf("%s: %s %q, want CAUGHT by %s alone", sm.m.ID, result, detail, sm.test)
		}
	}
}

// A group whose unmutated binary fails its tests is not used: its
// mutations run alone (runPackage), so a bug of the transform, or a test
// failing anyway, never makes a mutation look CAUGHT.
func TestSchemataFailingBaselineFallsBack(t *testing.T) {
	files := map[string]string{}
	for k, v := range schemaModule {
		files[k] = v
	}
	files["lib_test.go"] = strings.Replace(files["lib_test.go"], `if Add(2, 3) != 5 {`, `if Add(2, 3) != 6 {`, 1)
	dir := writeModule(t, files)
	sc := newSchemata(newResultCache(dir, ""), t.TempDir(), schemaMembers())
	m := schemaMutations[1].m
	g := sc.groupOf(m)
	if g == nil {
		t.Fatal("not grouped")
	}
	if g.ready(m, suite{Package: "."}) {
		t.Fatal("the group is used although its unmutated tests fail")
	}
}

// A function asking runtime.Caller where it is, and a snippet that is not
// between a body's braces, stay out of the schemata.
func TestSchemataLeavesOut(t *testing.T) {
	src := []byte(`package p

import "runtime"

func Where() int {
	_, _, line, _ := runtime.Caller(0)
	return line + 1
}

func Sig(a int) int { return a }
`)
	for _, from := range []string{"return line + 1", "Sig(a int)", "package p"} {
		if _, ok := mutatedFunc(src, from); ok {
			t.Errorf("%q: grouped", from)
		}
	}
	if _, ok := mutatedFunc(src, "return a }"); ok {
		t.Errorf("a snippet reaching past the closing brace is grouped")
	}
	if _, ok := mutatedFunc(src, "return a "); !ok {
		t.Errorf("a snippet inside Sig's body is not grouped")
	}
	// recover() stops a panic only called by the deferred function
	// itself: in a function literal the copy defers, it still does.
	src = []byte(`package p

func guard(err *error) {
	if r := recover(); r != nil {
		*err = nil
	}
}

func closure() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = nil
		}
	}()
	return nil
}
`)
	// runtime imported under another name is asked all the same.
	aliased := []byte(`package p

import rt "runtime"

func Name() string {
	pc, _, _, _ := rt.Caller(0)
	return rt.FuncForPC(pc).Name()
}
`)
	if _, ok := mutatedFunc(aliased, "return rt.FuncForPC(pc).Name()"); ok {
		t.Errorf("a function asking an aliased runtime.Caller where it is is grouped")
	}
	if _, ok := mutatedFunc(src, "*err = nil"); ok {
		t.Errorf("a function calling recover() itself is grouped")
	}
	if _, ok := mutatedFunc(src, "return nil"); !ok {
		t.Errorf("a function calling recover() in a deferred function literal is not grouped")
	}
}

// The baseline runs every test a member selects: patterns joined in one
// alternation, those naming subtests apart, and everything when one
// member selects everything.
func TestSchemataBaselineRuns(t *testing.T) {
	ms := []mutation{{ID: "a", Run: "TestA"}, {ID: "b", Run: "TestB/sub"}, {ID: "c", Run: "TestC$"}, {ID: "d", Run: "TestD", Env: []string{"X=1"}}}
	v := variant(ms[0], suite{})
	got := baselineRuns(ms, v)
	want := []string{"(?:TestA)|(?:TestC$)", "TestB/sub"}
	if !slices.Equal(got, want) {
		t.Errorf("baselineRuns = %q, want %q", got, want)
	}
	ms = append(ms, mutation{ID: "e"})
	if got := baselineRuns(ms, v); !slices.Equal(got, []string{""}) {
		t.Errorf("with a member selecting every test: %q, want [\"\"]", got)
	}
}

// wantBoth judges m on the module in dir alone (runPackage, one go test
// -overlay) and through the schemata, wants the verdict want both ways,
// and says whether the schemata grouped it.
func wantBoth(t *testing.T, dir string, m mutation, want string) bool {
	t.Helper()
	cache := newResultCache(dir, "")
	alone, aloneDetail := run(cache, nil, nil, filepath.Join(t.TempDir(), "alone"), m)
	sc := newSchemata(cache, t.TempDir(), []mutation{m})
	grouped, groupedDetail := run(cache, sc, nil, filepath.Join(t.TempDir(), "grouped"), m)
	if alone != want || grouped != want {
		t.Errorf("%s (Env %q): alone %s %s; schemata %s %s; want %s both", m.ID, m.Env, alone, firstLine(aloneDetail), grouped, firstLine(groupedDetail), want)
	}
	return sc.groupOf(m) != nil
}

// A function that recovers a panic for its caller only recovers when it
// is the deferred function itself: the dispatch would make the copy's
// recover() a call one frame too deep, return nil, and let the panic fail
// the test. A mutation no test sees must not look CAUGHT that way.
func TestSchemataRecoverInTheMutatedFunction(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod": "module example.com/rec\n\ngo 1.22\n",
		"rec.go": `package rec

import "fmt"

func guard(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("recovered: %v", r)
	}
}

func Risky() (err error) {
	defer guard(&err)
	panic("boom")
}
`,
		"rec_test.go": `package rec

import "testing"

func TestRisky(t *testing.T) {
	if Risky() == nil {
		t.Fatal("no error")
	}
}
`,
	})
	m := mutation{ID: "rec/message", File: "rec.go", From: `"recovered: %v"`, To: `"caught: %v"`, Package: "."}
	wantBoth(t, dir, m, "SURVIVED")
}

// A mutation that removes an import's only use does not compile alone
// (BROKEN); in the schemata the unmutated original still uses the import,
// so it must not be judged there as CAUGHT.
func TestSchemataImportOnlyUseRemoved(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod": "module example.com/imp\n\ngo 1.22\n",
		"imp.go": `package imp

import "strings"

func Up(s string) string { return strings.ToUpper(s) }
`,
		"imp_test.go": `package imp

import "testing"

func TestUp(t *testing.T) {
	if Up("a") != "A" {
		t.Fatal("Up")
	}
}
`,
	})
	m := mutation{ID: "imp/identity", File: "imp.go", From: "return strings.ToUpper(s)", To: "return s", Package: "."}
	wantBoth(t, dir, m, "BROKEN")
	// The import's name still in the file, but as a local variable's.
	src, err := os.ReadFile(filepath.Join(dir, "imp.go"))
	if err != nil {
		t.Fatal(err)
	}
	src = append(src, "\nfunc Count(strings []string) int { return len(strings) }\n"...)
	if err := os.WriteFile(filepath.Join(dir, "imp.go"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	wantBoth(t, dir, m, "BROKEN")
}

// go test hands the test flags in GOFLAGS (-short, -run, -skip, ...) to
// the test binary; a schemata binary run without them runs other tests.
func TestSchemataGOFLAGSTestFlags(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod": "module example.com/short\n\ngo 1.22\n",
		"short.go": `package short

func Double(n int) int { return n * 2 }
`,
		"short_test.go": `package short

import "testing"

func TestDoubleLong(t *testing.T) {
	if testing.Short() {
		t.Skip("fixture: skipped only under -short, the flag this case passes through GOFLAGS")
	}
	if Double(2) != 4 {
		t.Fatal("Double")
	}
}
`,
	})
	goflags := strings.TrimSpace(os.Getenv("GOFLAGS") + " -short")
	// In a mutation's environment: its go test builds and runs with it.
	m := mutation{ID: "short/triple", File: "short.go", From: "n * 2", To: "n * 3", Package: ".", Env: []string{"GOFLAGS=" + goflags}}
	wantBoth(t, dir, m, "SURVIVED")
	// In the go command's configuration file (go env -w).
	goenv := filepath.Join(t.TempDir(), "go.env")
	if err := os.WriteFile(goenv, []byte("GOFLAGS="+goflags+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOENV", goenv)
	t.Setenv("GOFLAGS", "")
	m.Env = nil
	wantBoth(t, dir, m, "SURVIVED")
	// In the environment mutate runs in.
	t.Setenv("GOENV", "off")
	t.Setenv("GOFLAGS", goflags)
	wantBoth(t, dir, m, "SURVIVED")
}

// Package variables are initialized in dependency order, but a call
// through an interface is not a dependency the compiler sees: a variable
// whose initializer reaches the mutated function that way must still find
// the mutation selected.
func TestSchemataMutatedDuringVariableInit(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod": "module example.com/ini\n\ngo 1.22\n",
		"ini.go": `package ini

type namer interface{ Name() string }

type kind struct{}

func (kind) Name() string { return "kind" }

var which namer = kind{}

var Registered = which.Name()
`,
		"ini_test.go": `package ini

import "testing"

func TestRegistered(t *testing.T) {
	if Registered != "kind" {
		t.Fatal(Registered)
	}
}
`,
	})
	m := mutation{ID: "ini/name", File: "ini.go", From: `return "kind"`, To: `return "other"`, Package: "."}
	if !wantBoth(t, dir, m, "CAUGHT") {
		t.Error("not grouped")
	}
}

// Odd constructs a mutation author may reach, all in one group: each
// mutation gets the verdict it gets alone (a test clearing the
// environment too: MESH_MUTANT is read before the tests run).
func TestSchemataVerdictsMatchAlone(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod": "module example.com/odd\n\ngo 1.22\n",
		"odd.go": `package odd

import (
	"errors"
	"reflect"
)

// Named results changed by a deferred closure.
func Named(fail bool) (n int, err error) {
	defer func() {
		if err != nil {
			n = -1
		}
	}()
	if fail {
		return 5, errors.New("x")
	}
	return 5, nil
}

type Shape interface{ Area() int }

type Sq struct{ s int }

// Called through an interface and as a method value.
func (q Sq) Area() int { return q.s * q.s }

func NewSq(s int) Sq { return Sq{s} }

func Apply(f func() int) int { return f() }

//go:noinline
func Directive(a, b int) int { return a - b }

func Handler() string { return "h" }

// A function value compared by its code pointer.
func IsHandler(f func() string) bool {
	return reflect.ValueOf(f).Pointer() == reflect.ValueOf(Handler).Pointer()
}

// Two mutations in one function, their snippets overlapping.
func Both(a, b int) int {
	return a*10 + b
}

func Panics(n int) int {
	if n < 0 {
		panic("negative")
	}
	return n
}

// No test looks at it: its mutation survives either way.
func Unseen() int { return 1 }

// Called by a test that cleared the environment first.
func Cleared() int { return 7 }
`,
		"odd_test.go": `package odd

import (
	"os"
	"strings"
	"testing"
)

func helper(t *testing.T, got, want int) {
	t.Helper()
	if got != want {
		t.Fatalf("got %d, want %d", got, want)
	}
}

func TestNamed(t *testing.T) {
	n, err := Named(true)
	helper(t, n, -1)
	if err == nil {
		t.Fatal("no error")
	}
}

func TestShape(t *testing.T) {
	var s Shape = Sq{3}
	helper(t, s.Area(), 9)
	helper(t, Apply(Sq{2}.Area), 4)
}

func TestDirective(t *testing.T) { helper(t, Directive(5, 2), 3) }

func TestHandler(t *testing.T) {
	if !IsHandler(Handler) {
		t.Fatal("Handler is not itself")
	}
}

func TestBoth(t *testing.T) { helper(t, Both(1, 2), 12) }

func TestPanics(t *testing.T) { helper(t, Panics(2), 2) }

func TestClearedEnvironment(t *testing.T) {
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	os.Clearenv()
	helper(t, Cleared(), 7)
}

func TestName(t *testing.T) {
	if t.Name() != "TestName" {
		t.Fatal(t.Name())
	}
}
`,
		"ext_test.go": `package odd_test

import (
	"testing"

	"example.com/odd"
)

func area(s odd.Shape) int { return s.Area() }

func TestExternal(t *testing.T) {
	if area(odd.NewSq(4)) != 16 {
		t.Fatal("area")
	}
}
`,
	})
	ms := []mutation{
		{ID: "named-defer", File: "odd.go", From: "n = -1", To: "n = -2"},
		{ID: "interface-method", File: "odd.go", From: "return q.s * q.s", To: "return q.s + q.s"},
		{ID: "directive", File: "odd.go", From: "return a - b", To: "return b - a"},
		{ID: "compared", File: "odd.go", From: "== reflect.ValueOf(Handler)", To: "!= reflect.ValueOf(Handler)"},
		{ID: "both-1", File: "odd.go", From: "a*10 + b", To: "a*10 - b"},
		{ID: "both-2", File: "odd.go", From: "return a*10", To: "return a*11"},
		{ID: "panics", File: "odd.go", From: "if n < 0 {", To: "if n > 0 {"},
		{ID: "unseen", File: "odd.go", From: "return 1", To: "return 2"},
		{ID: "cleared-environment", File: "odd.go", From: "return 7", To: "return 8", Run: "TestClearedEnvironment"},
		{ID: "test-helper", File: "odd_test.go", From: "if got != want {", To: "if got == want {"},
		{ID: "test-name", File: "odd_test.go", From: `!= "TestName"`, To: `== "TestName"`},
		{ID: "external-helper", File: "ext_test.go", From: "return s.Area()", To: "return s.Area() + 1"},
	}
	for k := range ms {
		ms[k].Package = "."
	}
	cache := newResultCache(dir, "")
	sc := newSchemata(cache, t.TempDir(), ms)
	for _, m := range ms {
		if sc.groupOf(m) == nil {
			t.Errorf("%s: not grouped", m.ID)
		}
	}
	for _, m := range ms {
		alone, aloneDetail := run(cache, nil, nil, filepath.Join(t.TempDir(), "alone"), m)
		grouped, groupedDetail := run(cache, sc, nil, filepath.Join(t.TempDir(), "grouped"), m)
		if alone != grouped || alone == "CAUGHT" && aloneDetail != groupedDetail {
			t.Errorf("%s: alone %s %q, schemata %s %q", m.ID, alone, firstLine(aloneDetail), grouped, firstLine(groupedDetail))
		}
		if want := map[bool]string{true: "SURVIVED", false: "CAUGHT"}[m.ID == "unseen"]; grouped != want {
			t.Errorf("%s: %s, want %s", m.ID, grouped, want)
		}
	}
}

// The group's binary runs as go test runs a test binary: named
// <package>.test, in the package's directory, $GOROOT/bin first in PATH,
// the MESH_MUTANT of the runner's environment replaced, killed a minute
// after its timeout and its output no longer waited for a minute after it
// exits (a process it left running holds the pipe).
func TestSchemataRunsLikeGoTest(t *testing.T) {
	t.Setenv(mutantEnv, "left-over")
	dir := writeModule(t, schemaModule)
	sc := newSchemata(newResultCache(dir, ""), t.TempDir(), schemaMembers())
	m := schemaMutations[0].m
	g := sc.groupOf(m)
	if g == nil {
		t.Fatal("not grouped")
	}
	if err := g.build(); err != nil {
		t.Fatal(err)
	}
	m.Env = []string{"PATH=/nowhere"}
	cmd := g.command(context.Background(), m, suite{Package: "."}, m.ID, "", "")
	if got := filepath.Base(cmd.Path); got != "sch.test" {
		t.Errorf("binary %s, want sch.test", got)
	}
	if cmd.Dir != g.pkgDir {
		t.Errorf("runs in %s, want %s", cmd.Dir, g.pkgDir)
	}
	if cmd.WaitDelay != time.Minute || cmd.Cancel == nil {
		t.Errorf("WaitDelay %v, Cancel set %v: want a minute, and killed when its context ends", cmd.WaitDelay, cmd.Cancel != nil)
	}
	if !slices.Contains(cmd.Args, "-test.timeout=10m0s") {
		t.Errorf("args %q lack go test's -test.timeout=10m0s", cmd.Args)
	}
	last := map[string]string{}
	n := 0
	for _, kv := range cmd.Env {
		k, v, _ := strings.Cut(kv, "=")
		last[k] = v
		if k == mutantEnv {
			n++
		}
	}
	if want := goRootBin() + string(os.PathListSeparator) + "/nowhere"; goRootBin() == "" || last["PATH"] != want {
		t.Errorf("PATH %q, want %q", last["PATH"], want)
	}
	if n != 1 || last[mutantEnv] != m.ID {
		t.Errorf("%s set %d times, last %q; want once, %q", mutantEnv, n, last[mutantEnv], m.ID)
	}
}

// The file declaring zzMutant() is named so that no build constraint
// drops it: in a package named like an operating system (or "test"), a
// name ending "_<package>.go" would be left out of the build, and the
// group would fall back for nothing.
func TestSchemataVariableFileBuildsUnderAnyPackageName(t *testing.T) {
	for _, name := range []string{"windows", "test"} {
		dir := writeModule(t, map[string]string{
			"go.mod":      "module example.com/" + name + "\n\ngo 1.22\n",
			"lib.go":      "package " + name + "\n\nfunc One() int { return 1 }\n",
			"lib_test.go": "package " + name + "\n\nimport \"testing\"\n\nfunc TestOne(t *testing.T) {\n\tif One() != 1 {\n\t\tt.Fatal(\"One\")\n\t}\n}\n",
		})
		m := mutation{ID: name + "/two", File: "lib.go", From: "return 1", To: "return 2", Package: "."}
		g := newSchemata(newResultCache(dir, ""), t.TempDir(), []mutation{m}).groupOf(m)
		if g == nil {
			t.Fatalf("package %s: not grouped", name)
		}
		if !g.ready(m, suite{Package: "."}) {
			t.Errorf("package %s: the group does not build: %v", name, g.buildErr)
		}
	}
}

// A copy keeps its function's compiler directives (//go:norace,
// //go:nosplit, //go:noinline, ...): without them a copy could be built
// otherwise than the function it stands for (race-instrumented where the
// original is not). //go:linkname stays with the original alone.
func TestSchemataCopyKeepsDirectives(t *testing.T) {
	dir := writeModule(t, map[string]string{
		"go.mod": "module example.com/dir\n\ngo 1.22\n",
		"dir.go": `package dir

// Shared is read without a lock.
//
//go:norace
//go:noinline
func Shared(a int) int {
	return a + 1
}
`,
	})
	m := mutation{ID: "dir/norace", File: "dir.go", From: "return a + 1", To: "return a + 2", Package: "."}
	out, err := schemataSources(dir, []mutation{m})
	if err != nil {
		t.Fatal(err)
	}
	got := string(out[filepath.Join(dir, "dir.go")])
	if !strings.Contains(got, "//go:norace\n//go:noinline\nfunc zzm0_Shared(") {
		t.Errorf("the copy lost its directives:\n%s", got)
	}
}
