package main

// The result cache: a mutation CAUGHT once is not run again while nothing
// its tests depend on has changed. This is the go command's own test cache
// (cmd/go/internal/test) applied to a failing run, which the go command
// never caches:
//
//   - the build key hashes the mutation (file, snippet, replacement,
//     packages, -run, environment, arguments), the Go version and
//     platform, and every file of every package the test binaries are
//     built from (go list -deps -test): the repository's own packages by
//     content, other modules by version;
//   - the test binaries run with -test.testlogfile, the log in which the
//     testing package records every file a test opened or stat'ed and
//     every environment variable it read; the entry keeps a hash of each,
//     and a lookup is a hit only when every one is unchanged.
//
// What the log cannot see is what a test's child processes read: a test
// that starts Terraform, the local mesh or the go command. A mutation with
// TF_ACC=1, and any run whose log shows a program looked up in PATH, is
// also keyed on the content of every file git tracks in the repository,
// and on the programs it looked up (their content). Paths under the
// system's temporary directory are left out: they are the tests' own
// scratch space (and the mutated copy, whose content the key already
// holds). Only CAUGHT is cached; every other outcome runs again.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
)

// resultCache holds CAUGHT outcomes on disk, one file per build key.
type resultCache struct {
	dir  string // "" disables the cache
	root string

	mu     sync.Mutex
	lists  map[string]listing // go list -deps -test, per module dir and package
	hashes map[string]string  // content hashes of the files read so far in this run
	tree   string             // hash of every tracked file, computed once
}

type listing struct {
	key  string   // hash of the build inputs
	pkgs []string // the import paths the pattern names, each tested alone
	dirs []string // their directories, in the same order
	err  error
}

// entry is one cached outcome.
type entry struct {
	Detail string  `json:"detail"`
	Inputs []input `json:"inputs"`
}

// input is one thing a test read: a file's content, a directory's names, a
// stat, an environment variable, or the tracked tree.
type input struct {
	Op   string `json:"op"` // open, stat, getenv, tree
	Name string `json:"name"`
	Hash string `json:"hash"`
}

func newResultCache(root, dir string) *resultCache {
	return &resultCache{dir: dir, root: root, lists: map[string]listing{}, hashes: map[string]string{}}
}

// defaultCacheDir is where the results live between runs: beside the
// local mesh's binaries, which CI keeps as it keeps Go's build cache.
func defaultCacheDir() string {
	if d := os.Getenv("MUTATE_CACHE"); d != "" {
		return d
	}
	base, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(base, "terraform-provider-mesh", "mutate")
}

// list expands a suite's package pattern and hashes what its test
// binaries are built from.
func (c *resultCache) list(su suite) listing {
	k := su.Dir + "\x00" + su.Package
	c.mu.Lock()
	l, ok := c.lists[k]
	c.mu.Unlock()
	if ok {
		return l
	}
	l = c.listUncached(su)
	c.mu.Lock()
	c.lists[k] = l
	c.mu.Unlock()
	return l
}

type listedPackage struct {
	ImportPath, Dir string
	Standard        bool
	ForTest         string
	Module          *struct {
		Path, Version, Dir string
		Replace            *struct{ Path, Version, Dir string }
	}
	GoFiles, CgoFiles, CFiles, HFiles, SFiles, TestGoFiles, XTestGoFiles, EmbedFiles []string
}

func (c *resultCache) listUncached(su suite) listing {
	dir := filepath.Join(c.root, su.Dir)
	named, err := goList(dir, "-f", "{{.ImportPath}}\t{{.Dir}}", su.Package)
	if err != nil {
		return listing{err: err}
	}
	var l listing
	for _, line := range strings.Split(strings.TrimSpace(string(named)), "\n") {
		path, pdir, _ := strings.Cut(line, "\t")
		l.pkgs = append(l.pkgs, path)
		l.dirs = append(l.dirs, pdir)
	}
	out, err := goList(dir, "-deps", "-test", "-json", su.Package)
	if err != nil {
		return listing{err: err}
	}
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum"} {
		fmt.Fprintf(h, "%s %s\n", f, c.fileHash(filepath.Join(dir, f)))
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return listing{err: err}
		}
		fmt.Fprintf(h, "pkg %s %s\n", p.ImportPath, p.ForTest)
		switch {
		case p.Standard:
		case p.Module != nil && !inside(c.root, p.Dir):
			mod := p.Module
			fmt.Fprintf(h, "mod %s@%s\n", mod.Path, mod.Version)
			if mod.Replace != nil {
				fmt.Fprintf(h, "replace %s@%s %s\n", mod.Replace.Path, mod.Replace.Version, mod.Replace.Dir)
			}
		default:
			for _, files := range [][]string{p.GoFiles, p.CgoFiles, p.CFiles, p.HFiles, p.SFiles, p.TestGoFiles, p.XTestGoFiles, p.EmbedFiles} {
				for _, f := range files {
					fmt.Fprintf(h, "file %s %s\n", f, c.fileHash(filepath.Join(p.Dir, f)))
				}
			}
		}
	}
	l.key = hex.EncodeToString(h.Sum(nil))
	return l
}

