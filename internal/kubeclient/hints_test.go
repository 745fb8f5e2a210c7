package kubeclient

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// A hint names the cluster by the kubeconfig and context the provider uses
// for it, so that it works when pasted in a shell whose kubeconfig points
// elsewhere.
func TestKubectlNamesTheCluster(t *testing.T) {
	dir := t.TempDir()
	one := filepath.Join(dir, "one")
	two := filepath.Join(dir, "two words")
	for _, f := range []string{one, two} {
		cfg := clientcmdapi.NewConfig()
		for _, n := range []string{"east", "west"} {
			cfg.Clusters[n] = &clientcmdapi.Cluster{Server: "https://" + n + ".example.com"}
			cfg.AuthInfos[n] = &clientcmdapi.AuthInfo{Token: "t"}
			cfg.Contexts[n] = &clientcmdapi.Context{Cluster: n, AuthInfo: n}
		}
		cfg.Contexts["admin@prod-east"] = &clientcmdapi.Context{Cluster: "east", AuthInfo: "east"}
		cfg.CurrentContext = "west"
		if err := clientcmd.WriteToFile(*cfg, f); err != nil {
			t.Fatal(err)
		}
	}
	h := CreateNamespace("users")
	cases := []struct {
		name string
		conn Connection
		want string
	}{
		{"context named like the cluster", Connection{Name: "east", ConfigPath: one},
			"kubectl --kubeconfig " + one + " --context east create namespace users"},
		{"config_context", Connection{Name: "east", ConfigPath: one, ConfigContext: "admin@prod-east"},
			"kubectl --kubeconfig " + one + " --context admin@prod-east create namespace users"},
		{"several files", Connection{Name: "west", ConfigPaths: []string{one, two}},
			"KUBECONFIG='" + one + ":" + two + "' kubectl --context west create namespace users"},
		{"a path that needs quoting", Connection{Name: "west", ConfigPath: two},
			"kubectl --kubeconfig '" + two + "' --context west create namespace users"},
		{"host over the kubeconfig", Connection{Name: "east", ConfigPath: one, Host: "https://10.0.0.1:6443"},
			"kubectl --kubeconfig " + one + " --context east --server https://10.0.0.1:6443 create namespace users"},
		{"host and token, no kubeconfig", Connection{Name: "east", Host: "https://10.0.0.1:6443", Token: "secret"},
			"kubectl --context east --server https://10.0.0.1:6443 create namespace users"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Kubectl(tc.conn, h)
			if got != tc.want {
				t.Errorf("Kubectl =\n%s\nwant\n%s", got, tc.want)
			}
			if strings.Contains(got, "secret") {
				t.Errorf("the hint carries the token: %s", got)
			}
		})
	}
	// The set renders for its own clusters; "east" here has a context of
	// its own name in a shared file.
	s := NewSet(map[string]Connection{"east": {Name: "east", ConfigPath: one}}, 0)
	if got, want := s.Kubectl("east", h), "kubectl --kubeconfig "+one+" --context east create namespace users"; got != want {
		t.Errorf("Set.Kubectl = %s, want %s", got, want)
	}
}

// Every exported function of hints.go that builds a Hint is listed in
// hintBuilders, so that HintExamples (and the test that runs every hint
// against the local mesh) reaches it.
func TestEveryHintBuilderIsListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "hints.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !fn.Name.IsExported() || fn.Type.Results == nil || len(fn.Type.Results.List) != 1 {
			continue
		}
		if id, ok := fn.Type.Results.List[0].Type.(*ast.Ident); !ok || id.Name != "Hint" {
			continue
		}
		n++
		if _, ok := hintBuilders[fn.Name.Name]; !ok {
			t.Errorf("%s builds a Hint but is not in hintBuilders", fn.Name.Name)
		}
	}
	if n == 0 || n != len(hintBuilders) {
		t.Errorf("%d builders in hints.go, %d in hintBuilders", n, len(hintBuilders))
	}
}

// kubectlCommand is a kubectl command line as a hint would spell it.
var kubectlCommand = regexp.MustCompile(`\bkubectl (create|delete|get|apply|label|annotate|patch|edit|describe|scale|rollout|auth|replace|drain|cordon)\b`)

// No code of the provider spells out a kubectl command: every one is a
// Hint of hints.go, rendered with the cluster's kubeconfig and context.
// Comments may name kubectl commands (they are never printed).
func TestKubectlHintsAreBuiltHere(t *testing.T) {
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "tools" || d.Name() == "bench" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Base(path) == "hints.go" {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err == nil && kubectlCommand.MatchString(s) {
				t.Errorf("%s: %q spells out a kubectl command: build it as a Hint in internal/kubeclient/hints.go and render it with Kubectl", path, kubectlCommand.FindString(s))
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The commands as rendered parse as a shell would: sh -n accepts them.
func TestKubectlHintsAreShellWords(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Fatalf("sh is not on PATH: install a POSIX shell (Debian: apt-get install dash); the hints must parse as a shell reads them: %v", err)
	}
	for name, h := range HintExamples("it's") {
		cmd := Kubectl(Connection{Name: "east", ConfigPath: "/tmp/a b/config"}, h)
		if out, err := exec.Command(sh, "-n", "-c", cmd).CombinedOutput(); err != nil {
			t.Errorf("%s: %s does not parse: %v %s", name, cmd, err, out)
		}
	}
}
