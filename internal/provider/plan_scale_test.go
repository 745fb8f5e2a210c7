package provider

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// scaleClusters are the clusters of the platform team's configuration:
// the three local clusters (TestAccPlanScale_fourClustersTwentyServices
// adds a fourth API server of its own).
var scaleClusters = testClusters

// scaleConfig writes what a platform team writes for n services over the
// clusters: per service a virtual destination with a backend in every
// cluster (failover order rotating), a traffic policy (timeout and
// retries; every other one shifts traffic, every third one sets
// connection settings) and an access policy (one calling service from
// every cluster, GET and POST only).
func scaleConfig(n int) string { return scaleConfigOver(n, scaleClusters) }

// scaleConfigOver is scaleConfig over the given clusters.
func scaleConfigOver(n int, scaleClusters []string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		svc := fmt.Sprintf("svc%02d", i)
		fmt.Fprintf(&b, `
resource "mesh_virtual_destination" %[1]q {
  name     = %[1]q
  hostname = "%[1]s.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
`, svc)
		for p := 0; p < len(scaleClusters); p++ {
			c := scaleClusters[(i+p)%len(scaleClusters)]
			fmt.Fprintf(&b, "    { cluster = %q, namespace = %q, service = %q, priority = %d },\n", c, svc, svc, p)
		}
		b.WriteString("  ]\n}\n")
		fmt.Fprintf(&b, `
resource "mesh_traffic_policy" %[1]q {
  name        = "%[1]s-traffic"
  destination = { virtual_destination = mesh_virtual_destination.%[1]s.hostname }
  timeout     = "2s"
  retries     = { attempts = 3, per_try_timeout = "500ms", retry_on = ["5xx", "connect-failure"] }
`, svc)
		if i%2 == 0 {
			fmt.Fprintf(&b, "  traffic_shift = [{ local = true, weight = 90 }, { cluster = %q, weight = 10 }]\n", scaleClusters[(i+1)%len(scaleClusters)])
		}
		if i%3 == 0 {
			b.WriteString("  connection_pool = { tcp = { max_connections = 100, connect_timeout = \"1s\" } }\n")
		}
		b.WriteString("}\n")
		fmt.Fprintf(&b, `
resource "mesh_access_policy" %[1]q {
  name        = "%[1]s-access"
  destination = { virtual_destination = mesh_virtual_destination.%[1]s.hostname }
  sources     = [{ cluster_selector = { env = "prod" }, namespace = "callers", service_account = "caller-%02[2]d" }]
  rules       = [{ methods = ["GET", "POST"], ports = [8080] }]
}
`, svc, (i+1)%n)
	}
	return b.String()
}

// scaleRouting is the output of provider::mesh::routing_summary over the
// n services of scaleConfig.
func scaleRouting(n int) string {
	var vds, tps, aps []string
	for i := 0; i < n; i++ {
		svc := fmt.Sprintf("svc%02d", i)
		vds = append(vds, "mesh_virtual_destination."+svc)
		tps = append(tps, "mesh_traffic_policy."+svc)
		aps = append(aps, "mesh_access_policy."+svc)
	}
	return fmt.Sprintf(`
output "routing" {
  value = provider::mesh::routing_summary([%s], [%s], [%s])
}
`, strings.Join(vds, ", "), strings.Join(tps, ", "), strings.Join(aps, ", "))
}

func TestScaleConfig_isWhatItSays(t *testing.T) {
	cfg := scaleConfig(20)
	for kind, want := range map[string]int{"mesh_virtual_destination": 20, "mesh_traffic_policy": 20, "mesh_access_policy": 20} {
		if got := strings.Count(cfg, `resource "`+kind+`"`); got != want {
			t.Errorf("%d %s, want %d", got, kind, want)
		}
	}
	if got := strings.Count(cfg, "traffic_shift"); got != 10 {
		t.Errorf("%d traffic shifts, want 10", got)
	}
}

