package kubeclient

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// kubeconfigOf writes a kubeconfig with one context per entry (context name
// -> server URL), each with its own cluster entry, and the given current
// context.
func kubeconfigOf(t *testing.T, dir, file, current string, contexts map[string]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: Config\nclusters:\n")
	for name, server := range contexts {
		fmt.Fprintf(&b, "- name: c-%s\n  cluster:\n    server: %s\n", name, server)
	}
	b.WriteString("users:\n- name: u\n  user:\n    token: t\ncontexts:\n")
	for name := range contexts {
		fmt.Fprintf(&b, "- name: %s\n  context:\n    cluster: c-%s\n    user: u\n", name, name)
	}
	fmt.Fprintf(&b, "current-context: %s\n", current)
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The usual EKS/GKE kubeconfig: contexts named by ARN or gke_<project>_...,
// none named like the registered clusters.
func cloudKubeconfig(t *testing.T, dir string) string {
	return kubeconfigOf(t, dir, "config", "arn:aws:eks:us-east-1:1:cluster/prod", map[string]string{
		"arn:aws:eks:us-east-1:1:cluster/prod": "https://10.1.0.1:443",
		"gke_proj_us-west1_prod":               "https://10.2.0.1:443",
	})
}

// A kubeconfig of one cluster alone, as aws eks update-kubeconfig
// --kubeconfig <file> writes it: one context, named by ARN.
func ownKubeconfig(t *testing.T, dir string) string {
	return kubeconfigOf(t, dir, "own", "arn:aws:eks:us-east-1:1:cluster/prod", map[string]string{
		"arn:aws:eks:us-east-1:1:cluster/prod": "https://10.1.0.1:443",
	})
}

// One registered cluster reading a kubeconfig with several contexts (the
// default ~/.kube/config of aws eks update-kubeconfig and gcloud) and no
// config_context is refused, listing the contexts: its current context
// follows kubectl config use-context, and the objects would follow it to
// another cluster.
func TestOwnKubeconfigWithSeveralContextsNeedsConfigContext(t *testing.T) {
	home := cloudKubeconfig(t, t.TempDir())
	conns := map[string]Connection{"east": {Name: "east", ConfigPath: home}}
	problems := Check(conns)
	if len(problems) != 1 || problems[0].Cluster != "east" {
		t.Fatalf("want one problem for east, got %v", problems)
	}
	msg := problems[0].Err.Error()
	for _, want := range []string{`"arn:aws:eks:us-east-1:1:cluster/prod"`, `"gke_proj_us-west1_prod"`, "more than one context", "config_context"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %s: %s", want, msg)
		}
	}
	if cl, err := NewSet(conns, 0).Get("east"); err == nil {
		t.Errorf("connecting took context %q's server %s; want a refusal", "current", hostOf(cl))
	}
}

// A kubeconfig that two registered clusters read, with no context named
// like either and no config_context, is refused for both, naming the
// cluster, the other reader and every context of the file; neither falls
// back to the current context, on the check nor when connecting.
func TestSharedKubeconfigNeverFallsBackToTheCurrentContext(t *testing.T) {
	shared := cloudKubeconfig(t, t.TempDir())
	conns := map[string]Connection{
		"east": {Name: "east", ConfigPath: shared},
		"west": {Name: "west", ConfigPaths: []string{shared}},
	}
	problems := Check(conns)
	if len(problems) != 2 {
		t.Fatalf("want a problem for east and west, got %v", problems)
	}
	for i, want := range []struct{ cluster, other string }{{"east", "west"}, {"west", "east"}} {
		p := problems[i]
		if p.Cluster != want.cluster || p.Context == nil {
			t.Fatalf("problem %d: %+v, want a context problem of %s", i, p, want.cluster)
		}
		msg := p.Err.Error()
		for _, s := range []string{`cluster "` + want.cluster + `"`, `"` + want.other + `"`, `"arn:aws:eks:us-east-1:1:cluster/prod"`, `"gke_proj_us-west1_prod"`, "config_context", shared} {
			if !strings.Contains(msg, s) {
				t.Errorf("the error of %s does not say %s: %s", want.cluster, s, msg)
			}
		}
	}
	set := NewSet(conns, 0)
	for _, c := range []string{"east", "west"} {
		cl, err := set.Get(c)
		var ce *ContextError
		if !errors.As(err, &ce) {
			t.Errorf("cluster %s connects through the shared kubeconfig's current context (%v, err %v)", c, hostOf(cl), err)
		}
	}
	if _, err := RESTConfig(Connection{Name: "east", ConfigPath: shared, SharedWith: []string{"west"}}, 0); err == nil {
		t.Error("RESTConfig of a cluster in a shared kubeconfig falls back to the current context")
	}
	// A shared file with a single context names one cluster at best: the
	// other reader would land there.
	single := ownKubeconfig(t, t.TempDir())
	if _, err := RESTConfig(Connection{Name: "east", ConfigPath: single, SharedWith: []string{"west"}}, 0); err == nil {
		t.Error("RESTConfig of a cluster in a shared single-context kubeconfig falls back to its current context")
	}
}

