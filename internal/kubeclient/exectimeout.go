package kubeclient

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// Exec credential plugins run under a deadline. client-go runs a plugin
// with no timeout of its own, so one that never returns (waiting for a
// browser login, a hung metadata server) would hang the whole Terraform
// run. The provider therefore hands client-go itself as the command: the
// provider's executable with ExecWrapperArg, the timeout and the real
// command; RunExecWrapper (called first thing in main) runs the plugin
// under that deadline, passing stdin, stdout, stderr and the environment
// client-go set (KUBERNETES_EXEC_INFO and the configured env) through, and
// kills it when the deadline passes.

// ExecWrapperArg is the first argument that makes the provider's binary
// run an exec plugin under a deadline instead of serving.
const ExecWrapperArg = "__mesh-exec-with-timeout"

// ExecWrapper is the executable that wraps exec plugins, normally the
// provider's own (set by main); empty runs plugins directly.
var ExecWrapper string

// wrapExec returns the command and arguments client-go runs for a plugin.
func wrapExec(command string, args []string, timeout time.Duration) (string, []string) {
	if ExecWrapper == "" {
		return command, args
	}
	return ExecWrapper, append([]string{ExecWrapperArg, timeout.String(), command}, args...)
}

// RunExecWrapper runs a wrapped exec plugin if args (os.Args) ask for it,
// and returns its exit code and true; otherwise it returns false.
func RunExecWrapper(args []string) (int, bool) {
	if len(args) < 4 || args[1] != ExecWrapperArg {
		return 0, false
	}
	timeout, err := time.ParseDuration(args[2])
	if err != nil {
		fmt.Fprintf(os.Stderr, "exec plugin: bad timeout %q: %v\n", args[2], err)
		return 1, true
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	report := os.Getenv(execReportEnv)
	cmd := exec.CommandContext(ctx, args[3], args[4:]...)
	var stderr tail
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, io.MultiWriter(os.Stderr, &stderr)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, execReportEnv+"=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	var exit *exec.ExitError
	var outcome string
	code := 1
	switch {
	case ctx.Err() != nil:
		outcome = fmt.Sprintf("did not finish within %s (the provider's request_timeout) and was stopped", timeout)
	case errors.As(err, &exit):
		code = exit.ExitCode()
		outcome = fmt.Sprintf("exited with status %d", code)
	case err != nil:
		outcome = fmt.Sprintf("could not be run: %v", err)
	default:
		return 0, true
	}
	fmt.Fprintf(os.Stderr, "exec plugin %q %s\n", args[3], outcome)
	if report != "" {
		// The provider reads it to explain the failure (execReportTransport);
		// a report that cannot be written leaves client-go's own error.
		_ = os.WriteFile(report, []byte(args[3]+"\n"+outcome+"\n"+stderr.String()), 0o600)
	}
	return code, true
}

// execReportEnv names the file where the wrapper reports a plugin's
// failure: its command, how it ended and the end of its stderr. client-go
// reports only that the wrapper (the provider's own binary) failed, and
// sends the plugin's stderr to the provider's, which Terraform does not
// show; the provider reads the report into the error instead.
const execReportEnv = "MESH_EXEC_REPORT"

// tailSize bounds the stderr kept for a report.
const tailSize = 2048

// tail keeps the last tailSize bytes written to it.
type tail struct{ b []byte }

func (t *tail) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > tailSize {
		t.b = append([]byte(nil), t.b[len(t.b)-tailSize:]...)
	}
	return len(p), nil
}

func (t *tail) String() string { return string(t.b) }

// ExecError is an exec credential plugin that failed: Command is the
// plugin's (not the wrapper's), Outcome how it ended, Stderr the end of
// what it wrote there.
type ExecError struct {
	Command, Outcome, Stderr string
	Err                      error
}

func (e *ExecError) Error() string {
	msg := fmt.Sprintf("the exec credential plugin %q %s", e.Command, e.Outcome)
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += "; its stderr: " + s
	}
	return msg
}

func (e *ExecError) Unwrap() error { return e.Err }

// execReportTransport turns client-go's "getting credentials: exec: ...
// failed" into an ExecError from the wrapper's report. It sits outside
// client-go's exec transport (on the http.Client), where that error
// surfaces.
type execReportTransport struct {
	report string
	next   http.RoundTripper
}

func (t *execReportTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil || !strings.Contains(err.Error(), "getting credentials: exec") {
		return resp, err
	}
	raw, rerr := os.ReadFile(t.report)
	if rerr != nil {
		return resp, err
	}
	_ = os.Remove(t.report) // read; the next failure writes it again
	command, rest, _ := strings.Cut(string(raw), "\n")
	outcome, stderr, _ := strings.Cut(rest, "\n")
	e := &ExecError{Command: command, Outcome: outcome, Stderr: stderr, Err: err}
	execErrors.Store(e.Error(), e)
	return resp, e
}

// execErrors holds every ExecError of this process by its text. When the
// request's own deadline passes while the plugin is being stopped (both
// are request_timeout), http.Client replaces the error with a timeout
// error that keeps only its text; ExecErrorIn finds it again by that text.
var execErrors sync.Map

// ExecErrorIn returns the ExecError err is, wraps or quotes; nil if none.
func ExecErrorIn(err error) *ExecError {
	var e *ExecError
	if errors.As(err, &e) {
		return e
	}
	msg := err.Error()
	execErrors.Range(func(k, v any) bool {
		if strings.Contains(msg, k.(string)) {
			e = v.(*ExecError)
			return false
		}
		return true
	})
	return e
}

// execReportPath is where the wrapper reports the plugin failures of one
// cluster of this provider process.
func execReportPath(cluster string) string {
	sum := sha256.Sum256([]byte(cluster))
	return filepath.Join(os.TempDir(), fmt.Sprintf("terraform-provider-mesh-%d-exec-%x", os.Getpid(), sum[:6]))
}
