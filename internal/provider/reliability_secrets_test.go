package provider

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// relSecretsConfig reaches each cluster with another kind of credential,
// all passed in sensitive variables (as TF_VAR_ environment variables, the
// usual way in CI): east with a bearer token, west with a client
// certificate and key, onprem with an exec plugin whose environment holds
// the secrets. A data source reads every cluster, so errors end up in
// state too.
func relSecretsConfig(eastMTLS string) string {
	ca := func(c string) string { return fmt.Sprintf("%q", testMesh.CA(c)) }
	var b strings.Builder
	fmt.Fprintf(&b, `
variable "east_token" {
  type      = string
  sensitive = true
}
variable "west_client_certificate" {
  type      = string
  sensitive = true
}
variable "west_client_key" {
  type      = string
  sensitive = true
}
variable "onprem_exec_env" {
  type      = map(string)
  sensitive = true
}
variable "exec_plugin" {
  type = string
}

provider "mesh" {
  clusters = {
    east = {
      kubernetes = {
        host                   = %q
        cluster_ca_certificate = %s
        token                  = var.east_token
      }
      %s
    }
    west = {
      kubernetes = {
        host                   = %q
        cluster_ca_certificate = %s
        client_certificate     = var.west_client_certificate
        client_key             = var.west_client_key
      }
      %s
    }
    onprem = {
      kubernetes = {
        host                   = %q
        cluster_ca_certificate = %s
        exec = {
          api_version = "client.authentication.k8s.io/v1"
          command     = var.exec_plugin
          env         = var.onprem_exec_env
        }
      }
      %s
    }
  }
}

data "mesh_clusters" "all" {}
`, testMesh.Server("east"), ca("east"), testTopology["east"], testMesh.Server("west"), ca("west"), testTopology["west"],
		testMesh.Server("onprem"), ca("onprem"), testTopology["onprem"])
	for _, c := range testClusters {
		mtls := "STRICT"
		if c == "east" {
			mtls = eastMTLS
		}
		fmt.Fprintf(&b, `
resource "mesh_cluster" %[1]q {
  name             = %[1]q
  mtls_mode        = %[2]q
  expose_east_west = true
}
`, c, mtls)
	}
	return b.String()
}

// relMarker is a recognisable random string.
func relMarker(t *testing.T, what string) string {
	buf := make([]byte, 12)
	if _, err := rand.Read(buf); err != nil {
		t.Fatal(err)
	}
	return "mesh-secret-" + what + "-" + hex.EncodeToString(buf)
}

// relPEMLines returns the base64 lines of a PEM block that are long enough
// to be recognised anywhere: a certificate or key body appears in logs
// either whole or line by line (with escaped newlines).
func relPEMLines(pem []byte) []string {
	var out []string
	for _, l := range strings.Split(string(pem), "\n") {
		l = strings.TrimSpace(l)
		if len(l) >= 40 && !strings.HasPrefix(l, "-----") {
			out = append(out, l)
		}
	}
	return out
}

