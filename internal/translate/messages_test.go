package translate_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// detailArg is, for each function that builds a diagnostic, the position
// of its detail argument (the text under the summary).
var detailArg = map[string]int{
	"Errorf":                        2, // translate.Errorf(path, summary, detailFormat, ...)
	"AddError":                      1, // diag.Diagnostics.AddError(summary, detail)
	"AddWarning":                    1,
	"AddAttributeError":             2, // (path, summary, detail)
	"AddAttributeWarning":           2,
	"addAttrError":                  3, // (diags, path, summary, detail)
	"NewErrorDiagnostic":            1,
	"NewWarningDiagnostic":          1,
	"NewAttributeErrorDiagnostic":   2,
	"NewAttributeWarningDiagnostic": 2,
}

// lastText is the text a detail expression ends with, when the source
// shows it: a string literal, the last literal of a concatenation, or the
// format of fmt.Sprintf. ok is false for text only known at run time.
func lastText(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op == token.ADD {
			return lastText(e.Y)
		}
	case *ast.ParenExpr:
		return lastText(e.X)
	case *ast.CallExpr:
		if sel, ok := e.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Sprintf" && len(e.Args) > 0 {
			return lastText(e.Args[0])
		}
	}
	return "", false
}

// Every diagnostic detail the provider, the engine and the translator
// write ends with a full stop, wherever the source shows how it ends (a
// literal, a concatenation ending in one, or a Sprintf format): a detail is
// one or more full sentences, and a message that runs on without a full
// stop, or ends with a value (": %v"), reads as cut off.
func TestDiagnosticDetailsEndWithAFullStop(t *testing.T) {
	checked := 0
	for _, dir := range []string{".", "../provider", "../engine"} {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok {
					return true
				}
				var name string
				switch fn := call.Fun.(type) {
				case *ast.SelectorExpr:
					name = fn.Sel.Name
				case *ast.Ident:
					name = fn.Name
				}
				i, ok := detailArg[name]
				if !ok || len(call.Args) <= i {
					return true
				}
				text, known := lastText(call.Args[i])
				if !known {
					return true
				}
				checked++
				if !strings.HasSuffix(strings.TrimRight(text, `)"`+"`"), ".") {
					t.Errorf("%s: the detail of %s does not end with a full stop: %q", fset.Position(call.Pos()), name, text)
				}
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 150 {
		t.Fatalf("checked only %d details: the walk misses diagnostics", checked)
	}
	t.Logf("%d diagnostic details end with a full stop", checked)
}
