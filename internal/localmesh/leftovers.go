package localmesh

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// KillLeftovers terminates kube-apiserver and etcd processes whose data or
// certificate directory lies inside dir (as started by Start with that Dir),
// and Flux's controllers whose kubeconfig lies there (StartFlux): Flux
// first, then API servers, as they hang on shutdown without their etcd, then etcd;
// each with SIGTERM and, after 10 seconds, SIGKILL. It returns how many it
// found. It is a safety net for runs that were killed before they could stop
// their clusters; it reads /proc and finds nothing where there is none.
func KillLeftovers(dir string) (int, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return 0, err
	}
	fluxPIDs := leftoverEnvPIDs("KUBECONFIG=" + filepath.Join(dir, "flux") + "/")
	n := len(fluxPIDs)
	terminate(fluxPIDs, 10*time.Second)
	for _, flag := range []string{"--cert-dir=", "--data-dir="} {
		pids := leftoverPIDs(flag + dir + "/")
		n += len(pids)
		terminate(pids, 10*time.Second)
	}
	return n, nil
}

// terminate sends SIGTERM to pids and SIGKILL to those still alive after timeout.
func terminate(pids []int, timeout time.Duration) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGTERM)
	}
	deadline := time.Now().Add(timeout)
	for _, pid := range pids {
		for alive(pid) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if alive(pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// leftoverPIDs lists the processes with a command-line argument starting
// with prefix.
func leftoverPIDs(prefix string) []int { return pidsWith("cmdline", prefix) }

// leftoverEnvPIDs lists the processes with an environment entry starting
// with prefix.
func leftoverEnvPIDs(prefix string) []int { return pidsWith("environ", prefix) }

// pidsWith lists the processes whose /proc/<pid>/<file> (NUL-separated)
// holds an entry starting with prefix.
func pidsWith(file, prefix string) []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), file))
		if err != nil {
			continue
		}
		for _, entry := range bytes.Split(data, []byte{0}) {
			if strings.HasPrefix(string(entry), prefix) {
				pids = append(pids, pid)
				break
			}
		}
	}
	return pids
}

// alive reports whether pid exists and is not a zombie.
func alive(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	i := bytes.LastIndexByte(stat, ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}
