// Package kubeclient builds Kubernetes clients for registered clusters the
// way kubectl does (client-go's clientcmd: kubeconfig files and contexts,
// inline host/token/certificates, exec credential plugins), lazily and once
// per cluster per provider process.
package kubeclient

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Connection holds how to reach one cluster. Field names follow the
// kubernetes provider's. Values are never logged or put in errors.
type Connection struct {
	ConfigPath string
	// ConfigPaths are kubeconfig files merged as kubectl merges KUBECONFIG
	// (the first file that sets a value wins).
	ConfigPaths   []string
	ConfigContext string
	// Name is the cluster's key in the provider's registry: with a
	// kubeconfig and no ConfigContext, the context of that name is used
	// when the files have one.
	Name string
	// SharedWith names the other registered clusters that read one of
	// this connection's kubeconfig files (set by Share). Such a cluster
	// never falls back to the file's current context: it needs
	// ConfigContext or a context named like it.
	SharedWith           []string
	Host                 string
	Token                string
	ClusterCACertificate string
	ClientCertificate    string
	ClientKey            string
	Insecure             bool
	TLSServerName        string
	ProxyURL             string
	// InCluster connects with the service account of the pod the provider
	// runs in; only when asked for, never as a fallback.
	InCluster bool
	Exec      *Exec
	// Unknown is set when some connection value is not known yet (a
	// cluster created in the same apply); clients then fail with a clear
	// error instead of connecting to the wrong place.
	Unknown bool
}

// Exec is an exec credential plugin, as in a kubeconfig user's exec block.
type Exec struct {
	APIVersion string
	Command    string
	Args       []string
	Env        map[string]string
}

// Client rates: client-go's defaults (5 QPS, burst 10) throttle an apply of
// hundreds of objects; a provider run is short-lived and bounded.
const (
	DefaultQPS     = 1000
	DefaultBurst   = 2000
	DefaultTimeout = 30 * time.Second
)

// RESTConfig turns a connection into a client-go REST config. Explicit
// fields override what a kubeconfig file says, as in the kubernetes
// provider.
func RESTConfig(c Connection, timeout time.Duration) (*rest.Config, error) {
	if c.Unknown {
		return nil, errors.New("the connection settings are not known yet (they depend on a resource created in this apply)")
	}
	if c.InCluster {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("in_cluster is set, but this is not a pod with a service account: %w", err)
		}
		return finish(cfg, timeout), nil
	}
	if c.Exec != nil {
		if _, err := exec.LookPath(c.Exec.Command); err != nil {
			return nil, fmt.Errorf("the exec credential plugin %q is not installed where Terraform runs (%v). "+
				"Install it there; on runners where that is not possible (HCP Terraform's remote runs), give a token instead, "+
				"e.g. from the cloud provider's token data source or HCP Terraform's dynamic credentials", c.Exec.Command, err)
		}
	}
	cfg, err := clientConfig(c, timeout)
	if err != nil {
		return nil, err
	}
	return finish(cfg, timeout), nil
}

