// Command profprovider is the provider (as main.go serves it) with a CPU
// profile written to $MESH_BENCH_CPUPROFILE.<pid> when that is set, and the
// peaks of Go's memory statistics (sampled every 20ms) appended to
// $MESH_BENCH_MEMSTATS when that is set: for finding where a benchmark's
// provider time and memory go (see docs/performance.md).
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/mesh-intent/terraform-provider-mesh/internal/provider"
)

func main() {
	if path := os.Getenv("MESH_BENCH_CPUPROFILE"); path != "" {
		f, err := os.Create(fmt.Sprintf("%s.%d", path, os.Getpid()))
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer func() { pprof.StopCPUProfile(); f.Close() }()
	}
	if path := os.Getenv("MESH_BENCH_MEMSTATS"); path != "" {
		stop := sampleMemory(path)
		defer stop()
	}
	quietUnlessAsked()
	err := providerserver.Serve(context.Background(), provider.New("bench"), providerserver.ServeOpts{
		Address: "registry.terraform.io/mesh-intent/mesh",
	})
	if err != nil {
		log.Fatal(err.Error())
	}
}

// sampleMemory records the largest heap in use, heap obtained from the OS,
// stacks and total runtime memory seen until stop is called.
func sampleMemory(path string) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		var peak struct{ HeapAlloc, HeapInuse, HeapSys, StackInuse, Sys uint64 }
		var ms runtime.MemStats
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			if hp := os.Getenv("MESH_BENCH_HEAPPROFILE"); hp != "" && ms.HeapAlloc > peak.HeapAlloc*11/10 {
				// Near the peak: what the heap holds (as of the last GC).
				if f, err := os.Create(fmt.Sprintf("%s.%d", hp, os.Getpid())); err == nil {
					_ = pprof.WriteHeapProfile(f)
					_ = f.Close()
				}
			}
			peak.HeapAlloc = max(peak.HeapAlloc, ms.HeapAlloc)
			peak.HeapInuse = max(peak.HeapInuse, ms.HeapInuse)
			peak.HeapSys = max(peak.HeapSys, ms.HeapSys)
			peak.StackInuse = max(peak.StackInuse, ms.StackInuse)
			peak.Sys = max(peak.Sys, ms.Sys)
			select {
			case <-done:
				line, _ := json.Marshal(map[string]any{"pid": os.Getpid(), "peak_mib": map[string]uint64{
					"heap_alloc": peak.HeapAlloc >> 20, "heap_inuse": peak.HeapInuse >> 20, "heap_sys": peak.HeapSys >> 20,
					"stack_inuse": peak.StackInuse >> 20, "sys": peak.Sys >> 20}})
				if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
					_, _ = f.Write(append(line, '\n'))
					_ = f.Close()
				}
				return
			case <-tick.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// quietUnlessAsked turns the plugin SDK's trace logging off, as the
// provider's main.go does, unless a TF_LOG* variable asks for logs: the
// profiles must show the provider as users run it. Without it (until
// issue 39's last runs) a fifth of a no-op plan's provider CPU was the
// SDK formatting trace logs that Terraform throws away.
func quietUnlessAsked() {
	for _, v := range []string{"TF_LOG", "TF_LOG_PROVIDER", "TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK", "TF_LOG_SDK_MUX"} {
		if os.Getenv(v) != "" {
			return
		}
	}
	for _, v := range []string{"TF_LOG_SDK", "TF_LOG_SDK_PROTO", "TF_LOG_SDK_FRAMEWORK"} {
		if err := os.Setenv(v, "OFF"); err != nil {
			log.Fatal(err)
		}
	}
}
