package kubeclient

import (
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