// clientConfig resolves a connection's settings and kubeconfig files into a
// client configuration. It contacts nothing and runs no plugin.
func clientConfig(c Connection, timeout time.Duration) (*rest.Config, error) {
	files, err := kubeconfigFiles(c)
	if err != nil {
		return nil, err
	}
	if c.Host == "" && len(files) == 0 {
		return nil, errNoServer
	}
	rules := &clientcmd.ClientConfigLoadingRules{}
	if c.ConfigPath != "" {
		rules.ExplicitPath = files[0]
	} else {
		for _, p := range files {
			if _, err := os.Stat(p); err != nil {
				return nil, fmt.Errorf("kubeconfig file %s: %w", p, err)
			}
		}
		rules.Precedence = files
	}
	overrides := &clientcmd.ConfigOverrides{}
	if c.Host != "" {
		overrides.ClusterInfo.Server = c.Host
	}
	if c.ClusterCACertificate != "" {
		overrides.ClusterInfo.CertificateAuthorityData = []byte(c.ClusterCACertificate)
	}
	if c.Insecure {
		overrides.ClusterInfo.InsecureSkipTLSVerify = true
	}
	if c.TLSServerName != "" {
		overrides.ClusterInfo.TLSServerName = c.TLSServerName
	}
	if c.ProxyURL != "" {
		overrides.ClusterInfo.ProxyURL = c.ProxyURL
	}
	if c.Token != "" {
		overrides.AuthInfo.Token = c.Token
	}
	if c.ClientCertificate != "" {
		overrides.AuthInfo.ClientCertificateData = []byte(c.ClientCertificate)
	}
	if c.ClientKey != "" {
		overrides.AuthInfo.ClientKeyData = []byte(c.ClientKey)
	}
	if c.Exec != nil {
		if timeout <= 0 {
			timeout = DefaultTimeout
		}
		overrides.AuthInfo.Exec = execConfig(c.Exec, timeout)
	}
	// Not the deferred loader: it falls back to in-cluster credentials when
	// the settings are empty, which would send the runner's own token to
	// whatever API server that resolves to.
	raw, err := rules.Load()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	if len(files) > 0 {
		overrides.CurrentContext, err = chooseContext(c, raw, files)
		if err != nil {
			return nil, err
		}
	}
	cfg, err := clientcmd.NewNonInteractiveClientConfig(*raw, overrides.CurrentContext, overrides, rules).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("building the client configuration: %w", err)
	}
	if cfg.Host == "" {
		return nil, errNoServer
	}
	if err := tokenInClear(c, cfg.Host, raw, overrides.CurrentContext); err != nil {
		return nil, err
	}
	return cfg, nil
}

// tokenInClear refuses bearer-token credentials (the provider's token
// or exec plugin, a kubeconfig user's token, token file, exec plugin or
// auth provider) for an API server reached over plain http://: a token
// there would cross the network in clear text, readable by anyone on the
// path. (client-go itself sends no credentials over http://: the requests
// would go unauthenticated, failing with 401 or 403 far from the cause.)
// insecure = true on the cluster allows it, for test clusters on a
// trusted network. The provider's own token with an http:// host is
// refused at validate already; this covers the exec plugin and what only
// the kubeconfig brings.
func tokenInClear(c Connection, host string, raw *clientcmdapi.Config, current string) error {
	if c.Insecure || !strings.HasPrefix(strings.ToLower(host), "http://") {
		return nil
	}
	var from string
	switch {
	case c.Exec != nil:
		from = fmt.Sprintf("the exec credential plugin %q", c.Exec.Command)
	case c.Token != "":
		from = "token"
	default:
		if current == "" {
			current = raw.CurrentContext
		}
		var user *clientcmdapi.AuthInfo
		if ctx := raw.Contexts[current]; ctx != nil {
			user = raw.AuthInfos[ctx.AuthInfo]
		}
		switch {
		case user == nil:
			return nil
		case user.Exec != nil:
			from = fmt.Sprintf("the kubeconfig user's exec credential plugin %q", user.Exec.Command)
		case user.AuthProvider != nil:
			from = fmt.Sprintf("the kubeconfig user's auth provider %q", user.AuthProvider.Name)
		case user.Token != "" || user.TokenFile != "":
			from = "the kubeconfig user's token"
		default:
			return nil
		}
	}
	return &ClearTokenError{Server: host, From: from}
}

// ClearTokenError is a bearer token configured for a server over plain
// http://.
type ClearTokenError struct {
	// Server is the API server's URL; From says where the token comes from.
	Server, From string
}

func (e *ClearTokenError) Error() string {
	return fmt.Sprintf("the API server %s is reached over plain http://, and a bearer token from %s is configured for it: a token there would cross the network in clear text, "+
		"readable by anyone on the path (and client-go sends none over http://, so every request would go unauthenticated). Use the server's https:// URL (host, or the kubeconfig cluster's server), "+
		"or set insecure = true on this cluster if it is a test cluster on a trusted network", e.Server, e.From)
}

