package localmesh

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// Flux's source-controller and kustomize-controller run, on request, as
// local processes against one cluster of the mesh, for pull delivery
// (issue 35): tools/build-binaries.sh builds them from the modules
// tools/flux pins and copies their CRDs next to them as FluxCRDFile.
// StartFlux installs the CRDs, creates FluxNamespace and starts both with
// leader election off, metrics and health on free localhost ports and
// source-controller's artifact storage in the mesh directory, served on
// another free localhost port from which kustomize-controller fetches.

const (
	// SourceControllerBinary and KustomizeControllerBinary are Flux's
	// controllers in the binary directory.
	SourceControllerBinary    = "source-controller"
	KustomizeControllerBinary = "kustomize-controller"
	// FluxCRDFile holds Flux's CRDs (source and kustomize) in the binary
	// directory.
	FluxCRDFile = "flux-crds.yaml"
	// FluxNamespace is created in a cluster where Flux runs, as Flux's own
	// installation does.
	FluxNamespace = "flux-system"

	fluxStartTimeout = 2 * time.Minute
	fluxStopTimeout  = 10 * time.Second
)

// flux is Flux running against one cluster.
type flux struct {
	procs []*fluxProc
}

// fluxProc is one controller process.
type fluxProc struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
}

// fluxState is the mesh's Flux processes, by cluster.
type fluxState struct {
	mu      sync.Mutex
	running map[string]*flux
}

// CheckFluxBinaries returns an error naming what is missing from binDir
// (or $LOCAL_MESH_BIN when empty) for StartFlux, and how to build it.
func CheckFluxBinaries(binDir string) error {
	const hint = "run `make local-mesh-bin` (tools/build-binaries.sh) to build Flux's controllers from tools/flux"
	if binDir == "" {
		binDir = os.Getenv(EnvBinDir)
	}
	if binDir == "" {
		return fmt.Errorf("localmesh: no binary directory given and %s is not set: %s", EnvBinDir, hint)
	}
	for _, f := range []string{SourceControllerBinary, KustomizeControllerBinary, FluxCRDFile} {
		if _, err := os.Stat(filepath.Join(binDir, f)); err != nil {
			return fmt.Errorf("localmesh: %s is missing from %s: %s", f, binDir, hint)
		}
	}
	return nil
}

// StartFlux installs Flux's CRDs into the named cluster, creates
// FluxNamespace there and starts source-controller and
// kustomize-controller against it. It returns once both report ready.
// Stop (or StopFlux) ends them. Their logs are in <Dir>/flux/<cluster>/.
func (m *Mesh) StartFlux(ctx context.Context, name string) error {
	c, err := m.cluster(name)
	if err != nil {
		return err
	}
	if err := CheckFluxBinaries(m.binDir); err != nil {
		return err
	}
	m.flux.mu.Lock()
	defer m.flux.mu.Unlock()
	if m.flux.running[name] != nil {
		return fmt.Errorf("localmesh: Flux already runs against cluster %s", name)
	}
	admin := m.RESTConfig(name)
	if _, err := envtest.InstallCRDs(admin, envtest.CRDInstallOptions{
		Paths: []string{filepath.Join(m.binDir, FluxCRDFile)}, ErrorIfPathMissing: true, MaxTime: fluxStartTimeout,
	}); err != nil {
		return fmt.Errorf("localmesh: installing Flux's CRDs into cluster %s: %w", name, err)
	}
	cs, err := kubernetes.NewForConfig(admin)
	if err != nil {
		return err
	}
	if err := ensureNamespace(ctx, cs, FluxNamespace); err != nil {
		return fmt.Errorf("localmesh: cluster %s: %w", name, err)
	}

	dir := fluxDir(m.dir, name)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	storage := filepath.Join(dir, "storage")
	if err := os.MkdirAll(storage, 0o700); err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeClusterKubeconfig(kubeconfig, name, c); err != nil {
		return err
	}
	ports, err := freePorts(5)
	if err != nil {
		return err
	}
	addr := func(i int) string { return fmt.Sprintf("127.0.0.1:%d", ports[i]) }
	common := func(metrics, health string) []string {
		return []string{"--metrics-addr=" + metrics, "--health-addr=" + health,
			"--enable-leader-election=false", "--watch-all-namespaces=true", "--log-encoding=console"}
	}
	f := &flux{}
	specs := []struct {
		name, health string
		args         []string
	}{
		{SourceControllerBinary, addr(1), append(common(addr(0), addr(1)),
			"--storage-path="+storage, "--storage-addr="+addr(2), "--storage-adv-addr="+addr(2))},
		{KustomizeControllerBinary, addr(4), common(addr(3), addr(4))},
	}
	for _, s := range specs {
		p, err := startFluxProc(dir, filepath.Join(m.binDir, s.name), kubeconfig, s.args)
		if err != nil {
			return errors.Join(fmt.Errorf("localmesh: cluster %s: %w", name, err), f.stop())
		}
		f.procs = append(f.procs, p)
	}
	for i, s := range specs {
		if err := f.procs[i].waitReady(ctx, "http://"+s.health+"/readyz"); err != nil {
			return errors.Join(fmt.Errorf("localmesh: cluster %s: %w", name, err), f.stop())
		}
	}
	if m.flux.running == nil {
		m.flux.running = map[string]*flux{}
	}
	m.flux.running[name] = f
	return nil
}

