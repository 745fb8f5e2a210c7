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
	"strings"
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
// leader election off, metrics off, health on a free localhost port and
// source-controller's artifact storage in the mesh directory, served on
// another free localhost port from which kustomize-controller fetches.
// Each runs supervised: one that ends on its own is started again on
// fresh ports, as Kubernetes restarts a controller's pod, and FluxReport
// tells a test how often that happened and how each log ends.

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

// fluxProc is one controller, supervised: started again when it ends on
// its own (supervise).
type fluxProc struct {
	name       string
	spec       fluxSpec
	kubeconfig string
	log        *os.File
	stopping   chan struct{} // closed by stop
	done       chan struct{} // closed when the supervisor has ended

	mu     sync.Mutex
	cmd    *exec.Cmd
	health string // readiness URL of the latest start
	exits  int
	err    error
}

// fluxState is the mesh's Flux processes, by cluster.
type fluxState struct {
	mu      sync.Mutex
	running map[string]*flux
	// storage is each cluster's artifact storage port, kept for the
	// mesh's life: artifact URLs in OCIRepository statuses name it, and
	// kustomize-controller keeps fetching the URL it read, so a
	// source-controller started again (StartFlux after StopFlux, or a
	// restart of its process) serves them where they were.
	storage map[string]int
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
	storagePort, again := m.flux.storage[name]
	if !again {
		// The first start in this mesh: a clean directory and a free
		// port for the storage; a start again keeps both.
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
		ports, err := freePorts(1)
		if err != nil {
			return err
		}
		storagePort = ports[0]
		if m.flux.storage == nil {
			m.flux.storage = map[string]int{}
		}
		m.flux.storage[name] = storagePort
	}
	storage := filepath.Join(dir, "storage")
	if err := os.MkdirAll(storage, 0o700); err != nil {
		return err
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := writeClusterKubeconfig(kubeconfig, name, c); err != nil {
		return err
	}
	// Metrics are off (nothing reads them): every listener less is one
	// port fewer that another process on the machine can take between
	// freePorts and the controller's bind. A controller that exits anyway
	// (a port taken meanwhile, a crash) is started again on a fresh health
	// port, as its Deployment would restart it (fluxProc.supervise); the
	// storage port stays the cluster's (fluxState.storage).
	common := func(health string) []string {
		return []string{"--metrics-addr=0", "--health-addr=" + health,
			"--enable-leader-election=false", "--watch-all-namespaces=true", "--log-encoding=console"}
	}
	specs := []fluxSpec{
		{bin: filepath.Join(m.binDir, SourceControllerBinary), ports: 1, args: func(p []int) []string {
			addr := fmt.Sprintf("127.0.0.1:%d", storagePort)
			return append(common(fmt.Sprintf("127.0.0.1:%d", p[0])),
				"--storage-path="+storage, "--storage-addr="+addr, "--storage-adv-addr="+addr)
		}},
		{bin: filepath.Join(m.binDir, KustomizeControllerBinary), ports: 1, args: func(p []int) []string {
			return common(fmt.Sprintf("127.0.0.1:%d", p[0]))
		}},
	}
	f := &flux{}
	for _, s := range specs {
		p, err := startFluxProc(dir, kubeconfig, s)
		if err != nil {
			return errors.Join(fmt.Errorf("localmesh: cluster %s: %w", name, err), f.stop())
		}
		f.procs = append(f.procs, p)
	}
	for _, p := range f.procs {
		if err := p.waitReady(ctx); err != nil {
			return errors.Join(fmt.Errorf("localmesh: cluster %s: %w", name, err), f.stop())
		}
	}
	if m.flux.running == nil {
		m.flux.running = map[string]*flux{}
	}
	m.flux.running[name] = f
	return nil
}

// FluxRunning reports whether Flux's controllers run against the named
// cluster (StartFlux, not stopped since).
func (m *Mesh) FluxRunning(name string) bool {
	m.flux.mu.Lock()
	defer m.flux.mu.Unlock()
	return m.flux.running[name] != nil
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

// fluxSpec is how to start one controller: its binary, how many fresh
// ports it listens on (the first is its health address) and its command
// line for them.
type fluxSpec struct {
	bin   string
	ports int
	args  func(ports []int) []string
}

// maxFluxRestarts bounds how often a controller that exits is started
// again before it is left stopped (and the tests waiting on it report
// its log). Restarts are paced as Kubernetes paces a crashing pod's:
// fluxRestartDelay after the first end, doubling up to fluxRestartMaxDelay,
// so a controller that ends while its API server is stopped for a while
// is still there when the API server comes back.
const maxFluxRestarts = 10

var (
	fluxRestartDelay    = 250 * time.Millisecond
	fluxRestartMaxDelay = 10 * time.Second
)

// startFluxProc starts one controller with KUBECONFIG set (controller-
// runtime reads it) and its output appended to <dir>/<name>.log, and
// supervises it.
func startFluxProc(dir, kubeconfig string, s fluxSpec) (*fluxProc, error) {
	name := filepath.Base(s.bin)
	log, err := openLog(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, err
	}
	p := &fluxProc{name: name, spec: s, kubeconfig: kubeconfig, log: log,
		stopping: make(chan struct{}), done: make(chan struct{})}
	exited, err := p.start()
	if err != nil {
		log.Close()
		return nil, err
	}
	go p.supervise(exited)
	return p, nil
}

// start runs the controller once on fresh ports; exited yields its end.
func (p *fluxProc) start() (exited chan error, err error) {
	ports, err := freePorts(p.spec.ports)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(p.spec.bin, p.spec.args(ports)...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+p.kubeconfig)
	cmd.Stdout, cmd.Stderr = p.log, p.log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", p.name, err)
	}
	p.mu.Lock()
	p.cmd, p.health = cmd, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[0])
	p.mu.Unlock()
	exited = make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited, nil
}

