// Package localmesh runs a local mesh of real Kubernetes API servers for demos
// and acceptance tests (DESIGN.md section 5).
//
// Each cluster is one kube-apiserver with its own etcd, started through
// controller-runtime's envtest, with Istio's CRDs installed, an
// istio-system namespace and Istio's validating webhook (webhook.go), which
// is what an Istio installation provides to configuration tools. The binaries and the CRD file come from a directory
// prepared by tools/build-binaries.sh (usually passed as $LOCAL_MESH_BIN).
//
// On request (Mesh.StartFlux, flux.go), Flux's source-controller and
// kustomize-controller run as local processes against one cluster, with
// Flux's CRDs installed there, for pull delivery.
//
// There is no controller manager: namespaces that are deleted stay
// Terminating, and nothing garbage-collects owned objects.
//
// envtest logs through controller-runtime's logger. A program that runs for
// more than 30 seconds without calling
// sigs.k8s.io/controller-runtime/pkg/log.SetLogger (logr.Discard() will do)
// gets a one-time "log.SetLogger(...) was never called" warning on stderr.
package localmesh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

const (
	// EnvBinDir is the environment variable naming the directory that holds
	// kube-apiserver, etcd and the Istio CRD file; it is the default for
	// Options.BinDir.
	EnvBinDir = "LOCAL_MESH_BIN"
	// CRDFile is the name of the Istio CRD file inside the binary directory.
	CRDFile = "istio-crds.yaml"
	// IstioNamespace is created in every cluster.
	IstioNamespace = "istio-system"
	// RecordsNamespace, the provider's default records_namespace, is
	// created in every cluster too, as an administrator would.
	RecordsNamespace = "mesh-intent-records"

	startTimeout = 2 * time.Minute
	stopTimeout  = 30 * time.Second
)

// DefaultClusters are the clusters started when Options.Clusters is empty.
var DefaultClusters = []string{"east", "west", "onprem"}

// Options configures Start.
type Options struct {
	// Clusters are the names of the clusters to start; DefaultClusters if empty.
	// A name is also the kubeconfig context, cluster and user name.
	Clusters []string
	// Dir holds the kubeconfig and, per cluster, etcd's data, the API
	// server's certificates and both logs (<Dir>/<cluster>/). Start wipes the
	// directories of the clusters it starts, and stops any kube-apiserver or
	// etcd still using Dir, so two meshes must not share one. If empty, a
	// temporary directory is used and removed by Stop.
	Dir string
	// BinDir holds kube-apiserver, etcd, istio-webhook and istio-crds.yaml as built by
	// tools/build-binaries.sh. Defaults to $LOCAL_MESH_BIN.
	BinDir string
}

// Mesh is a set of running local clusters. Its methods are safe for
// concurrent use.
type Mesh struct {
	dir      string
	ownsDir  bool
	names    []string
	clusters map[string]*cluster
	webhook  *webhook
	binDir   string
	flux     fluxState
}

// cluster is one API server with its etcd.
type cluster struct {
	mu      sync.Mutex
	name    string
	env     *envtest.Environment
	admin   *rest.Config
	crds    []*apiextensionsv1.CustomResourceDefinition
	logs    []*os.File
	running bool
}

var validName = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// Start starts the clusters in parallel and returns once every one of them
// serves the Istio CRDs and has an istio-system namespace. It writes a
// kubeconfig (see Kubeconfig). On error nothing is left running.
func Start(ctx context.Context, opts Options) (*Mesh, error) {
	names := opts.Clusters
	if len(names) == 0 {
		names = DefaultClusters
	}
	seen := map[string]bool{}
	for _, n := range names {
		if !validName.MatchString(n) || seen[n] {
			return nil, fmt.Errorf("localmesh: invalid or duplicate cluster name %q (want unique DNS labels)", n)
		}
		seen[n] = true
	}
	binDir, err := CheckBinaries(opts.BinDir)
	if err != nil {
		return nil, err
	}

	m := &Mesh{dir: opts.Dir, names: append([]string(nil), names...), clusters: map[string]*cluster{}, binDir: binDir}
	if m.dir == "" {
		if m.dir, err = os.MkdirTemp("", "localmesh-"); err != nil {
			return nil, err
		}
		m.ownsDir = true
	} else if m.dir, err = filepath.Abs(m.dir); err != nil {
		return nil, err
	}
	// Processes left over by an earlier run that was killed would hold the
	// directories we are about to wipe.
	if _, err := KillLeftovers(m.dir); err != nil {
		return nil, err
	}
	if m.webhook, err = startWebhook(ctx, filepath.Join(m.dir, "webhook"), binDir); err != nil {
		return nil, errors.Join(err, m.Stop())
	}

	var wg sync.WaitGroup
	errs := make([]error, len(names))
	for i, name := range names {
		c := &cluster{name: name}
		m.clusters[name] = c
		wg.Go(func() { errs[i] = c.start(ctx, filepath.Join(m.dir, name), binDir, m.webhook) })
	}
	wg.Wait()
	err = errors.Join(errs...)
	if err == nil {
		err = m.writeKubeconfig()
	}
	if err != nil {
		return nil, errors.Join(err, m.Stop())
	}
	return m, nil
}