// The create plan of 3 clusters x 20 services, as terraform plan prints
// it: its length in lines, and how many of them are machine data
// (resolved_destination) rather than what a reviewer reads.
func TestAccPlanScale_threeClustersTwentyServices(t *testing.T) {
	requireMesh(t)
	for i := 0; i < 20; i++ { // the backends' namespaces: the plan checks they exist
		for _, c := range testClusters {
			ensureNamespace(t, c, fmt.Sprintf("svc%02d", i))
		}
	}
	w := newRelTF(t)
	w.write(providerConfig(t, "") + scaleConfig(20) + scaleRouting(20))
	out, code := w.run("plan")
	if code != 0 {
		t.Fatalf("plan failed (exit %d):\n%s", code, out)
	}
	if !strings.Contains(out, "Plan: 60 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("the plan does not add the 60 resources:\n%s", out)
	}
	lines := strings.Count(out, "\n")
	machine := machineLines(out)
	t.Logf("3 clusters x 20 services: %d plan lines, %d of them resolved_destination", lines, machine)
	// One line per traffic policy: machine data never spreads over a
	// jsonencode block (before: 29 lines a policy, 580 in all).
	if machine > 20 {
		t.Errorf("resolved_destination takes %d plan lines, want at most one per traffic policy (20)", machine)
	}
	// The per-hostname summary (routing_summary, as an output): every host
	// in it, read at plan (not known after apply), in a few lines each.
	_, outputs, found := strings.Cut(out, "Changes to Outputs:")
	if !found {
		t.Fatalf("the plan shows no output:\n%s", out)
	}
	outputs, _, _ = strings.Cut(outputs, "─") // the rule before the closing note
	if strings.Contains(outputs, "known after apply") {
		t.Fatalf("the routing summary is known only after apply:\n%s", outputs)
	}
	for i := 0; i < 20; i++ {
		host := fmt.Sprintf("svc%02d.global", i)
		for _, want := range []string{
			fmt.Sprintf(`"%s" = <<-EOT`, host),
			fmt.Sprintf(`failover mesh_virtual_destination "svc%02d":`, i),
			fmt.Sprintf(`shift mesh_traffic_policy "svc%02d-traffic":`, i),
			fmt.Sprintf(`access mesh_access_policy "svc%02d-access":`, i),
		} {
			if !strings.Contains(outputs, want) {
				t.Fatalf("the routing summary does not say %q:\n%s", want, outputs)
			}
		}
	}
	summary := strings.Count(outputs, "\n")
	t.Logf("the per-hostname routing summary: %d plan lines for 20 hosts", summary)
	if summary > 20*12 {
		t.Errorf("the routing summary takes %d plan lines, want at most 12 a host", summary)
	}
	if err := os.WriteFile(filepath.Join(os.TempDir(), "plan38-scale.txt"), []byte(out), 0o644); err != nil {
		t.Log(err)
	}
}

var resolvedStart = regexp.MustCompile(`^\s*[+~-]? ?resolved_destination\s+=`)

// machineLines counts the lines of resolved_destination in a plan: the
// attribute's line and, for a JSON value, every line up to its closing
// parenthesis.
func machineLines(out string) int {
	n, in := 0, false
	for _, l := range strings.Split(out, "\n") {
		switch {
		case in:
			n++
			if strings.TrimSpace(l) == ")" || strings.HasPrefix(strings.TrimSpace(l), ")") {
				in = false
			}
		case resolvedStart.MatchString(l):
			n++
			in = strings.HasSuffix(strings.TrimSpace(l), "jsonencode(")
		}
	}
	return n
}

// The create plan of 4 clusters x 20 services (issue 38's configuration):
// the three local clusters and a fourth API server of its own (the outage
// test's), its length in lines and how many are machine data.
func TestAccPlanScale_fourClustersTwentyServices(t *testing.T) {
	requireMesh(t)
	d, _, conn := startOutageCluster(t)
	clusters := append(append([]string(nil), testClusters...), outageCluster)
	for i := 0; i < 20; i++ {
		ns := fmt.Sprintf("svc%02d", i)
		for _, c := range testClusters {
			ensureNamespace(t, c, ns)
		}
		createNamespace(t, d, ns)
	}
	var b strings.Builder
	b.WriteString("provider \"mesh\" {\n  clusters = {\n")
	for _, c := range testClusters {
		fmt.Fprintf(&b, "    %s = {\n      kubernetes = {\n      %s\n      }\n      %s\n    }\n", c, kubeconfigConnection(t, c), testTopology[c])
	}
	fmt.Fprintf(&b, "    %s = {\n      kubernetes = {\n      %s\n      }\n      %s\n    }\n  }\n}\n", outageCluster, conn, outageTopology)
	w := newRelTF(t)
	w.write(b.String() + scaleConfigOver(20, clusters) + scaleRouting(20))
	out, code := w.run("plan")
	if code != 0 {
		t.Fatalf("plan failed (exit %d):\n%s", code, out)
	}
	if !strings.Contains(out, "Plan: 60 to add, 0 to change, 0 to destroy.") {
		t.Fatalf("the plan does not add the 60 resources:\n%s", out)
	}
	if !strings.Contains(out, `cluster = "edge"`) {
		t.Fatalf("the plan places nothing in the fourth cluster:\n%s", out)
	}
	lines, machine := strings.Count(out, "\n"), machineLines(out)
	t.Logf("4 clusters x 20 services: %d plan lines, %d of them resolved_destination", lines, machine)
	if machine > 20 {
		t.Errorf("resolved_destination takes %d plan lines, want at most one per traffic policy (20)", machine)
	}
}