func goList(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list %s in %s: %v: %s", strings.Join(args, " "), dir, err, stderr.String())
	}
	return out, nil
}

// key is the build key of a mutation: what it changes, how its tests run
// and what they are built from. ok is false when a package list failed
// (the mutation then runs, uncached).
func (c *resultCache) key(m mutation, suites []suite) (string, bool) {
	h := sha256.New()
	def, err := json.Marshal(m)
	if err != nil {
		return "", false
	}
	h.Write(def)
	// The mutated file as it is now: a Go file is also among the build
	// inputs, a file the go command does not read (the GNUmakefile) only here.
	fmt.Fprintf(h, "\nmutated %s\n%s\n", c.fileHash(filepath.Join(c.root, m.File)), goEnvironment())
	for _, su := range suites {
		l := c.list(su)
		if l.err != nil {
			return "", false
		}
		fmt.Fprintf(h, "suite %s %s %s %q %s\n", su.Dir, su.Package, su.Run, su.Args, l.key)
		if su.Dir == istioModule {
			// The prebuilt test binary runs the translating program
			// (istio.go), built from the provider's module.
			t := c.list(suite{Package: translatorPkg})
			if t.err != nil {
				return "", false
			}
			fmt.Fprintf(h, "translator %s\n", t.key)
		}
	}
	return hex.EncodeToString(h.Sum(nil)), true
}

var goEnvOnce = sync.OnceValue(func() string {
	out, err := exec.Command("go", "env", "GOVERSION", "GOOS", "GOARCH", "CGO_ENABLED", "GOFLAGS", "GOEXPERIMENT").Output()
	if err != nil {
		return "go env failed: " + err.Error()
	}
	return string(out)
})

func goEnvironment() string { return goEnvOnce() }

// lookup returns the cached detail of a CAUGHT run whose inputs are all
// unchanged.
func (c *resultCache) lookup(key string) (string, bool) {
	if c.dir == "" || key == "" {
		return "", false
	}
	b, err := os.ReadFile(filepath.Join(c.dir, key+".json"))
	if err != nil {
		return "", false
	}
	var e entry
	if json.Unmarshal(b, &e) != nil {
		return "", false
	}
	for _, in := range e.Inputs {
		if c.inputHash(in.Op, c.local(in.Name)) != in.Hash {
			return "", false
		}
	}
	return e.Detail, true
}

// store records a CAUGHT run, its inputs read from the test logs. A log
// that is missing or cut short (a test binary that exited before the
// testing package flushed it) leaves the run uncached.
func (c *resultCache) store(key, detail string, logs []testLog, tree bool) error {
	if c.dir == "" || key == "" {
		return nil
	}
	seen := map[string]bool{}
	var inputs []input
	add := func(op, name string) {
		if seen[op+" "+name] {
			return
		}
		seen[op+" "+name] = true
		inputs = append(inputs, input{Op: op, Name: c.portable(op, name), Hash: c.inputHash(op, name)})
	}
	for _, l := range logs {
		ops, lookedUp, err := readTestLog(l.path, l.dir)
		if err != nil {
			return nil // not cacheable, not an error of the mutation
		}
		tree = tree || lookedUp
		for _, o := range ops {
			add(o[0], o[1])
		}
	}
	if tree {
		add("tree", "")
	}
	sort.Slice(inputs, func(i, j int) bool {
		return inputs[i].Op+inputs[i].Name < inputs[j].Op+inputs[j].Name
	})
	b, err := json.MarshalIndent(entry{Detail: detail, Inputs: inputs}, "", " ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	tmp := filepath.Join(c.dir, key+".tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(c.dir, key+".json"))
}

// testLog is where one test binary wrote its log, and the directory it
// ran in (relative paths in the log are relative to it).
type testLog struct{ path, dir string }