// CheckBinaries returns the binary directory to use (binDir, or
// $LOCAL_MESH_BIN if binDir is empty) after checking that it holds
// kube-apiserver, etcd and the Istio CRD file. Its error says how to build them.
func CheckBinaries(binDir string) (string, error) {
	const hint = "run tools/build-binaries.sh (or `make local-mesh-bin`) and set " + EnvBinDir + " to the directory it prints"
	if binDir == "" {
		binDir = os.Getenv(EnvBinDir)
	}
	if binDir == "" {
		return "", fmt.Errorf("localmesh: no binary directory given and %s is not set: %s", EnvBinDir, hint)
	}
	for _, f := range []string{"kube-apiserver", "etcd", WebhookBinary, CRDFile} {
		if _, err := os.Stat(filepath.Join(binDir, f)); err != nil {
			return "", fmt.Errorf("localmesh: %s is missing from %s: %s", f, binDir, hint)
		}
	}
	return filepath.Abs(binDir)
}

// start brings up a fresh cluster whose state lives in dir, with Istio's
// validation webhook w in front of it.
func (c *cluster) start(ctx context.Context, dir, binDir string, w *webhook) error {
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	for _, d := range []string{"etcd", "apiserver"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	apiLog, err := openLog(filepath.Join(dir, "kube-apiserver.log"))
	if err != nil {
		return err
	}
	etcdLog, err := openLog(filepath.Join(dir, "etcd.log"))
	if err != nil {
		apiLog.Close()
		return err
	}
	c.logs = []*os.File{apiLog, etcdLog}

	// Fixed data and cert directories (instead of envtest's temporary
	// ones) are what lets StartCluster bring back the same state; the
	// ports envtest picks on the first start are kept by the structs.
	useExisting := false
	c.env = &envtest.Environment{
		ControlPlane: envtest.ControlPlane{
			Etcd: &envtest.Etcd{
				Path: filepath.Join(binDir, "etcd"), DataDir: filepath.Join(dir, "etcd"),
				Out: etcdLog, Err: etcdLog,
			},
			APIServer: &envtest.APIServer{
				Path: filepath.Join(binDir, "kube-apiserver"), CertDir: filepath.Join(dir, "apiserver"),
				Out: apiLog, Err: apiLog,
			},
		},
		CRDInstallOptions:        envtest.CRDInstallOptions{Paths: []string{filepath.Join(binDir, CRDFile)}, MaxTime: startTimeout},
		ErrorIfCRDPathMissing:    true,
		UseExistingCluster:       &useExisting,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  stopTimeout,
	}
	// envtest.Environment.Start also installs the CRDs and waits until
	// discovery serves them.
	if c.admin, err = c.env.Start(); err != nil {
		return fmt.Errorf("localmesh: starting cluster %s (logs in %s): %w", c.name, dir, err)
	}
	c.running = true
	c.crds = c.env.CRDs
	cs, err := kubernetes.NewForConfig(c.admin)
	if err != nil {
		return err
	}
	for _, ns := range []string{IstioNamespace, RecordsNamespace} {
		if err := ensureNamespace(ctx, cs, ns); err != nil {
			return fmt.Errorf("localmesh: cluster %s: %w", c.name, err)
		}
	}
	if err := w.register(ctx, c.admin); err != nil {
		return fmt.Errorf("localmesh: cluster %s: %w", c.name, err)
	}
	return nil
}

func openLog(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
}

func ensureNamespace(ctx context.Context, cs kubernetes.Interface, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// Stop stops every cluster and waits until their processes have exited. It
// removes the directory only if Start created it.
func (m *Mesh) Stop() error {
	// Flux's controllers first: they talk to the API servers.
	fluxErr := m.stopAllFlux()
	var wg sync.WaitGroup
	errs := make(chan error, len(m.clusters))
	for _, c := range m.clusters {
		wg.Go(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			// Stopping is idempotent, and a failed start may have left
			// processes running, so stop whatever was ever set up.
			if c.env != nil {
				errs <- c.env.Stop()
			}
			c.running = false
			for _, f := range c.logs {
				f.Close()
			}
			c.logs = nil
		})
	}
	wg.Wait()
	close(errs)
	all := []error{fluxErr}
	for err := range errs {
		all = append(all, err)
	}
	m.webhook.stop()
	// envtest kills a process that outlives its stop timeout; make sure
	// nothing is left behind in any case.
	if _, err := KillLeftovers(m.dir); err != nil {
		all = append(all, err)
	}
	if m.ownsDir {
		all = append(all, os.RemoveAll(m.dir))
	}
	return errors.Join(all...)
}

// StopCluster stops one cluster's API server and etcd, keeping its data, so
// that it becomes unreachable until StartCluster.
func (m *Mesh) StopCluster(name string) error {
	c, err := m.cluster(name)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.running {
		return nil
	}
	c.running = false
	return c.env.ControlPlane.Stop()
}

// StartCluster restarts a cluster stopped by StopCluster on the same address,
// with the same etcd data, certificates and credentials, so kubeconfigs,
// tokens and stored objects stay valid. It returns once the Istio CRDs are
// served again.
func (m *Mesh) StartCluster(name string) error {
	c, err := m.cluster(name)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.running {
		return nil
	}
	if err := c.env.ControlPlane.Start(); err != nil {
		return fmt.Errorf("localmesh: restarting cluster %s: %w", name, err)
	}
	c.running = true
	opts := envtest.CRDInstallOptions{MaxTime: startTimeout, PollInterval: 100 * time.Millisecond}
	if err := envtest.WaitForCRDs(c.admin, c.crds, opts); err != nil {
		return fmt.Errorf("localmesh: cluster %s: waiting for the Istio CRDs after restart: %w", name, err)
	}
	return nil
}

// Clusters returns the cluster names in the order they were given.
func (m *Mesh) Clusters() []string { return append([]string(nil), m.names...) }

// Dir returns the directory holding the kubeconfig and the clusters' state.
func (m *Mesh) Dir() string { return m.dir }

// Kubeconfig returns the path of a kubeconfig with one context, cluster and
// user per cluster, each named after the cluster, with cluster-admin
// credentials (a client certificate in group system:masters). The current
// context is the first cluster.
func (m *Mesh) Kubeconfig() string { return filepath.Join(m.dir, "kubeconfig") }

// RESTConfig returns a cluster-admin client configuration for the named
// cluster, or nil if there is no such cluster. The result is a copy.
func (m *Mesh) RESTConfig(name string) *rest.Config {
	c, err := m.cluster(name)
	if err != nil {
		return nil
	}
	return rest.CopyConfig(c.admin)
}

// Server returns the named cluster's API server URL (https://127.0.0.1:port/),
// or "" if there is no such cluster.
func (m *Mesh) Server(name string) string {
	c, err := m.cluster(name)
	if err != nil {
		return ""
	}
	return c.admin.Host
}

// CA returns the PEM bundle of the CA that signed the named cluster's serving
// certificate, or nil if there is no such cluster.
func (m *Mesh) CA(name string) []byte {
	c, err := m.cluster(name)
	if err != nil {
		return nil
	}
	return append([]byte(nil), c.admin.CAData...)
}

func (m *Mesh) cluster(name string) (*cluster, error) {
	c, ok := m.clusters[name]
	if !ok {
		return nil, fmt.Errorf("localmesh: no cluster named %q (have %v)", name, m.names)
	}
	return c, nil
}