// supervise waits for the running controller to end. Asked to stop, it
// sends SIGTERM (SIGKILL after fluxStopTimeout); ended on its own, the
// controller is started again, on fresh ports, up to maxFluxRestarts
// times, and each end is written to its log and counted.
func (p *fluxProc) supervise(exited chan error) {
	defer close(p.done)
	for {
		select {
		case <-p.stopping:
			p.mu.Lock()
			cmd := p.cmd
			p.mu.Unlock()
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-exited:
			case <-time.After(fluxStopTimeout):
				if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
					p.setErr(fmt.Errorf("killing %s: %w", p.name, err))
				}
				<-exited
			}
			return
		case err := <-exited:
			p.mu.Lock()
			p.exits++
			n := p.exits
			p.mu.Unlock()
			fmt.Fprintf(p.log, "localmesh: %s ended (%v), end %d of at most %d restarts\n", p.name, err, n, maxFluxRestarts)
			if n > maxFluxRestarts {
				p.setErr(fmt.Errorf("%s ended %d times (log: %s)", p.name, n, p.log.Name()))
				return
			}
			delay := min(fluxRestartDelay<<(n-1), fluxRestartMaxDelay)
			select {
			case <-p.stopping:
				return
			case <-time.After(delay):
			}
			next, err := p.start()
			if err != nil {
				p.setErr(err)
				return
			}
			exited = next
		}
	}
}

func (p *fluxProc) setErr(err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
}

// Exits is how many times the controller ended on its own.
func (p *fluxProc) Exits() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.exits
}

// waitReady polls the controller's readiness endpoint (on the ports of
// its latest start) until it answers 200, the supervisor gives up, or
// fluxStartTimeout passes.
func (p *fluxProc) waitReady(ctx context.Context) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(fluxStartTimeout)
	for {
		p.mu.Lock()
		url := p.health
		p.mu.Unlock()
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-p.done:
			return fmt.Errorf("%s stopped at start (log: %s)", p.name, p.log.Name())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s (log: %s)", p.name, fluxStartTimeout, p.log.Name())
		}
	}
}

// stop ends every process and waits for each. A nil f is stopped already.
func (f *flux) stop() error {
	if f == nil {
		return nil
	}
	for _, p := range f.procs {
		close(p.stopping)
	}
	var errs []error
	for _, p := range f.procs {
		<-p.done
		p.mu.Lock()
		if p.err != nil {
			errs = append(errs, p.err)
		}
		p.mu.Unlock()
		if err := p.log.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	f.procs = nil
	return errors.Join(errs...)
}

// FluxReport describes the named cluster's Flux controllers for a test
// that waited on them in vain: per controller, how many times it ended on
// its own, and the last lines of its log.
func (m *Mesh) FluxReport(name string) string {
	m.flux.mu.Lock()
	defer m.flux.mu.Unlock()
	f := m.flux.running[name]
	if f == nil {
		return "Flux does not run against cluster " + name
	}
	var b strings.Builder
	for _, p := range f.procs {
		fmt.Fprintf(&b, "%s ended on its own %d times; the end of %s:\n%s\n", p.name, p.Exits(), p.log.Name(), tail(p.log.Name(), 40))
	}
	return b.String()
}

// tail returns the last n lines of the file at path, or why it cannot.
func tail(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
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
