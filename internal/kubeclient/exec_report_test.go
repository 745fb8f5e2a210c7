package kubeclient

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// The test binary is the exec wrapper of the tests that set ExecWrapper
// to it, as the provider's binary is in main.
func TestMain(m *testing.M) {
	if code, ok := RunExecWrapper(os.Args); ok {
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// A failing exec credential plugin is reported by its own command, with
// what it wrote to stderr; client-go alone names the wrapper (the
// provider's binary) and drops the plugin's stderr (issue 38: aws's
// ExpiredToken was lost).
func TestExecPluginFailureNamesThePluginAndItsStderr(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ExecWrapper = self
	defer func() { ExecWrapper = "" }()
	plugin := filepath.Join(t.TempDir(), "aws")
	script := "#!/bin/sh\necho 'An error occurred (ExpiredToken) when calling the GetCallerIdentity operation' >&2\nexit 255\n"
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	var reached atomic.Bool
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { reached.Store(true) }))
	defer srv.Close()
	set := NewSet(map[string]Connection{"east": {
		Name: "east", Host: srv.URL, Insecure: true,
		Exec: &Exec{APIVersion: "client.authentication.k8s.io/v1", Command: plugin, Args: []string{"eks", "get-token"}},
	}}, 0)
	c, err := set.Get("east")
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}
	for range 2 { // the report is read anew for every failure
		_, err = c.Dynamic.Resource(gvr).Namespace("istio-system").List(context.Background(), metav1.ListOptions{})
		var execErr *ExecError
		if !errors.As(err, &execErr) {
			t.Fatalf("want an ExecError, got %v", err)
		}
		if execErr.Command != plugin || execErr.Outcome != "exited with status 255" || !strings.Contains(execErr.Stderr, "ExpiredToken") {
			t.Errorf("ExecError %+v", execErr)
		}
		if strings.Contains(execErr.Error(), self) {
			t.Errorf("the error names the wrapper: %v", execErr)
		}
		// http.Client keeps only the text of an error when the request's
		// deadline passed meanwhile; the ExecError is found by it.
		quoted := fmt.Errorf("Get %q: %s (Client.Timeout exceeded while awaiting headers)", srv.URL, execErr.Error())
		if got := ExecErrorIn(quoted); got != execErr {
			t.Errorf("ExecErrorIn(%v) = %v", quoted, got)
		}
	}
	if reached.Load() {
		t.Error("a request reached the API server without credentials")
	}
	if _, err := os.Stat(execReportPath("east")); !os.IsNotExist(err) {
		t.Errorf("the report is left behind: %v", err)
	}
}