// readTestLog returns the (op, absolute name) pairs of a test log, and
// whether the test looked a program up in PATH (it ran a child process
// whose reads the log cannot see).
func readTestLog(path, dir string) ([][2]string, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	if !sc.Scan() || sc.Text() != "# test log" {
		return nil, false, fmt.Errorf("%s: not a complete test log", path)
	}
	pathDirs := filepath.SplitList(os.Getenv("PATH"))
	tmp := os.TempDir()
	var ops [][2]string
	lookedUp := false
	cwd := dir
	for sc.Scan() {
		op, name, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		switch op {
		case "getenv":
			ops = append(ops, [2]string{op, name})
			continue
		case "chdir":
			cwd = absolute(cwd, name)
			continue
		case "open", "stat":
		default:
			continue
		}
		name = absolute(cwd, name)
		if inside(tmp, name) {
			continue
		}
		if op == "stat" && slices.Contains(pathDirs, filepath.Dir(name)) {
			lookedUp = true
		}
		ops = append(ops, [2]string{op, name})
	}
	return ops, lookedUp, sc.Err()
}

func absolute(cwd, name string) string {
	if filepath.IsAbs(name) {
		return filepath.Clean(name)
	}
	return filepath.Join(cwd, name)
}

func inside(dir, name string) bool {
	rel, err := filepath.Rel(dir, name)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// rootPrefix stands for the repository's directory in a stored input's
// name, so that a clone elsewhere (a CI runner's fresh checkout) finds
// the results of another clone of the same content.
const rootPrefix = "$ROOT/"

// portable is name as stored: a file of the repository relative to it.
func (c *resultCache) portable(op, name string) string {
	if (op == "open" || op == "stat") && inside(c.root, name) {
		if rel, err := filepath.Rel(c.root, name); err == nil {
			return rootPrefix + filepath.ToSlash(rel)
		}
	}
	return name
}

// local is a stored name in this clone.
func (c *resultCache) local(name string) string {
	if rel, ok := strings.CutPrefix(name, rootPrefix); ok {
		return filepath.Join(c.root, filepath.FromSlash(rel))
	}
	return name
}

// inputHash is the current state of one input.
func (c *resultCache) inputHash(op, name string) string {
	switch op {
	case "getenv":
		v, ok := os.LookupEnv(name)
		if name == mutatedFileEnv {
			return "mutated copy" // its path changes every run; the key holds its content
		}
		if name == mutantEnv {
			return "mutation" // the schemata's selector: the key holds the mutation
		}
		if !ok {
			return "unset"
		}
		return "=" + v
	case "tree":
		return c.treeHash()
	case "open", "stat":
		info, err := os.Stat(name)
		if err != nil {
			return "missing"
		}
		if info.IsDir() {
			if op == "stat" {
				return "dir"
			}
			names, err := os.ReadDir(name)
			if err != nil {
				return "unreadable dir"
			}
			h := sha256.New()
			for _, n := range names {
				fmt.Fprintf(h, "%s %v\n", n.Name(), n.IsDir())
			}
			return hex.EncodeToString(h.Sum(nil))
		}
		return fmt.Sprintf("%v %s", info.Mode(), c.fileHash(name))
	}
	return "unknown op"
}

// fileHash hashes a file's content once per run.
func (c *resultCache) fileHash(path string) string {
	c.mu.Lock()
	h, ok := c.hashes[path]
	c.mu.Unlock()
	if ok {
		return h
	}
	h = "missing"
	if f, err := os.Open(path); err == nil {
		s := sha256.New()
		if _, err := io.Copy(s, f); err == nil {
			h = hex.EncodeToString(s.Sum(nil))
		} else {
			h = "unreadable"
		}
		f.Close()
	}
	c.mu.Lock()
	c.hashes[path] = h
	c.mu.Unlock()
	return h
}

// treeHash hashes the content of every file git tracks (and every
// untracked one it does not ignore), as the working tree has them.
func (c *resultCache) treeHash() string {
	c.mu.Lock()
	t := c.tree
	c.mu.Unlock()
	if t != "" {
		return t
	}
	cmd := exec.Command("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	cmd.Dir = c.root
	out, err := cmd.Output()
	if err != nil {
		return "git ls-files failed: " + err.Error()
	}
	h := sha256.New()
	files := strings.Split(strings.TrimRight(string(out), "\x00"), "\x00")
	sort.Strings(files)
	for _, f := range files {
		p := filepath.Join(c.root, f)
		if info, err := os.Lstat(p); err != nil || info.Mode()&fs.ModeType != 0 {
			continue
		}
		fmt.Fprintf(h, "%s %s\n", f, c.fileHash(p))
	}
	t = hex.EncodeToString(h.Sum(nil))
	c.mu.Lock()
	c.tree = t
	c.mu.Unlock()
	return t
}