// ContextError is a kubeconfig context that cannot be chosen safely: the
// one config_context names is not there, or the cluster names none in a
// kubeconfig other clusters share and the files have no context named
// like it.
type ContextError struct {
	Cluster string
	// Context is config_context; empty when none is set.
	Context string
	// Files are the kubeconfig files read, SharedWith the other
	// registered clusters that read one of them.
	Files      []string
	SharedWith []string
	// Contexts are the contexts the files have, sorted; Current is their
	// current context.
	Contexts []string
	Current  string
}

func (e *ContextError) Error() string {
	have := "it has no contexts"
	if len(e.Contexts) > 0 {
		have = "its contexts are " + quoteAll(e.Contexts)
		if e.Current != "" {
			have += fmt.Sprintf(" (current: %q)", e.Current)
		}
	}
	files := strings.Join(e.Files, ", ")
	if e.Context != "" {
		return fmt.Sprintf("the kubeconfig %s has no context %q; %s. Set config_context to one of them.", files, e.Context, have)
	}
	if len(e.SharedWith) == 0 {
		return fmt.Sprintf("cluster %q has no config_context, and the kubeconfig %s has no context named %q and more than one context; %s. "+
			"The current context is used on its own only in a kubeconfig with a single context: with several, `kubectl config use-context` would send this cluster's objects to whichever cluster it points at. "+
			"Set config_context to this cluster's context (or give the cluster a kubeconfig file of its own).",
			e.Cluster, files, e.Cluster, have)
	}
	readers := "clusters " + quoteAll(e.SharedWith) + " read"
	if len(e.SharedWith) == 1 {
		readers = "cluster " + quoteAll(e.SharedWith) + " reads"
	}
	return fmt.Sprintf("cluster %q has no config_context, and the kubeconfig %s, which %s too, has no context named %q; %s. "+
		"The current context of a kubeconfig that several clusters share is never used on its own: it would send this cluster's objects to whichever cluster that context points at. "+
		"Set config_context to this cluster's context (or give the cluster a kubeconfig file of its own).",
		e.Cluster, files, readers, e.Cluster, have)
}

// chooseContext picks the context a connection uses: config_context, else
// the context named like the cluster, else the current context, but only
// of a kubeconfig no other registered cluster reads (see Share) and that
// has no other context: in ~/.kube/config with several contexts (where
// aws eks update-kubeconfig and gcloud write by default), the current
// context follows `kubectl config use-context`, and this cluster's objects
// would follow it to another cluster.
func chooseContext(c Connection, raw *clientcmdapi.Config, files []string) (string, error) {
	if c.ConfigContext != "" && raw.Contexts[c.ConfigContext] != nil {
		return c.ConfigContext, nil
	}
	if c.ConfigContext == "" && c.Name != "" && raw.Contexts[c.Name] != nil {
		return c.Name, nil
	}
	if c.ConfigContext == "" && len(c.SharedWith) == 0 && len(raw.Contexts) == 1 && raw.Contexts[raw.CurrentContext] != nil {
		return raw.CurrentContext, nil // a kubeconfig of its own, with nowhere else to point
	}
	e := &ContextError{Cluster: c.Name, Context: c.ConfigContext, Files: files, SharedWith: c.SharedWith, Current: raw.CurrentContext}
	for name := range raw.Contexts {
		e.Contexts = append(e.Contexts, name)
	}
	sort.Strings(e.Contexts)
	return "", e
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// kubeconfigFiles are the kubeconfig files a connection reads, with ~
// expanded, made absolute and cleaned.
func kubeconfigFiles(c Connection) ([]string, error) {
	var paths []string
	if c.ConfigPath != "" {
		paths = []string{c.ConfigPath}
	} else {
		paths = c.ConfigPaths
	}
	out := make([]string, 0, len(paths))
	for _, p := range paths {
		p, err := expandHome(p)
		if err != nil {
			return nil, err
		}
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, filepath.Clean(p))
	}
	return out, nil
}

var errNoServer = errors.New("the connection settings name no API server: set host or config_path (or in_cluster = true to use the pod's service account)")

