package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"k8s.io/client-go/kubernetes"
)

// meshCPU is the CPU time (s) used so far by the clusters' processes
// (kube-apiserver and etcd): those whose command line mentions the mesh
// directory.
func (b *bench) meshCPU() float64 {
	dir := b.meshDir + string(filepath.Separator)
	procs, _ := filepath.Glob("/proc/[0-9]*")
	var ticks int64
	for _, p := range procs {
		cmdline, err := os.ReadFile(p + "/cmdline")
		if err != nil || !bytes.Contains(cmdline, []byte(dir)) {
			continue
		}
		name := string(bytes.SplitN(cmdline, []byte{0}, 2)[0])
		if !strings.HasSuffix(name, "kube-apiserver") && !strings.HasSuffix(name, "etcd") {
			continue
		}
		stat, err := os.ReadFile(p + "/stat")
		if err != nil {
			continue
		}
		// After the command name's closing parenthesis, utime and stime
		// are the 12th and 13th fields.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) > 12 {
			u, _ := strconv.ParseInt(f[11], 10, 64)
			s, _ := strconv.ParseInt(f[12], 10, 64)
			ticks += u + s
		}
	}
	return float64(ticks) / 100 // USER_HZ
}

// requests counts the API requests the clusters have served for the kinds
// the provider writes (Istio's groups and ConfigMaps), by verb, from each
// API server's apiserver_request_total.
func (b *bench) requests() map[string]float64 {
	out := map[string]float64{}
	for _, c := range b.o.clusters {
		cs, err := kubernetes.NewForConfig(b.admin[c])
		if err != nil {
			continue
		}
		raw, err := cs.Discovery().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if !strings.HasPrefix(line, "apiserver_request_total{") {
				continue
			}
			if !strings.Contains(line, `group="networking.istio.io"`) && !strings.Contains(line, `group="security.istio.io"`) &&
				!(strings.Contains(line, `group=""`) && strings.Contains(line, `resource="configmaps"`)) {
				continue
			}
			i, j := strings.Index(line, `verb="`), strings.LastIndexByte(line, ' ')
			if i < 0 || j < 0 {
				continue
			}
			verb := line[i+len(`verb="`):]
			verb = verb[:strings.IndexByte(verb, '"')]
			n, _ := strconv.ParseFloat(line[j+1:], 64)
			out[verb] += n
		}
	}
	return out
}

func diffRequests(after, before map[string]float64) map[string]int {
	out := map[string]int{}
	for verb, n := range after {
		if d := int(n - before[verb]); d > 0 && verb != "WATCH" {
			out[verb] = d
		}
	}
	return out
}

// readUsage reads what bench/launcher recorded for the provider processes
// of one command: the largest peak RSS (KiB) and the CPU time summed.
func readUsage(path string) (int64, float64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("no provider usage recorded (is the launcher in dev_overrides?): %w", err)
	}
	var rss int64
	var cpu float64
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var u struct {
			MaxRSS int64   `json:"maxrss_kib"`
			User   float64 `json:"user_s"`
			Sys    float64 `json:"sys_s"`
		}
		if err := json.Unmarshal(line, &u); err != nil {
			return 0, 0, err
		}
		rss = max(rss, u.MaxRSS)
		cpu += u.User + u.Sys
	}
	return rss, cpu, nil
}

func loadAverage() float64 {
	raw, _ := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(raw)); len(f) > 0 {
		v, _ := strconv.ParseFloat(f[0], 64)
		return v
	}
	return 0
}
