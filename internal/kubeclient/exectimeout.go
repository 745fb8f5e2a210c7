package kubeclient

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
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
	cmd := exec.CommandContext(ctx, args[3], args[4:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.WaitDelay = time.Second
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		fmt.Fprintf(os.Stderr, "exec plugin %q did not finish within %s (the provider's request_timeout) and was stopped\n", args[3], timeout)
		return 1, true
	case errors.As(err, &exit):
		return exit.ExitCode(), true
	case err != nil:
		fmt.Fprintf(os.Stderr, "exec plugin %q could not be run: %v\n", args[3], err)
		return 1, true
	}
	return 0, true
}
