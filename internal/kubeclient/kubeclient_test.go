package kubeclient

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRESTConfigFromHost(t *testing.T) {
	cfg, err := RESTConfig(Connection{Host: "https://203.0.113.1:6443", Token: "t"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://203.0.113.1:6443" || cfg.BearerToken != "t" || cfg.Timeout != DefaultTimeout {
		t.Fatalf("config %+v", cfg)
	}
}

func TestRESTConfigFromKubeconfig(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "config")
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters:
- name: east
  cluster: {server: "https://198.51.100.7:6443"}
users:
- name: admin
  user: {token: "from-file"}
contexts:
- name: east
  context: {cluster: east, user: admin}
current-context: east
`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := RESTConfig(Connection{ConfigPath: kubeconfig}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Host != "https://198.51.100.7:6443" || cfg.BearerToken != "from-file" {
		t.Fatalf("config %+v", cfg)
	}
}

// Empty settings are an error, never the credentials of the machine the
// provider runs on, even inside a pod (where client-go's deferred loader
// would pick the pod's service account).
func TestRESTConfigNeverFallsBackToInCluster(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
	t.Setenv("KUBERNETES_SERVICE_PORT", "443")
	t.Setenv("KUBECONFIG", "")
	cfg, err := RESTConfig(Connection{}, 0)
	if err == nil {
		t.Fatalf("empty settings connected to %q", cfg.Host)
	}
	if !strings.Contains(err.Error(), "in_cluster") {
		t.Fatalf("the error does not say how to connect: %v", err)
	}
}

// in_cluster is honoured only when asked for, and outside a pod says so.
func TestRESTConfigInClusterOutsideAPod(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	_, err := RESTConfig(Connection{InCluster: true}, 0)
	if err == nil || !strings.Contains(err.Error(), "not a pod") {
		t.Fatalf("want the not-a-pod error, got %v", err)
	}
}

// An exec credential plugin that is not installed is an error naming the
// command and what to do instead, before any request.
func TestExecPluginNotInstalled(t *testing.T) {
	_, err := RESTConfig(Connection{Host: "https://127.0.0.1:1", Exec: &Exec{APIVersion: "client.authentication.k8s.io/v1", Command: "mesh-test-no-such-plugin"}}, 0)
	if err == nil || !strings.Contains(err.Error(), `"mesh-test-no-such-plugin" is not installed`) || !strings.Contains(err.Error(), "token") {
		t.Fatalf("want an error naming the missing plugin and the token alternative, got %v", err)
	}
}

// Kubeconfig files merge in order, and a cluster without a context takes
// the context named like it; a context that is not there is an error.
func TestConfigPathsAndContextByClusterName(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "a")
	second := filepath.Join(dir, "b")
	kc := func(names ...string) string {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
		for i, n := range names {
			fmt.Fprintf(&b, "- name: %s\n  cluster:\n    server: https://10.0.0.%d:6443\n", n, i+1)
		}
		b.WriteString("users:\n- name: u\n  user:\n    token: t\ncontexts:\n")
		for _, n := range names {
			fmt.Fprintf(&b, "- name: %s\n  context:\n    cluster: %s\n    user: u\n", n, n)
		}
		b.WriteString("current-context: " + names[0] + "\n")
		return b.String()
	}
	if err := os.WriteFile(first, []byte(kc("east")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(second, []byte(kc("other", "west")), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := RESTConfig(Connection{Name: "west", ConfigPaths: []string{first, second}}, 0)
	if err != nil || cfg.Host != "https://10.0.0.2:6443" {
		t.Fatalf("west from the merged files: host %v, err %v", cfg, err)
	}
	cfg, err = RESTConfig(Connection{Name: "nameless", ConfigPath: first}, 0)
	if err != nil || cfg.Host != "https://10.0.0.1:6443" {
		t.Fatalf("a cluster without a context of its name takes the current context: %v, %v", cfg, err)
	}
	if _, err := RESTConfig(Connection{Name: "east", ConfigPath: first, ConfigContext: "missing"}, 0); err == nil || !strings.Contains(err.Error(), `no context "missing"`) {
		t.Fatalf("a missing context: %v", err)
	}
	if _, err := RESTConfig(Connection{Name: "east", ConfigPaths: []string{filepath.Join(dir, "absent")}}, 0); err == nil {
		t.Fatal("a missing kubeconfig file is accepted")
	}
}

// A bearer token is never configured for a server over plain http://,
// wherever it comes from: an exec credential plugin of the provider's
// settings, a kubeconfig user's token or exec plugin. The error names the
// server and where the token comes from, and the fixes; insecure = true
// allows it, and a server over https:// is fine.
func TestTokenOverPlainHTTPIsRefused(t *testing.T) {
	sh := &Exec{APIVersion: "client.authentication.k8s.io/v1", Command: "sh", Args: []string{"-c", "exit 1"}}
	kubeconfig := func(server, user string) string {
		p := filepath.Join(t.TempDir(), "config")
		if err := os.WriteFile(p, []byte(fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: east
  cluster: {server: %q}
users:
- name: admin
  user: %s
contexts:
- name: east
  context: {cluster: east, user: admin}
current-context: east
`, server, user)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	execUser := `{exec: {apiVersion: client.authentication.k8s.io/v1, command: sh, args: ["-c", "exit 1"], interactiveMode: Never}}`
	for _, tc := range []struct {
		name string
		conn Connection
		from string // "" when allowed
	}{
		{"exec setting", Connection{Host: "http://198.51.100.7:8080", Exec: sh}, `the exec credential plugin "sh"`},
		{"exec setting, scheme in capitals", Connection{Host: "HTTP://198.51.100.7:8080", Exec: sh}, `the exec credential plugin "sh"`},
		{"kubeconfig token", Connection{ConfigPath: kubeconfig("http://198.51.100.7:8080", `{token: "from-file"}`)}, "the kubeconfig user's token"},
		{"kubeconfig exec", Connection{ConfigPath: kubeconfig("http://198.51.100.7:8080", execUser)}, `the kubeconfig user's exec credential plugin "sh"`},
		{"host over a kubeconfig token", Connection{ConfigPath: kubeconfig("https://198.51.100.7:6443", `{token: "from-file"}`), Host: "http://198.51.100.7:8080"}, "the kubeconfig user's token"},
		{"insecure", Connection{Host: "http://198.51.100.7:8080", Exec: sh, Insecure: true}, ""},
		{"https exec", Connection{Host: "https://198.51.100.7:6443", Exec: sh}, ""},
		{"https kubeconfig token", Connection{ConfigPath: kubeconfig("https://198.51.100.7:6443", `{token: "from-file"}`)}, ""},
		{"http kubeconfig without a token", Connection{ConfigPath: kubeconfig("http://198.51.100.7:8080", `{}`)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := RESTConfig(tc.conn, 0)
			if tc.from == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var clear *ClearTokenError
			if !errors.As(err, &clear) {
				t.Fatalf("want a ClearTokenError, got %v", err)
			}
			for _, want := range []string{"198.51.100.7:8080", tc.from, "clear text", "https://", "insecure = true"} {
				if !strings.Contains(strings.ToLower(err.Error()), strings.ToLower(want)) {
					t.Fatalf("error %q does not say %q", err, want)
				}
			}
		})
	}
}
