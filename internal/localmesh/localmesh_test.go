package localmesh

import (
	"context"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
)

var (
	crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	vsGVR  = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}
)

// virtualService returns a VirtualService routing to reviews, with hosts set
// to the given value (a list when valid).
func virtualService(name string, hosts any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "networking.istio.io/v1",
		"kind":       "VirtualService",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"hosts": hosts,
			"http":  []any{map[string]any{"route": []any{map[string]any{"destination": map[string]any{"host": "reviews"}}}}},
		},
	}}
}

func dyn(t *testing.T, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// listNamespaces fails the test unless cfg can list namespaces.
func listNamespaces(t *testing.T, ctx context.Context, what string, cfg *rest.Config) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatalf("%s: listing namespaces: %v", what, err)
	}
}

// tokenConfig is an inline host+token+CA configuration, as a user would write.
func tokenConfig(m *Mesh, cluster, token string) *rest.Config {
	return &rest.Config{Host: m.Server(cluster), BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: m.CA(cluster)}}
}

func TestLocalMesh(t *testing.T) {
	ctrllog.SetLogger(logr.Discard())
	if _, err := CheckBinaries(""); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	dir := t.TempDir()
	start := time.Now()
	m, err := Start(ctx, Options{Clusters: []string{"alpha", "beta"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Stop() })
	t.Logf("2 clusters up in %s", time.Since(start).Round(time.Millisecond))

	// Every cluster serves the Istio CRDs and has istio-system.
	for _, c := range m.Clusters() {
		if _, err := dyn(t, m.RESTConfig(c)).Resource(crdGVR).Get(ctx, "virtualservices.networking.istio.io", metav1.GetOptions{}); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
		cs := kubernetes.NewForConfigOrDie(m.RESTConfig(c))
		if _, err := cs.CoreV1().Namespaces().Get(ctx, IstioNamespace, metav1.GetOptions{}); err != nil {
			t.Fatalf("%s: %v", c, err)
		}
	}

	// The CRD schema validates: a well-formed VirtualService is stored,
	// one with a string where a list belongs is rejected.
	vs := dyn(t, m.RESTConfig("alpha")).Resource(vsGVR).Namespace("default")
	if _, err := vs.Create(ctx, virtualService("reviews", []any{"reviews"}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a valid VirtualService: %v", err)
	}
	_, err = vs.Create(ctx, virtualService("bad", "reviews"), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Fatalf("creating a VirtualService with hosts as a string: got %v, want an Invalid error", err)
	}
	t.Logf("invalid VirtualService rejected: %v", err)

	// Istio's own validation stands in front of every cluster: what the
	// CRD schema lets through but istiod would refuse is refused with
	// Istio's message, and valid Istio objects are admitted.
	drGVR := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "destinationrules"}
	for _, c := range m.Clusters() {
		d := dyn(t, m.RESTConfig(c))
		noRoutes := virtualService("no-routes", []any{"reviews"})
		delete(noRoutes.Object["spec"].(map[string]any), "http")
		_, err := d.Resource(vsGVR).Namespace("default").Create(ctx, noRoutes, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "http, tcp or tls must be provided in virtual service") {
			t.Errorf("%s: VirtualService without routes: got %v, want Istio's refusal", c, err)
		}
		noHost := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "networking.istio.io/v1", "kind": "DestinationRule",
			"metadata": map[string]any{"name": "no-host", "namespace": "default"},
			"spec":     map[string]any{"host": "", "trafficPolicy": map[string]any{"tls": map[string]any{"mode": "ISTIO_MUTUAL"}}},
		}}
		_, err = d.Resource(drGVR).Namespace("default").Create(ctx, noHost, metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "denied the request") || !strings.Contains(err.Error(), "domain") {
			t.Errorf("%s: DestinationRule without host: got %v, want Istio's refusal", c, err)
		}
		t.Logf("%s: %v", c, err)
		if _, err := d.Resource(vsGVR).Namespace("default").Create(ctx, virtualService("valid", []any{"ratings"}), metav1.CreateOptions{}); err != nil {
			t.Errorf("%s: a valid VirtualService is refused: %v", c, err)
		}
	}

	// The kubeconfig has a working context per cluster.
	for _, c := range m.Clusters() {
		cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
			&clientcmd.ClientConfigLoadingRules{ExplicitPath: m.Kubeconfig()},
			&clientcmd.ConfigOverrides{CurrentContext: c}).ClientConfig()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Host != m.Server(c) {
			t.Fatalf("kubeconfig context %s points at %s, want %s", c, cfg.Host, m.Server(c))
		}
		listNamespaces(t, ctx, "kubeconfig context "+c, cfg)
	}

	// A service account token works with host+token+CA only.
	for _, c := range m.Clusters() {
		token, err := m.ServiceAccountToken(ctx, c, "terraform", "provider", "cluster-admin")
		if err != nil {
			t.Fatal(err)
		}
		listNamespaces(t, ctx, "token on "+c, tokenConfig(m, c, token))
	}
	alphaToken, err := m.ServiceAccountToken(ctx, "alpha", "terraform", "provider", "cluster-admin")
	if err != nil {
		t.Fatal(err)
	}

	// StopCluster makes alpha unreachable and leaves beta alone.
	if err := m.StopCluster("alpha"); err != nil {
		t.Fatal(err)
	}
	down := m.RESTConfig("alpha")
	down.Timeout = 2 * time.Second
	if _, err := kubernetes.NewForConfigOrDie(down).CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("alpha still answers after StopCluster")
	}
	listNamespaces(t, ctx, "beta while alpha is down", m.RESTConfig("beta"))

	// StartCluster brings alpha back at the same address with its data and
	// credentials.
	start = time.Now()
	if err := m.StartCluster("alpha"); err != nil {
		t.Fatal(err)
	}
	t.Logf("alpha restarted in %s", time.Since(start).Round(time.Millisecond))
	if _, err := vs.Get(ctx, "reviews", metav1.GetOptions{}); err != nil {
		t.Fatalf("VirtualService after restart: %v", err)
	}
	listNamespaces(t, ctx, "alpha token after restart", tokenConfig(m, "alpha", alphaToken))

	// Stop leaves no process behind.
	if err := m.Stop(); err != nil {
		t.Fatal(err)
	}
	// (the webhook has a --cert-dir under dir too)
	if pids := append(leftoverPIDs("--cert-dir="+dir+"/"), leftoverPIDs("--data-dir="+dir+"/")...); len(pids) > 0 {
		t.Fatalf("processes left after Stop: %v", pids)
	}
}
