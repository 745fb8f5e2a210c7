package kubeclient

import (
	"testing"
	"time"
)

// A plugin that never returns is stopped at the deadline, with exit code 1.
func TestExecWrapperStopsAHangingPlugin(t *testing.T) {
	code, ok := RunExecWrapper([]string{"provider", ExecWrapperArg, "200ms", "sleep", "600"})
	if !ok || code != 1 {
		t.Fatalf("got code %d, handled %v; want 1, true", code, ok)
	}
}

// A plugin's own exit code comes through.
func TestExecWrapperPassesTheExitCode(t *testing.T) {
	for want, script := range map[int]string{0: "exit 0", 3: "exit 3"} {
		code, ok := RunExecWrapper([]string{"provider", ExecWrapperArg, "10s", "sh", "-c", script})
		if !ok || code != want {
			t.Fatalf("%q: got %d, want %d", script, code, want)
		}
	}
}

func TestExecWrapperOnlyWhenAsked(t *testing.T) {
	if _, ok := RunExecWrapper([]string{"provider", "-debug"}); ok {
		t.Fatal("serving arguments taken for a wrapped plugin")
	}
}

// The command client-go runs is the wrapper, with the timeout and the
// plugin's command and arguments after it.
func TestExecConfigIsWrapped(t *testing.T) {
	ExecWrapper = "/path/to/provider"
	defer func() { ExecWrapper = "" }()
	cfg := execConfig(&Exec{APIVersion: "client.authentication.k8s.io/v1", Command: "aws", Args: []string{"eks", "get-token"}}, 5*time.Second)
	if cfg.Command != "/path/to/provider" || len(cfg.Args) != 5 || cfg.Args[0] != ExecWrapperArg || cfg.Args[1] != "5s" || cfg.Args[2] != "aws" || cfg.Args[4] != "get-token" {
		t.Fatalf("exec config %s %v", cfg.Command, cfg.Args)
	}
}
