package analyze

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"istio.io/istio/pkg/config/analysis/analyzers"
	"istio.io/istio/pkg/config/analysis/diag"
	"istio.io/istio/pkg/config/analysis/local"
	"istio.io/istio/pkg/config/resource"
	kubelib "istio.io/istio/pkg/kube"
	"k8s.io/apimachinery/pkg/runtime"
	kubescheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/tools/istio/internal/oracle"
)

var update = flag.Bool("update", false, "rewrite <case>.analyze.txt")

// caseInput is what the fixture needs of a case's input.
type caseInput struct {
	Registry []struct {
		Name string `json:"name"`
	} `json:"registry"`
	Intent struct {
		// virtual destination
		Hostname  string `json:"hostname"`
		Namespace string `json:"namespace"`
		Ports     []struct {
			Number     int    `json:"number"`
			Protocol   string `json:"protocol"`
			TargetPort *int   `json:"targetPort"`
		} `json:"ports"`
		Backends []struct {
			Cluster   string `json:"cluster"`
			Namespace string `json:"namespace"`
			Service   string `json:"service"`
		} `json:"backends"`
		Clients struct {
			Namespaces []string `json:"namespaces"`
		} `json:"clients"`
		// mesh_cluster
		IstioNamespace   string            `json:"istioNamespace"`
		EastWestSelector map[string]string `json:"eastWestSelector"`
		// a traffic or access policy, or several composed
		policyCase
		Compose []policyCase `json:"compose"`
	} `json:"intent"`
}

type policyCase struct {
	Destination struct {
		VirtualDestination string   `json:"virtualDestination"`
		ClientNamespaces   []string `json:"clientNamespaces"`
		Service            string   `json:"service"`
		Namespace          string   `json:"namespace"`
		// An access policy's: the virtual destination's backends, and
		// the labels of the destination's pods.
		Backends []struct {
			Cluster   string `json:"cluster"`
			Namespace string `json:"namespace"`
			Service   string `json:"service"`
		} `json:"backends"`
		WorkloadLabels map[string]string `json:"workloadLabels"`
	} `json:"destination"`
	Policy struct {
		// A traffic policy's sources (namespaces) or an access policy's
		// (a list, one namespace each).
		Sources      json.RawMessage `json:"sources"`
		TrafficShift []struct {
			Labels map[string]string `json:"labels"`
		} `json:"trafficShift"`
		Mirror *struct {
			Labels map[string]string `json:"labels"`
		} `json:"mirror"`
	} `json:"policy"`
}

// policies are the case's policies, composed or alone.
func (in caseInput) policies() []policyCase {
	return append([]policyCase{in.Intent.policyCase}, in.Intent.Compose...)
}

