package provider

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// A cluster that accepts connections and never answers (an API server
// black-holed behind its load balancer): 50 virtual destinations have
// clients there. The apply and the next plan each wait about one
// request_timeout for it, not one per resource (the first timeout marks
// the cluster silent for the rest of the run), and name the cluster.
// Connections are counted, not seconds: a request to the silent cluster
// opens a connection of its own (the TLS handshake never completes, so
// none is shared), and a provider process that waited for each resource
// would open at least one per resource, 50 in each Terraform command;
// marked silent after the first timeout, it opens only those of the
// requests in flight then (Terraform runs ten resources at a time).
func TestAccReliability_silentCluster(t *testing.T) {
	ensureNamespace(t, "east", "users")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var held []net.Conn
	accepted := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(held)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c) // accepted, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range held {
			c.Close()
		}
	})

	const timeout = 10 * time.Second
	const resources = 50
	silent := fmt.Sprintf("    silent = {\n      kubernetes = {\n        host     = \"https://%s\"\n        token    = \"t\"\n        insecure = true\n      }\n    }\n", ln.Addr())
	provider := strings.Replace(providerConfigOf(t, []string{"east"}, fmt.Sprintf("request_timeout = %q", timeout), kubeconfigConnection),
		"  clusters = {\n", "  clusters = {\n"+silent, 1)
	destinations := func(clients string) string {
		var b strings.Builder
		for i := range resources {
			fmt.Fprintf(&b, `
resource "mesh_virtual_destination" "s%[1]d" {
  name     = "silent-%[1]d"
  hostname = "silent-%[1]d.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [{ cluster = "east", namespace = "users", service = "user" }]
  clients  = { clusters = %[2]s }
}
`, i, clients)
		}
		return b.String()
	}
	w := newRelTF(t)
	// Before the cleanup's destroy: retire the silent cluster, which drops
	// what state lists there without contacting it.
	relCleanup(t, w, func() {
		w.write(providerConfigOf(t, []string{"east"}, `retired_clusters = ["silent"]`, kubeconfigConnection) + destinations(`["east"]`))
		if out, code := w.run("apply", "-auto-approve"); code != 0 {
			t.Errorf("cleanup: retiring the silent cluster failed:\n%s", out)
		}
	})

	w.write(provider + destinations(`["east", "silent"]`))
	start := time.Now()
	out := w.applyFails()
	took, conns := time.Since(start), accepted()
	t.Logf("apply of %d resources with a silent cluster: %s (request_timeout %s), %d connections to it", resources, took.Round(time.Second), timeout, conns)
	flat := strings.Join(strings.Fields(out), " ")
	if !regexp.MustCompile(`cluster silent.*did not answer`).MatchString(flat) {
		t.Fatalf("the apply does not name the silent cluster:\n%s", out)
	}
	if conns >= resources {
		t.Errorf("the apply opened %d connections to the silent cluster, one or more per resource (%d): resources waited for it one after another instead of the first timeout marking it silent", conns, resources)
	}
	// Nothing the silent cluster never answered is lost: east's objects
	// are all listed, and exist.
	for i := range resources {
		w.requireExactIn(fmt.Sprintf("mesh_virtual_destination.s%d", i), "virtual-destination", fmt.Sprintf("silent-%d", i), "east")
	}

	start, before := time.Now(), accepted()
	out, code := w.run("plan")
	took, conns = time.Since(start), accepted()-before
	t.Logf("plan (refresh) of %d resources with a silent cluster: %s, %d connections to it", resources, took.Round(time.Second), conns)
	if code != 0 && !strings.Contains(out, "silent") {
		t.Fatalf("plan failed without naming the silent cluster:\n%s", out)
	}
	if !strings.Contains(strings.Join(strings.Fields(out), " "), "cluster silent") {
		t.Errorf("the plan does not warn about the silent cluster:\n%s", out)
	}
	if conns >= resources {
		t.Errorf("the plan opened %d connections to the silent cluster, one or more per resource (%d): resources waited for it one after another", conns, resources)
	}
}

// An exec credential plugin that never returns (waiting for a login that
// never comes) does not hang the run: it is stopped at request_timeout and
// the error names the plugin and the cluster.
func TestAccReliability_hangingExecPlugin(t *testing.T) {
	plugin := filepath.Join(t.TempDir(), "hanging-credential")
	if err := os.WriteFile(plugin, []byte("#!/bin/sh\nexec sleep 600\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	conn := func(t *testing.T, c string) string {
		if c != "onprem" {
			return kubeconfigConnection(t, c)
		}
		return fmt.Sprintf("host = %q\n        cluster_ca_certificate = %q\n        exec = { api_version = \"client.authentication.k8s.io/v1\", command = %q }",
			testMesh.Server("onprem"), testMesh.CA("onprem"), plugin)
	}
	w := newRelTF(t)
	relCleanup(t, w, func() { w.write(providerConfig(t, "")) })
	w.write(providerConfigWith(t, `request_timeout = "3s"`, conn) + meshClusterConfig("onprem", `  mtls_mode = "STRICT"`))
	out := strings.Join(strings.Fields(w.applyFails()), " ")
	if !strings.Contains(out, fmt.Sprintf("The exec credential plugin %q of cluster onprem did not finish within 3s (the provider's request_timeout) and was stopped.", plugin)) {
		t.Fatalf("the failure does not say the exec plugin of onprem was stopped:\n%s", out)
	}
	if left := liveOwnedIn(t, []string{"onprem"}, "cluster", "onprem"); len(left) > 0 {
		t.Fatalf("objects written without credentials? %v", left)
	}
}
