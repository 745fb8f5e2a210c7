// Command docnames fails when a doc comment or a design document names a
// Go identifier that the code no longer declares (make lint). It checks:
//   - the first word of every doc comment of a declaration, which by Go
//     convention is the declared name: a word that looks like an
//     identifier (an inner capital: TrafficPolicyIntent, applyCluster)
//     and is not the name is a name left behind by a rename;
//   - every `code span` of docs/design.md, docs/design/*.md,
//     docs/reliability.md and docs/testing.md that looks like a Go
//     identifier (an inner capital, optionally package-qualified:
//     `trafficpolicy.Compose`, `applyCluster`, `Engine.Apply`): its last
//     part must be declared somewhere in the module (any package, any
//     scope, fields and methods included), or appear in a string;
//   - every file a package doc comment names (internal/engine/doc.go lists
//     its files): it must exist, and a doc that lists three or more of its
//     own package's files must list them all.
//
// Usage: go run ./tools/docnames (from the repository root).
package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// skipDirs hold no Go code of the provider's.
var skipDirs = map[string]bool{"testdata": true, "docs": true, "examples": true, "templates": true}

// external are names of other projects (Istio, Envoy, Kubernetes) that the
// design documents cite as their sources; the code does not declare them.
var external = map[string]bool{
	"AugmentLabels": true, "ApplyToCluster": true, "CheckDuplicates": true, "EndpointsByNetworkFilter": true,
	"SelectVirtualServices": true, "ValidateDuration": true,
	"applyFailoverPriorityPerLocality": true, "applyTrafficPolicy": true, "buildOutboundClusters": true,
	"buildOutboundSniDnatClusters": true, "buildSubsetCluster": true, "builtAutoPassthroughFilterChains": true,
	"InNetwork": true, "forceGateway": true, "registryServiceName": true, "servicesExportedToNamespace": true,
	// Fields of Istio's and Kubernetes' APIs.
	"mirrorPercentage": true, "sourceLabels": true, "sourceNamespace": true, "workloadSelector": true,
}

// cited reports whether a code span names something outside the code:
// an environment variable (ALL_CAPS), or a dotted path into another
// project's API or code (meshConfig.trustDomainAliases,
// PushContext.mergeDestinationRule) rather than one of ours
// (trafficpolicy.Compose, Engine.Apply).
func cited(parts []string, ours map[string]bool) bool {
	if strings.ToUpper(parts[0]) == parts[0] {
		return true
	}
	return len(parts) > 1 && !ours[parts[0]]
}

func main() {
	problems, err := check(".")
	if err != nil {
		fmt.Fprintln(os.Stderr, "docnames:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Printf("docnames: %d names that the code does not declare\n", len(problems))
		os.Exit(1)
	}
}

// identLike reports whether w looks like a Go identifier that is a name
// of the code rather than a word: letters and digits with a capital
// after the first letter.
func identLike(w string) bool {
	if w == "" || !unicode.IsLetter(rune(w[0])) {
		return false
	}
	inner := false
	for i, r := range w {
		if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_') {
			return false
		}
		if i > 0 && unicode.IsUpper(r) {
			inner = true
		}
	}
	return inner
}

