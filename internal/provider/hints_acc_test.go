package provider

import (
	"context"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// printedHint finds the kubectl commands a Terraform run printed: each in
// the parentheses of a diagnostic, as the provider writes them ("Create it
// (kubectl ...)"). Terraform wraps a diagnostic's lines at spaces inside
// its box ("│ "); the lines are joined back first.
var printedHint = regexp.MustCompile(`\(((?:KUBECONFIG=\S+ )?kubectl [^()]*)\)`)

func printedHints(out string) []string {
	var joined []string
	for _, line := range strings.Split(out, "\n") {
		line = strings.TrimSpace(line)
		line = strings.TrimSpace(strings.TrimPrefix(line, "│"))
		joined = append(joined, line)
	}
	seen := map[string]bool{}
	var cmds []string
	for _, m := range printedHint.FindAllStringSubmatch(strings.Join(joined, " "), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			cmds = append(cmds, m[1])
		}
	}
	return cmds
}

// runHint runs a hint as a user would paste it, in a shell whose kubeconfig
// points nowhere (no KUBECONFIG, an empty home): only the flags the hint
// carries can lead it to the right cluster.
func runHint(t *testing.T, command string) {
	t.Helper()
	cmd := exec.Command("sh", "-c", command)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "KUBECONFIG=") && !strings.HasPrefix(kv, "HOME=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "HOME="+t.TempDir())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the hint %q fails as printed: %v\n%s", command, err, out)
	}
}

func deleteNamespace(t *testing.T, cluster, name string) {
	t.Helper()
	err := dyn(t, cluster).Resource(gvrNamespace).Delete(context.Background(), name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting namespace %s in %s: %v", name, cluster, err)
	}
}

func namespaceExists(t *testing.T, cluster, name string) bool {
	t.Helper()
	_, err := dyn(t, cluster).Resource(gvrNamespace).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("reading namespace %s in %s: %v", name, cluster, err)
	}
	return err == nil
}

// Every kubectl hint the provider prints runs, pasted as printed, against
// the cluster it names. First the one a user meets: a records namespace
// that does not exist; its printed commands are run in a shell with no
// kubeconfig of its own, each creates the namespace in the cluster it
// names (and only there), and the next apply succeeds. Then every hint
// builder (kubeclient.HintExamples, which its own test keeps complete),
// rendered for each local cluster as the provider renders it.
func TestAccHints_runAsPrinted(t *testing.T) {
	w := newRelTF(t)
	const records = "hint-records"
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
		deleteNamespace(t, c, records)
	}
	t.Cleanup(func() {
		for _, c := range testClusters {
			deleteNamespace(t, c, records)
		}
	})
	w.write(providerConfig(t, `records_namespace = "`+records+`"`) + vdConfig(eastBackend+"\n"+westBackend, `{ clusters = ["east", "west"] }`))
	t.Cleanup(w.destroy)
	out := w.applyFails()
	cmds := printedHints(out)
	if len(cmds) == 0 {
		t.Fatalf("the failed apply printed no kubectl hint:\n%s", out)
	}
	for _, cmd := range cmds {
		if !strings.Contains(cmd, "--context ") {
			t.Errorf("the hint %q does not name its cluster's context", cmd)
		}
		cluster := ""
		for _, c := range testClusters {
			if strings.Contains(cmd, "--context "+c+" ") {
				cluster = c
			}
		}
		if cluster == "" {
			t.Fatalf("the hint %q names no local cluster", cmd)
		}
		before := map[string]bool{}
		for _, c := range testClusters {
			before[c] = namespaceExists(t, c, records)
		}
		runHint(t, cmd)
		for _, c := range testClusters {
			if got := namespaceExists(t, c, records); got != (before[c] || c == cluster) {
				t.Errorf("after %q: namespace %s in %s exists = %v", cmd, records, c, got)
			}
		}
	}
	if t.Failed() {
		t.Fatalf("apply output:\n%s", out)
	}
	w.apply()

	conns := map[string]kubeclient.Connection{}
	for _, c := range testClusters {
		conns[c] = kubeclient.Connection{Name: c, ConfigPath: testMesh.Kubeconfig(), ConfigContext: c}
	}
	set := kubeclient.NewSet(conns, 0)
	const example = "hint-example"
	for name, h := range kubeclient.HintExamples(example) {
		for _, c := range testClusters {
			t.Run(name+"/"+c, func(t *testing.T) {
				t.Cleanup(func() { deleteNamespace(t, c, example) })
				runHint(t, set.Kubectl(c, h))
			})
		}
	}
}

// printedHints finds a hint in Terraform's diagnostic box, also when
// Terraform wrapped it across lines.
func TestPrintedHintsJoinsWrappedLines(t *testing.T) {
	out := "│ Error: Applying east/ConfigMap/hint-records/vd-user\n" +
		"│\n" +
		"│ Namespace hint-records does not exist in cluster east. Create it (kubectl\n" +
		"│ --kubeconfig /tmp/mesh/kubeconfig --context east create namespace\n" +
		"│ hint-records): virtual destination records live there, then apply again.\n" +
		"╵\n" +
		"│ Namespace hint-records does not exist in cluster west. Create it (KUBECONFIG='/a:/b' kubectl --context west create namespace hint-records), then apply again.\n"
	got := printedHints(out)
	want := []string{
		"kubectl --kubeconfig /tmp/mesh/kubeconfig --context east create namespace hint-records",
		"KUBECONFIG='/a:/b' kubectl --context west create namespace hint-records",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("printedHints =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