func hostOf(c *Clients) string {
	if c == nil {
		return ""
	}
	return c.Config.Host
}

// Sharing is by file, whatever the spelling of its path: a symbolic link
// to the file, or the same file named in config_paths after another.
func TestShareComparesFilesNotSpellings(t *testing.T) {
	dir := t.TempDir()
	shared := cloudKubeconfig(t, dir)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(shared, link); err != nil {
		t.Fatal(err)
	}
	other := kubeconfigOf(t, dir, "other", "x", map[string]string{"x": "https://10.9.0.1:443"})
	got := Share(map[string]Connection{
		"east":   {Name: "east", ConfigPath: shared},
		"west":   {Name: "west", ConfigPath: link},
		"onprem": {Name: "onprem", ConfigPaths: []string{other, filepath.Join(dir, ".", "config")}},
		"alone":  {Name: "alone", ConfigPath: filepath.Join(dir, "alone")},
		"eks":    {Name: "eks", Host: "https://10.1.0.1:443", Token: "t"},
	})
	want := map[string]string{"east": "onprem,west", "west": "east,onprem", "onprem": "east,west", "alone": "", "eks": ""}
	for c, w := range want {
		if s := strings.Join(got[c].SharedWith, ","); s != w {
			t.Errorf("%s shares with %q, want %q", c, s, w)
		}
	}
}

// A kubeconfig of its own (the usual aws eks update-kubeconfig --kubeconfig
// or gcloud file per cluster) keeps using its current context, whatever it
// is named; so does a shared one for clusters whose context is named like
// them or given.
func TestOwnKubeconfigUsesItsCurrentContext(t *testing.T) {
	dir := t.TempDir()
	own := ownKubeconfig(t, dir)
	shared := kubeconfigOf(t, dir, "shared", "west", map[string]string{"east": "https://10.3.0.1:443", "west": "https://10.3.0.2:443", "ctx-onprem": "https://10.3.0.3:443"})
	conns := map[string]Connection{
		"eks":    {Name: "eks", ConfigPath: own},
		"east":   {Name: "east", ConfigPath: shared},
		"west":   {Name: "west", ConfigPath: shared},
		"onprem": {Name: "onprem", ConfigPath: shared, ConfigContext: "ctx-onprem"},
	}
	if p := Check(conns); len(p) != 0 {
		t.Fatalf("problems: %v", p)
	}
	set := NewSet(conns, 0)
	for c, want := range map[string]string{"eks": "https://10.1.0.1:443", "east": "https://10.3.0.1:443", "west": "https://10.3.0.2:443", "onprem": "https://10.3.0.3:443"} {
		cl, err := set.Get(c)
		if err != nil || cl.Config.Host != want {
			t.Errorf("cluster %s: host %q, err %v; want %s", c, hostOf(cl), err, want)
		}
	}
}

// config_context naming a context the files lack is reported at the check,
// listing the contexts there are.
func TestCheckReportsAMissingContext(t *testing.T) {
	own := cloudKubeconfig(t, t.TempDir())
	p := Check(map[string]Connection{"east": {Name: "east", ConfigPath: own, ConfigContext: "east"}})
	if len(p) != 1 || p[0].Context == nil || p[0].Context.Context != "east" {
		t.Fatalf("want the missing context east, got %+v", p)
	}
	if msg := p[0].Err.Error(); !strings.Contains(msg, `no context "east"`) || !strings.Contains(msg, `"gke_proj_us-west1_prod"`) {
		t.Fatalf("the error does not name the context and list the file's: %s", msg)
	}
}

