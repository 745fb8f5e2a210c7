package kubeclient

import (
	"os"
	"strings"

	"k8s.io/client-go/tools/clientcmd"
)

// A kubectl command the provider suggests in a diagnostic must work when
// pasted: it names the cluster it is for by the kubeconfig and context the
// provider itself uses for that cluster, never by the current context of
// whatever kubeconfig the user's shell has (issue 38: "kubectl create
// namespace users", followed literally, created it in another cluster).
// Every hint is built here, from a Hint below, and rendered by Kubectl:
// TestEveryHintRunsAgainstTheLocalMesh runs each builder's command, as
// printed, against a cluster of the local mesh, and
// TestKubectlHintsAreBuiltHere fails on a kubectl command spelled out
// anywhere else in the provider's code.

// Hint is a kubectl command without the flags that pick the cluster.
type Hint struct {
	Args []string
}

// CreateNamespace is the hint for a namespace that does not exist.
func CreateNamespace(namespace string) Hint {
	return Hint{Args: []string{"create", "namespace", namespace}}
}

// ListServices is the hint for a Service that does not exist: the
// Services its namespace has, to find the name meant.
func ListServices(namespace string) Hint {
	return Hint{Args: []string{"get", "services", "--namespace", namespace}}
}

// hintBuilders lists every Hint builder with an example argument, for the
// test that runs them all; a builder missing here fails
// TestEveryHintBuilderIsListed.
var hintBuilders = map[string]func(string) Hint{
	"CreateNamespace": CreateNamespace,
	"ListServices":    ListServices,
}

// HintExamples is every Hint builder applied to an example argument (a
// name no cluster holds yet), keyed by the builder's name: the commands the
// hint test runs.
func HintExamples(arg string) map[string]Hint {
	out := make(map[string]Hint, len(hintBuilders))
	for name, build := range hintBuilders {
		out[name] = build(arg)
	}
	return out
}

// Kubectl renders h as a command line for the cluster c connects to: with
// --kubeconfig and --context when c reads a kubeconfig (and --server when
// c's host overrides the kubeconfig's), else with --context named like the
// cluster, the context the user's own kubeconfig most likely has for it.
func Kubectl(c Connection, h Hint) string {
	var flags []string
	env := ""
	files, err := kubeconfigFiles(c)
	switch {
	case err != nil || len(files) == 0:
		flags = append(flags, "--context", contextName(c, ""))
		if c.Host != "" {
			flags = append(flags, "--server", c.Host)
		}
	default:
		if len(files) == 1 {
			flags = append(flags, "--kubeconfig", files[0])
		} else {
			env = "KUBECONFIG=" + shellQuote(strings.Join(files, string(os.PathListSeparator))) + " "
		}
		flags = append(flags, "--context", contextName(c, chosenContext(c, files)))
		if c.Host != "" {
			flags = append(flags, "--server", c.Host)
		}
	}
	words := append([]string{"kubectl"}, flags...)
	words = append(words, h.Args...)
	for i, w := range words {
		words[i] = shellQuote(w)
	}
	return env + strings.Join(words, " ")
}

// chosenContext is the context the provider uses in files, "" when it
// cannot tell (the files do not load, or no context is safe to choose).
func chosenContext(c Connection, files []string) string {
	rules := &clientcmd.ClientConfigLoadingRules{Precedence: files}
	if len(files) == 1 {
		rules = &clientcmd.ClientConfigLoadingRules{ExplicitPath: files[0]}
	}
	raw, err := rules.Load()
	if err != nil {
		return ""
	}
	name, err := chooseContext(c, raw, files)
	if err != nil {
		return ""
	}
	return name
}

func contextName(c Connection, chosen string) string {
	switch {
	case chosen != "":
		return chosen
	case c.ConfigContext != "":
		return c.ConfigContext
	}
	return c.Name
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and -_./:=@,+.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Kubectl renders h for the named cluster of the set; a cluster the set
// does not know gets --context with its name.
func (s *Set) Kubectl(cluster string, h Hint) string {
	c, ok := s.conns[cluster]
	if !ok {
		c = Connection{Name: cluster}
	}
	if c.Name == "" {
		c.Name = cluster
	}
	return Kubectl(c, h)
}