// finish applies the provider's client settings to a REST config.
func finish(cfg *rest.Config, timeout time.Duration) *rest.Config {
	cfg.QPS = DefaultQPS
	cfg.Burst = DefaultBurst
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	cfg.Timeout = timeout
	cfg.UserAgent = "terraform-provider-mesh"
	return cfg
}

func execConfig(e *Exec, timeout time.Duration) *clientcmdapi.ExecConfig {
	command, args := wrapExec(e.Command, e.Args, timeout)
	out := &clientcmdapi.ExecConfig{
		APIVersion:      e.APIVersion,
		Command:         command,
		Args:            append([]string(nil), args...),
		InteractiveMode: clientcmdapi.NeverExecInteractiveMode,
	}
	names := make([]string, 0, len(e.Env))
	for k := range e.Env {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		out.Env = append(out.Env, clientcmdapi.ExecEnvVar{Name: k, Value: e.Env[k]})
	}
	return out
}

func expandHome(p string) (string, error) {
	if p != "~" && !strings.HasPrefix(p, "~/") {
		return p, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("expanding %q: %w", p, err)
	}
	return filepath.Join(home, strings.TrimPrefix(p, "~")), nil
}

// ErrNotRegistered means a cluster is not (or no longer) in the provider's
// clusters.
var ErrNotRegistered = errors.New("not registered in the provider's clusters")

// Clients are the clients of one cluster.
type Clients struct {
	Config    *rest.Config
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
}

// Set hands out clients per cluster, building each on first use. It is safe
// for concurrent use.
type Set struct {
	conns   map[string]Connection
	timeout time.Duration

	mu      sync.Mutex
	clients map[string]*lazy
	silence silence
}

type lazy struct {
	once sync.Once
	c    *Clients
	err  error
}

// NewSet prepares clients for the given clusters; nothing connects yet.
// Connections that share a kubeconfig file are marked as such (Share).
func NewSet(conns map[string]Connection, timeout time.Duration) *Set {
	return &Set{conns: Share(conns), timeout: timeout, clients: map[string]*lazy{}}
}

// Timeout is the per-request timeout the clients use.
func (s *Set) Timeout() time.Duration {
	if s.timeout <= 0 {
		return DefaultTimeout
	}
	return s.timeout
}

// Get returns the clients of the named cluster.
func (s *Set) Get(cluster string) (*Clients, error) {
	conn, ok := s.conns[cluster]
	if !ok {
		return nil, fmt.Errorf("cluster %q: %w", cluster, ErrNotRegistered)
	}
	s.mu.Lock()
	l := s.clients[cluster]
	if l == nil {
		l = &lazy{}
		s.clients[cluster] = l
	}
	s.mu.Unlock()
	l.once.Do(func() { l.c, l.err = build(cluster, conn, s.timeout, &s.silence) })
	if l.err == nil {
		if err := s.silence.check(cluster); err != nil {
			return nil, err
		}
	}
	return l.c, l.err
}

func build(cluster string, conn Connection, timeout time.Duration, s *silence) (*Clients, error) {
	cfg, err := RESTConfig(conn, timeout)
	if err != nil {
		return nil, err
	}
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return &silentTransport{cluster: cluster, s: s, next: rt}
	})
	report := ""
	if cfg.ExecProvider != nil && ExecWrapper != "" {
		// Every exec plugin runs wrapped, the kubeconfig's too: under the
		// request timeout, and reporting its failure (exectimeout.go).
		if cfg.ExecProvider.Command != ExecWrapper {
			timeout := cfg.Timeout
			if timeout <= 0 {
				timeout = DefaultTimeout
			}
			cfg.ExecProvider.Command, cfg.ExecProvider.Args = wrapExec(cfg.ExecProvider.Command, cfg.ExecProvider.Args, timeout)
		}
		report = execReportPath(cluster)
		cfg.ExecProvider.Env = append(cfg.ExecProvider.Env, clientcmdapi.ExecEnvVar{Name: execReportEnv, Value: report})
	}
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the HTTP client: %w", err)
	}
	if report != "" {
		httpClient.Transport = &execReportTransport{report: report, next: httpClient.Transport}
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	return &Clients{Config: cfg, Dynamic: dyn, Discovery: disc}, nil
}
