// Command launcher stands in for the provider binary in the benchmark's
// dev_overrides directory. Terraform starts it as it would start the
// provider; it starts the real provider ($MESH_BENCH_PROVIDER) as its child
// with the same arguments, environment and standard streams (so the
// go-plugin handshake and the gRPC connection go straight to the provider),
// waits for it, and appends one JSON line to $MESH_BENCH_RUSAGE with what
// wait4(2) reports for the child:
//
//	maxrss_kib  peak resident set size of the provider process (ru_maxrss,
//	            KiB; the kernel's high-water mark of RSS, what
//	            /proc/<pid>/status calls VmHWM)
//	user_s, sys_s  CPU time the provider used
//	wall_s      how long it ran
//
// Terraform starts a provider process more than once per command (e.g. to
// read the schema, then for the graph walk); each gets its own line.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	real := os.Getenv("MESH_BENCH_PROVIDER")
	if real == "" {
		fmt.Fprintln(os.Stderr, "launcher: MESH_BENCH_PROVIDER is not set")
		os.Exit(1)
	}
	cmd := exec.Command(real, os.Args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "launcher:", err)
		os.Exit(1)
	}
	// Pass on what Terraform sends; go-plugin stops providers over gRPC,
	// signals are for interrupted runs.
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	go func() {
		for s := range sigs {
			_ = cmd.Process.Signal(s)
		}
	}()
	err := cmd.Wait()
	wall := time.Since(start)
	code := 0
	if err != nil {
		code = 1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	if path := os.Getenv("MESH_BENCH_RUSAGE"); path != "" && cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			line, _ := json.Marshal(map[string]any{
				"pid":        cmd.ProcessState.Pid(),
				"maxrss_kib": ru.Maxrss,
				"user_s":     time.Duration(ru.Utime.Nano()).Seconds(),
				"sys_s":      time.Duration(ru.Stime.Nano()).Seconds(),
				"wall_s":     wall.Seconds(),
				"exit":       code,
			})
			if f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644); err == nil {
				_, _ = f.Write(append(line, '\n'))
				_ = f.Close()
			}
		}
	}
	os.Exit(code)
}