// selfSignedCA returns a PEM certificate made for the test.
func selfSignedCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kubernetes"}, NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// Two clusters that reach one API server (the same address, however
// written, and the same CA, however encoded or stored) are reported naming
// both; clusters on other addresses, or one address with other CAs or
// server names (SNI routing), are not.
func TestCheckFindsTwoClustersOnOneAPIServer(t *testing.T) {
	dir := t.TempDir()
	testCA := selfSignedCA(t)
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, []byte("# the cluster CA\n"+strings.ReplaceAll(testCA, "\n", "\r\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "config")
	if err := os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- name: prod
  cluster: {server: "https://API.example.com", certificate-authority: "`+caFile+`"}
users:
- name: u
  user: {token: t}
contexts:
- name: east
  context: {cluster: prod, user: u}
- name: west
  context: {cluster: prod, user: u}
current-context: east
`), 0o600); err != nil {
		t.Fatal(err)
	}
	problems := Check(map[string]Connection{
		// The copied entry: west kept east's context.
		"east": {Name: "east", ConfigPath: kc, ConfigContext: "east"},
		"west": {Name: "west", ConfigPath: kc, ConfigContext: "east"},
		// The same server by host and inline CA.
		"wine": {Name: "wine", Host: "https://api.example.com:443/", Token: "t", ClusterCACertificate: testCA},
		// Another CA or another server name on the same address: another
		// server as far as the check can tell.
		"insecure": {Name: "insecure", Host: "https://api.example.com", Token: "t", Insecure: true},
		"sni":      {Name: "sni", Host: "https://api.example.com", Token: "t", ClusterCACertificate: testCA, TLSServerName: "sni.example.com"},
		"other":    {Name: "other", Host: "https://api2.example.com", Token: "t", ClusterCACertificate: testCA},
	})
	var got []string
	for _, p := range problems {
		if p.Context != nil {
			t.Fatalf("unexpected context problem: %v", p.Err)
		}
		got = append(got, p.Other+"+"+p.Cluster)
		if msg := p.Err.Error(); !strings.Contains(msg, `"`+p.Other+`"`) || !strings.Contains(msg, `"`+p.Cluster+`"`) || !strings.Contains(msg, "https://api.example.com:443") {
			t.Errorf("the error does not name both clusters and the server: %s", msg)
		}
	}
	if s := strings.Join(got, " "); s != "east+west east+wine" {
		t.Fatalf("same-server pairs %q, want %q", s, "east+west east+wine")
	}
}

// Connections not known yet, or that fail for their own reason (a missing
// file), are left to the connection, which reports them for their cluster.
func TestCheckLeavesOtherErrorsToTheConnection(t *testing.T) {
	p := Check(map[string]Connection{
		"east": {Unknown: true},
		"west": {Name: "west", ConfigPath: filepath.Join(t.TempDir(), "absent")},
	})
	if len(p) != 0 {
		t.Fatalf("problems: %v", p)
	}
}

// A bearer token configured for a server over plain http:// is reported
// for its cluster, offline (no plugin runs).
func TestCheckReportsATokenOverPlainHTTP(t *testing.T) {
	p := Check(map[string]Connection{
		"east": {Name: "east", Host: "http://198.51.100.7:8080", Exec: &Exec{APIVersion: "client.authentication.k8s.io/v1", Command: "no-such-plugin-needed"}},
		"west": {Name: "west", Host: "https://198.51.100.8:6443", Exec: &Exec{APIVersion: "client.authentication.k8s.io/v1", Command: "no-such-plugin-needed"}},
	})
	if len(p) != 1 || p[0].Cluster != "east" || p[0].Clear == nil || !strings.Contains(p[0].Err.Error(), `"no-such-plugin-needed"`) {
		t.Fatalf("problems %+v, want east's token over plain http", p)
	}
}
