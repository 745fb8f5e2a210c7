// Command local-mesh runs the local mesh of Kubernetes API servers used by
// demos and acceptance tests (see internal/localmesh).
//
//	local-mesh up     [--dir .local-mesh] [--bin-dir DIR] [--clusters east,west,onprem] [--flux onprem]
//	local-mesh down   [--dir .local-mesh]
//	local-mesh status [--dir .local-mesh]
//
// "up" starts the clusters, writes DIR/kubeconfig (one context per cluster),
// DIR/local-mesh.pid and, once every cluster is ready, DIR/ready; then it
// stays in the foreground until SIGINT or SIGTERM, on which it stops every
// cluster. It does nothing if a mesh is already running for DIR. --flux
// also runs Flux's source-controller and kustomize-controller against the
// listed clusters (Mesh.StartFlux), for pull delivery.
// "down" stops the mesh running for DIR and any kube-apiserver or etcd it
// left behind. "status" exits 0 if a mesh is running and ready for DIR, 3 if
// it is starting and 1 if none is running.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/mesh-intent/terraform-provider-mesh/internal/localmesh"
)

const usage = `usage:
  local-mesh up     [--dir .local-mesh] [--bin-dir DIR] [--clusters east,west,onprem] [--flux onprem]
  local-mesh down   [--dir .local-mesh]
  local-mesh status [--dir .local-mesh]
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	// envtest logs through controller-runtime; its messages are not useful here.
	ctrllog.SetLogger(logr.Discard())

	fs := flag.NewFlagSet("local-mesh "+os.Args[1], flag.ExitOnError)
	fs.Usage = func() { fmt.Fprint(os.Stderr, usage) }
	dir := fs.String("dir", ".local-mesh", "directory for the kubeconfig, pid file, ready marker and cluster state")
	binDir := fs.String("bin-dir", "", "directory with kube-apiserver, etcd and istio-crds.yaml (default $"+localmesh.EnvBinDir+")")
	clusters := fs.String("clusters", strings.Join(localmesh.DefaultClusters, ","), "comma-separated cluster names")
	fluxClusters := fs.String("flux", "", "comma-separated clusters where Flux's controllers run (up only)")
	_ = fs.Parse(os.Args[2:])
	abs, err := filepath.Abs(*dir)
	if err != nil {
		fatal(err)
	}

	switch os.Args[1] {
	case "up":
		err = up(abs, *binDir, splitList(*clusters), splitList(*fluxClusters))
	case "down":
		err = down(abs)
	case "status":
		pid, running := lockHolder(abs)
		switch {
		case running && fileExists(readyFile(abs)):
			fmt.Printf("local mesh running in %s (pid %d); kubeconfig: %s\n", abs, pid, filepath.Join(abs, "kubeconfig"))
		case running:
			fmt.Printf("local mesh starting in %s (pid %d)\n", abs, pid)
			os.Exit(3)
		default:
			fmt.Printf("local mesh not running in %s\n", abs)
			os.Exit(1)
		}
	default:
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if err != nil {
		fatal(err)
	}
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "local-mesh:", err)
	os.Exit(1)
}

func pidFile(dir string) string   { return filepath.Join(dir, "local-mesh.pid") }
func readyFile(dir string) string { return filepath.Join(dir, "ready") }

// up runs the mesh until SIGINT or SIGTERM. The pid file is locked (flock)
// for as long as this process lives, which is how other invocations tell a
// running mesh from a stale pid file.
func up(dir, binDir string, clusters, fluxClusters []string) error {
	if len(fluxClusters) > 0 {
		// Before anything starts: a missing build fails at once.
		if err := localmesh.CheckFluxBinaries(binDir); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	lock, err := os.OpenFile(pidFile(dir), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		pid, _ := readPID(dir)
		fmt.Printf("local mesh already running in %s (pid %d)\n", dir, pid)
		return nil
	}
	if err := lock.Truncate(0); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(lock, "%d\n", os.Getpid()); err != nil {
		return err
	}
	_ = os.Remove(readyFile(dir))
	defer os.Remove(pidFile(dir))

	// Catch signals from now on, so one arriving during startup still
	// leads to a clean stop.
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	start := time.Now()
	m, err := localmesh.Start(ctx, localmesh.Options{Clusters: clusters, Dir: dir, BinDir: binDir})
	if err != nil && ctx.Err() != nil {
		fmt.Println("interrupted while starting; local mesh stopped")
		return nil
	}
	if err != nil {
		return err
	}
	for _, c := range fluxClusters {
		if err := m.StartFlux(ctx, c); err != nil {
			return errors.Join(err, m.Stop())
		}
		fmt.Printf("Flux's controllers run against %s (logs in %s)\n", c, filepath.Join(dir, "flux", c))
	}
	fmt.Printf("local mesh up in %s (pid %d)\n", time.Since(start).Round(time.Millisecond), os.Getpid())
	for _, c := range m.Clusters() {
		fmt.Printf("  %-10s %s\n", c, m.Server(c))
	}
	fmt.Printf("kubeconfig: %s\n", m.Kubeconfig())
	if err := os.WriteFile(readyFile(dir), []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return errors.Join(err, m.Stop())
	}

	<-ctx.Done()
	fmt.Println("stopping local mesh")
	_ = os.Remove(readyFile(dir))
	if err := m.Stop(); err != nil {
		return err
	}
	fmt.Println("local mesh stopped")
	return nil
}

// down signals the mesh running for dir, waits for it to exit, and then
// removes any kube-apiserver or etcd it left behind.
func down(dir string) error {
	if pid, running := lockHolder(dir); running {
		if pid <= 0 { // just starting; give it a moment to write its pid
			time.Sleep(time.Second)
			if pid, _ = readPID(dir); pid <= 0 {
				return fmt.Errorf("%s is locked but holds no pid", pidFile(dir))
			}
		}
		fmt.Printf("stopping local mesh (pid %d)\n", pid)
		_ = syscall.Kill(pid, syscall.SIGTERM)
		if !waitUnlocked(dir, 90*time.Second) {
			fmt.Printf("local mesh (pid %d) did not stop in time; killing it\n", pid)
			_ = syscall.Kill(pid, syscall.SIGKILL)
			waitUnlocked(dir, 10*time.Second)
		}
	} else {
		fmt.Printf("local mesh not running in %s\n", dir)
	}
	n, err := localmesh.KillLeftovers(dir)
	if n > 0 {
		fmt.Printf("killed %d leftover kube-apiserver/etcd/Flux processes\n", n)
	}
	_ = os.Remove(readyFile(dir))
	_ = os.Remove(pidFile(dir))
	return err
}

// lockHolder reports whether a local-mesh up process holds the lock on dir's
// pid file, and its pid.
func lockHolder(dir string) (int, bool) {
	f, err := os.Open(pidFile(dir))
	if err != nil {
		return 0, false
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB); err == nil {
		return 0, false // nobody holds it: stale or absent
	}
	pid, _ := readPID(dir) // 0 while up is still writing it
	return pid, true
}

// waitUnlocked waits until no process holds dir's pid file lock.
func waitUnlocked(dir string, timeout time.Duration) bool {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, running := lockHolder(dir); !running {
			return true
		}
	}
	return false
}

func readPID(dir string) (int, error) {
	b, err := os.ReadFile(pidFile(dir))
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