func check(root string) ([]string, error) {
	fset := token.NewFileSet()
	declared := map[string]bool{}
	ours := map[string]bool{} // the module's package and type names
	var docProblems []string
	goFiles := map[string]bool{}       // base names of the module's Go files
	packageDocs := map[string]string{} // file -> its package doc comment
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (skipDirs[d.Name()] || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") {
			return nil
		}
		goFiles[filepath.Base(p)] = true
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		ours[f.Name.Name] = true
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.TypeSpec:
				ours[n.Name.Name] = true
			case *ast.Ident:
				declared[n.Name] = true
			case *ast.BasicLit:
				if n.Kind == token.STRING {
					if s, err := strconv.Unquote(n.Value); err == nil {
						for _, w := range regexp.MustCompile(`\w+`).FindAllString(s, -1) {
							declared[w] = true
						}
					}
				}
			}
			return true
		})
		if strings.HasSuffix(p, "_test.go") || strings.HasPrefix(filepath.ToSlash(p), "tools/istio/") {
			return nil // tests have prose comments; tools/istio is a module of its own
		}
		docProblems = append(docProblems, firstWords(fset, f)...)
		if f.Doc != nil {
			packageDocs[p] = f.Doc.Text()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for p, doc := range packageDocs {
		docProblems = append(docProblems, fileList(p, doc, goFiles)...)
	}
	var docs []string
	for _, g := range []string{"docs/design.md", "docs/design/*.md", "docs/reliability.md", "docs/testing.md"} {
		m, err := filepath.Glob(filepath.Join(root, g))
		if err != nil {
			return nil, err
		}
		docs = append(docs, m...)
	}
	span := regexp.MustCompile("`([A-Za-z_][A-Za-z0-9_.]*)(\\(\\))?`")
	var out []string
	for _, doc := range docs {
		b, err := os.ReadFile(doc)
		if err != nil {
			return nil, err
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, m := range span.FindAllStringSubmatch(line, -1) {
				parts := strings.Split(strings.TrimSuffix(m[1], "."), ".")
				last := parts[len(parts)-1]
				if !identLike(last) || declared[last] || external[last] || cited(parts, ours) {
					continue
				}
				out = append(out, fmt.Sprintf("%s:%d: `%s`: no such name in the code", doc, i+1, m[1]))
			}
		}
	}
	out = append(docProblems, out...)
	sort.Strings(out)
	return out, nil
}

// firstWords checks the first word of each declaration's doc comment.
func firstWords(fset *token.FileSet, f *ast.File) []string {
	var out []string
	check := func(doc *ast.CommentGroup, name *ast.Ident) {
		if doc == nil {
			return
		}
		w := strings.Fields(doc.Text())
		if len(w) == 0 {
			return
		}
		first := strings.TrimRight(w[0], ",.:;'s")
		if first == name.Name || strings.TrimRight(w[0], ",.:;") == name.Name || !identLike(first) {
			return
		}
		out = append(out, fmt.Sprintf("%s: the doc comment of %s begins with %s", fset.Position(name.Pos()), name.Name, w[0]))
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			check(d.Doc, d.Name)
		case *ast.GenDecl:
			for _, s := range d.Specs {
				doc := d.Doc
				switch s := s.(type) {
				case *ast.TypeSpec:
					if s.Doc != nil || len(d.Specs) > 1 {
						doc = s.Doc
					}
					check(doc, s.Name)
				case *ast.ValueSpec:
					if s.Doc != nil || len(d.Specs) > 1 {
						doc = s.Doc
					}
					if len(s.Names) == 1 {
						check(doc, s.Names[0])
					}
				}
			}
		}
	}
	return out
}

// fileList checks a package doc comment (in file p) that names files:
// every name (a glob where it has * or <placeholder>) must be a file of
// the package or, failing that, of another package of the module; and
// when it names three or more of its own package's, every file of the
// package but the doc comment's own must be named: a list of the
// package's files that misses one has drifted.
func fileList(p, doc string, goFiles map[string]bool) []string {
	dir, self := filepath.Dir(p), filepath.Base(p)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", p, err)}
	}
	var files, all []string
	for _, e := range entries {
		if n := e.Name(); strings.HasSuffix(n, ".go") {
			all = append(all, n)
			if !strings.HasSuffix(n, "_test.go") && n != self {
				files = append(files, n)
			}
		}
	}
	placeholder := regexp.MustCompile(`<[^>]*>`)
	var globs []string
	var out []string
	for _, name := range regexp.MustCompile(`[\w<>*]+\.go\b`).FindAllString(doc, -1) {
		g := placeholder.ReplaceAllString(name, "*")
		here := false
		for _, f := range all {
			if ok, _ := filepath.Match(g, f); ok {
				here = true
			}
		}
		if here {
			globs = append(globs, g)
		} else if !anyMatch(g, goFiles) {
			out = append(out, fmt.Sprintf("%s: the package doc names %s, which is no file of the module", p, name))
		}
	}
	if len(globs) < 3 {
		return out
	}
	for _, f := range files {
		named := false
		for _, g := range globs {
			if ok, _ := filepath.Match(g, f); ok {
				named = true
			}
		}
		if !named {
			out = append(out, fmt.Sprintf("%s: the package doc lists the package's files but not %s", p, f))
		}
	}
	return out
}

// anyMatch reports whether one of names matches the glob g.
func anyMatch(g string, names map[string]bool) bool {
	for n := range names {
		if ok, _ := filepath.Match(g, n); ok {
			return true
		}
	}
	return false
}