// StopFlux stops the Flux controllers of the named cluster, if they run,
// and waits until they have exited.
func (m *Mesh) StopFlux(name string) error {
	m.flux.mu.Lock()
	defer m.flux.mu.Unlock()
	f := m.flux.running[name]
	delete(m.flux.running, name)
	return f.stop()
}

// stopAllFlux stops Flux everywhere, before the clusters stop.
func (m *Mesh) stopAllFlux() error {
	m.flux.mu.Lock()
	defer m.flux.mu.Unlock()
	var errs []error
	for name, f := range m.flux.running {
		errs = append(errs, f.stop())
		delete(m.flux.running, name)
	}
	return errors.Join(errs...)
}

// fluxDir holds one cluster's Flux kubeconfig, storage and logs. Its
// kubeconfig path is also how KillLeftovers recognises the processes.
func fluxDir(meshDir, cluster string) string { return filepath.Join(meshDir, "flux", cluster) }

// writeClusterKubeconfig writes a kubeconfig with the cluster's admin
// credentials only: Flux's controllers take the current context.
func writeClusterKubeconfig(path, name string, c *cluster) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: c.admin.Host, CertificateAuthorityData: c.admin.CAData}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{ClientCertificateData: c.admin.CertData, ClientKeyData: c.admin.KeyData}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	cfg.CurrentContext = name
	return clientcmd.WriteToFile(*cfg, path)
}

// startFluxProc starts one controller with KUBECONFIG set (controller-
// runtime reads it) and its output in <dir>/<name>.log.
func startFluxProc(dir, bin, kubeconfig string, args []string) (*fluxProc, error) {
	name := filepath.Base(bin)
	log, err := openLog(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		log.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &fluxProc{name: name, cmd: cmd, log: log, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	return p, nil
}

// waitReady polls the controller's readiness endpoint until it answers 200,
// the process exits, or fluxStartTimeout passes.
func (p *fluxProc) waitReady(ctx context.Context, url string) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(fluxStartTimeout)
	for {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s exited at start (log: %s)", p.name, p.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s (log: %s)", p.name, fluxStartTimeout, p.log.Name())
		}
	}
}

// stop ends every process (SIGTERM, then SIGKILL after fluxStopTimeout)
// and waits for each. A nil f is stopped already.
func (f *flux) stop() error {
	if f == nil {
		return nil
	}
	for _, p := range f.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	var errs []error
	for _, p := range f.procs {
		select {
		case <-p.done:
		case <-time.After(fluxStopTimeout):
			if err := p.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
				errs = append(errs, fmt.Errorf("killing %s: %w", p.name, err))
			}
			<-p.done
		}
		if err := p.log.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	f.procs = nil
	return errors.Join(errs...)
}

// freePorts returns n distinct free localhost TCP ports. They are held
// open until all are picked, so none repeats.
func freePorts(n int) ([]int, error) {
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	ports := make([]int, 0, n)
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("localmesh: finding a free port: %w", err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