func TestGoldenCasesAnalyzeClean(t *testing.T) {
	dirs := []string{"cluster", "virtual-destination", "traffic-policy", "access-policy"}
	ran, skipped := map[string]int{}, map[string]int{}
	for _, dir := range dirs {
		inputs, err := filepath.Glob(filepath.Join(oracle.GoldenDir(dir), "*.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if len(inputs) == 0 {
			t.Fatalf("no golden cases in %s", oracle.GoldenDir(dir))
		}
		for _, in := range inputs {
			if strings.HasSuffix(in, ".golden.yaml") {
				continue
			}
			name := strings.TrimSuffix(filepath.Base(in), ".yaml")
			t.Run(dir+"/"+name, func(t *testing.T) {
				if analyzeCase(t, dir, strings.TrimSuffix(in, ".yaml")) {
					ran[dir]++
				} else {
					skipped[dir]++
				}
			})
		}
	}
	for _, dir := range dirs {
		t.Logf("%s: %d cases analyzed, %d plan errors or nothing to write (the golden file's too)", dir, ran[dir], skipped[dir])
	}
}

// analyzeCase analyzes one case and reports whether it had objects to
// analyze; one without (a plan error, or nothing to write) is checked
// against its golden file by oracle.Translate.
func analyzeCase(t *testing.T, dir, base string) bool {
	raw, err := os.ReadFile(base + ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	var in caseInput
	if err := yaml.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	// The objects are the provider's translator's answer (oracle.Translate),
	// not the golden file, so a translator bug reaches the analyzers.
	out := oracle.Translate(t, dir, base+".yaml")
	if out.Failed != "" || len(out.Objects) == 0 {
		return false // a plan error, or nothing to write: nothing reaches a cluster
	}
	objects := out.Objects
	var report strings.Builder
	fmt.Fprintf(&report, "# Istio's analyzers (istioctl analyze -A) on %s.golden.yaml, per cluster,\n", filepath.Base(base))
	report.WriteString("# with the workloads of tools/istio/analyze/fixture.go. `make analyze UPDATE=1` rewrites it.\n")
	for _, c := range sortedKeys(objects) {
		msgs := analyze(t, append(objects[c], fixture(in, c)...))
		if len(msgs) == 0 {
			fmt.Fprintf(&report, "%s: no messages\n", c)
		}
		for _, m := range msgs {
			fmt.Fprintf(&report, "%s: %s\n", c, m.line)
			if m.level == diag.Error {
				t.Errorf("cluster %s: Istio's analyzers report an error: %s", c, m.line)
			}
		}
	}
	compare(t, base+".analyze.txt", report.String())
	return true
}

var objectsLine = regexp.MustCompile(` objects\.yaml:[0-9]+`)

type message struct {
	level diag.Level
	line  string
}

// analyze runs the analyzers as `istioctl analyze -A` does against a
// cluster: the Kubernetes objects of docs (namespaces, pods, services) are
// served by a Kubernetes client, as a running cluster would serve them; the
// Istio objects are read from a file, as `istioctl analyze -A objects.yaml`
// reads the configuration under review.
func analyze(t *testing.T, docs []string) []message {
	t.Helper()
	sa := local.NewIstiodAnalyzer(analyzers.AllCombined(), "", resource.Namespace("istio-system"), nil)
	var kubeObjs []runtime.Object
	var istioDocs []string
	decode := kubescheme.Codecs.UniversalDeserializer()
	for _, d := range docs {
		if strings.Contains(d, "apiVersion: networking.istio.io/") || strings.Contains(d, "apiVersion: security.istio.io/") {
			istioDocs = append(istioDocs, d)
			continue
		}
		js, err := yaml.YAMLToJSON([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := decode.Decode(js, nil, nil)
		if err != nil {
			t.Fatalf("decoding %.80q: %v", d, err)
		}
		kubeObjs = append(kubeObjs, obj)
	}
	client := kubelib.NewFakeClient(kubeObjs...)
	sa.AddRunningKubeSource(client)
	if err := sa.AddReaderKubeSource([]local.ReaderSource{{Name: "objects.yaml", Reader: strings.NewReader(strings.Join(istioDocs, "\n---\n"))}}); err != nil {
		t.Fatalf("Istio could not read the objects: %v", err)
	}
	cancel := make(chan struct{})
	res, err := sa.Analyze(cancel)
	if err != nil {
		t.Fatal(err)
	}
	var out []message
	for _, m := range res.Messages {
		// The file line numbers move with every golden change; the
		// resource name says where.
		line := objectsLine.ReplaceAllString(m.String(), "")
		out = append(out, message{level: m.Type.Level(), line: line})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].line < out[j].line })
	return out
}

func compare(t *testing.T, path, got string) {
	t.Helper()
	oracle.Compare(t, path, got, *update, "make analyze UPDATE=1")
}

func sortedKeys[V any](m map[string]V) []string { return oracle.SortedKeys(m) }

// sourceNamespaces are the namespaces a policy's sources run in.
func (p policyCase) sourceNamespaces() []string {
	raw := p.Policy.Sources
	var one struct {
		Namespaces []string `json:"namespaces"`
	}
	if json.Unmarshal(raw, &one) == nil {
		return one.Namespaces
	}
	var list []struct {
		Namespace string `json:"namespace"`
	}
	var out []string
	if json.Unmarshal(raw, &list) == nil {
		for _, s := range list {
			if s.Namespace != "" {
				out = append(out, s.Namespace)
			}
		}
	}
	return out
}

// The harness reports what Istio's analyzers find: the subset shape the
// virtual destination translation used to write (selecting a label only
// ServiceEntry endpoints carry) is an error, IST0173, on a cluster with
// workloads. Without this control, a harness that analyzed nothing would
// pass every case.
func TestAnalyzerSeesSubsetWithoutPods(t *testing.T) {
	var in caseInput
	if err := yaml.Unmarshal([]byte(`
registry: [{name: east}]
intent:
  hostname: user.global
  ports: [{number: 8080, protocol: HTTP}]
  backends: [{cluster: east, namespace: users, service: user}]
  clients: {namespaces: [accounts]}`), &in); err != nil {
		t.Fatal(err)
	}
	old := []string{`apiVersion: networking.istio.io/v1
kind: ServiceEntry
metadata: {name: vd-user, namespace: istio-system}
spec:
  hosts: [user.global]
  addresses: [241.0.0.1]
  location: MESH_INTERNAL
  resolution: DNS
  ports: [{number: 8080, name: http-8080, protocol: HTTP}]
  endpoints: [{address: user.users.svc.cluster.local, labels: {mesh-intent.io/cluster: east, security.istio.io/tlsMode: istio}}]`, `apiVersion: networking.istio.io/v1
kind: DestinationRule
metadata: {name: vd-user, namespace: istio-system}
spec:
  host: user.global
  subsets: [{name: east, labels: {mesh-intent.io/cluster: east}}]`}
	msgs := analyze(t, append(old, fixture(in, "east")...))
	for _, m := range msgs {
		if m.level == diag.Error && strings.Contains(m.line, "[IST0173]") {
			return
		}
	}
	t.Errorf("Istio's analyzers did not report IST0173 for a subset no pod matches; got %v", msgs)
}