// With TF_LOG=TRACE and TF_LOG_PROVIDER=TRACE, an apply, a plan, a failing
// apply (a wrong token) and a destroy write no token, client key, client
// certificate or exec environment value to the logs, Terraform's output or
// the state file.
func TestAccReliability_noSecretsInLogsOrState(t *testing.T) {
	requireMesh(t)
	ctx := context.Background()
	eastToken, err := testMesh.ServiceAccountToken(ctx, "east", "mesh-secrets", "provider", "cluster-admin")
	if err != nil {
		t.Fatal(err)
	}
	execToken, err := testMesh.ServiceAccountToken(ctx, "onprem", "mesh-secrets", "provider", "cluster-admin")
	if err != nil {
		t.Fatal(err)
	}
	west := testMesh.RESTConfig("west")
	execMarker := relMarker(t, "exec-env")
	wrongToken := relMarker(t, "wrong-token")

	w := newRelTF(t)
	w.logPath = filepath.Join(t.TempDir(), "terraform.log")
	plugin := filepath.Join(t.TempDir(), "mesh-credential")
	// The plugin checks that its environment came through, and prints the
	// token it was given there, as cloud plugins print theirs.
	script := `#!/bin/sh
[ -n "$MESH_EXEC_MARKER" ] || { echo "MESH_EXEC_MARKER is not set" >&2; exit 1; }
printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$MESH_EXEC_TOKEN"
`
	if err := os.WriteFile(plugin, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	setVars := func(token string) {
		env, _ := json.Marshal(map[string]string{"MESH_EXEC_MARKER": execMarker, "MESH_EXEC_TOKEN": execToken})
		w.env = append(w.env,
			"TF_VAR_east_token="+token,
			"TF_VAR_west_client_certificate="+string(west.CertData),
			"TF_VAR_west_client_key="+string(west.KeyData),
			"TF_VAR_onprem_exec_env="+string(env),
			"TF_VAR_exec_plugin="+plugin,
		)
	}
	base := append([]string(nil), w.env...)
	setVars(eastToken)
	relCleanup(t, w, func() { w.env = base; setVars(eastToken) }, relInterruptOwners[:3]...)

	var outputs strings.Builder
	w.write(relSecretsConfig("STRICT"))
	outputs.WriteString(w.apply())
	for _, c := range testClusters {
		w.requireExact("mesh_cluster."+c, "cluster", c)
	}
	out, code := w.run("plan", "-detailed-exitcode")
	outputs.WriteString(out)
	if code != 0 {
		t.Fatalf("plan not empty (exit %d):\n%s", code, out)
	}

	// A wrong token: the refresh warns and the apply fails, naming east
	// and the rejected credentials, and the data source records the error
	// in state.
	w.env = base
	setVars(wrongToken)
	w.write(relSecretsConfig("PERMISSIVE"))
	out = w.applyFails()
	outputs.WriteString(out)
	if !regexp.MustCompile(`Cluster east rejected the credentials \(401 Unauthorized\)`).MatchString(out) {
		t.Fatalf("the wrong token's error does not name east and the credentials:\n%s", out)
	}
	_, state := w.stateFile()
	if !strings.Contains(string(state), "the server has asked for the client to provide credentials") {
		t.Fatalf("the data source did not record east's error in state, so state was not put to the test:\n%s", state)
	}
	stateAfterError := string(state)

	logs, err := os.ReadFile(w.logPath)
	if err != nil {
		t.Fatal(err)
	}
	// TF_LOG=DEBUG shows the engine's decisions per cluster and object:
	// the first apply wrote every cluster's objects.
	for _, c := range testClusters {
		if !relLogHas(logs, "engine: applied:", "cluster="+c, "object=", "owner=") {
			t.Errorf("the logs show no engine decision for an object applied in %s", c)
		}
	}

	// Destroy at DEBUG, the level a user asks for to see the decisions.
	w.env = base
	setVars(eastToken)
	w.write(relSecretsConfig("STRICT"))
	w.logPath, w.logLevel = filepath.Join(t.TempDir(), "destroy.log"), "DEBUG"
	out, code = w.run("destroy", "-auto-approve")
	outputs.WriteString(out)
	if code != 0 {
		t.Fatalf("destroy failed:\n%s", out)
	}
	debugLogs, err := os.ReadFile(w.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(debugLogs, []byte("[TRACE]")) {
		t.Error("the DEBUG log holds TRACE lines: not the level this step means to check")
	}
	for _, c := range testClusters {
		if !relLogHas(debugLogs, "engine: pruned:", "cluster="+c, `object="PeerAuthentication istio-system/default"`) {
			t.Errorf("TF_LOG=DEBUG destroy does not show the PeerAuthentication of %s pruned", c)
		}
	}
	// The logs are the real thing: Terraform's and the provider's, at
	// trace level, covering the calls that carry the configuration.
	// (The provider's own error text shows that what the provider says
	// does reach them.)
	for _, want := range []string{"[TRACE]", "tf_rpc=ConfigureProvider", "tf_rpc=ApplyResourceChange", "tf_provider_addr=registry.terraform.io/mesh-intent/mesh",
		"Cluster east rejected the credentials"} {
		if !strings.Contains(string(logs), want) {
			t.Errorf("the logs lack %q: not the trace logs this test means to search", want)
		}
	}
	t.Logf("searched %d KiB of trace logs, %d KiB of output and two state files", len(logs)/1024, outputs.Len()/1024)

	secrets := map[string]string{
		"east's token":                   eastToken,
		"the wrong token":                wrongToken,
		"the exec environment's marker":  execMarker,
		"the token the exec plugin gave": execToken,
	}
	// A JWT's signature alone is as good as the token.
	secrets["east's token signature"] = eastToken[strings.LastIndex(eastToken, ".")+1:]
	for i, l := range relPEMLines(west.KeyData) {
		secrets[fmt.Sprintf("line %d of west's client key", i+1)] = l
	}
	for i, l := range relPEMLines(west.CertData) {
		secrets[fmt.Sprintf("line %d of west's client certificate", i+1)] = l
	}
	_, finalState := w.stateFile()
	places := map[string]string{
		"the trace log":                    string(logs),
		"the debug log of destroy":         string(debugLogs),
		"Terraform's output":               outputs.String(),
		"the state after the failed apply": stateAfterError,
		"the state after destroy":          string(finalState),
	}
	if backup, err := os.ReadFile(filepath.Join(w.dir, "terraform.tfstate.backup")); err == nil {
		places["the state backup"] = string(backup)
	}
	for _, leak := range relLeaks(secrets, places) {
		t.Error(leak)
	}

	// The control: an exec plugin that prints its secret marker to stderr
	// (which Terraform logs) leaks it, and the same scan must say so, or it
	// is blind and proves nothing above.
	leaky := filepath.Join(t.TempDir(), "leaky-credential")
	if err := os.WriteFile(leaky, []byte("#!/bin/sh\necho \"debug: $MESH_EXEC_MARKER\" >&2\n"+strings.SplitN(script, "\n", 2)[1]), 0o755); err != nil {
		t.Fatal(err)
	}
	w.env = append(w.env, "TF_VAR_exec_plugin="+leaky)
	w.logPath, w.logLevel = filepath.Join(t.TempDir(), "control.log"), ""
	if out, code := w.run("plan"); code != 0 {
		t.Fatalf("control plan failed:\n%s", out)
	}
	control, err := os.ReadFile(w.logPath)
	if err != nil {
		t.Fatal(err)
	}
	if leaks := relLeaks(map[string]string{"the exec environment's marker": execMarker}, map[string]string{"the control log": string(control)}); len(leaks) == 0 {
		t.Error("control: the exec plugin printed its marker to stderr, and the scan did not find it in the logs")
	}
	// The CA is public; note whether it shows up anyway.
	for where, text := range places {
		for _, l := range relPEMLines(testMesh.CA("east")) {
			if strings.Contains(text, l) {
				t.Logf("note: east's CA certificate (not a secret) appears in %s", where)
				break
			}
		}
	}
}

// relLeaks reports every secret (by what it is) found in any place.
func relLeaks(secrets, places map[string]string) []string {
	var out []string
	for what, secret := range secrets {
		for where, text := range places {
			if i := strings.Index(text, secret); i >= 0 {
				from, to := max(0, i-200), min(len(text), i+len(secret)+50)
				out = append(out, fmt.Sprintf("%s appears in %s:\n...%s...", what, where, text[from:to]))
			}
		}
	}
	return out
}

// relLogHas reports whether a line of logs holds msg and every one of
// fields (log fields come in no fixed order).
func relLogHas(logs []byte, msg string, fields ...string) bool {
	for _, line := range strings.Split(string(logs), "\n") {
		if !strings.Contains(line, msg) {
			continue
		}
		all := true
		for _, f := range fields {
			all = all && strings.Contains(line, f)
		}
		if all {
			return true
		}
	}
	return false
}
