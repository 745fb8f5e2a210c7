package kubeclient

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/client-go/rest"
)

// Share returns a copy of conns in which every connection that reads a
// kubeconfig file another connection reads too lists those connections in
// SharedWith. Files are compared by absolute path, with symbolic links
// resolved where the file exists. Connections not known yet share nothing.
func Share(conns map[string]Connection) map[string]Connection {
	readers := map[string][]string{} // file -> clusters
	files := map[string][]string{}   // cluster -> files
	for name, c := range conns {
		if c.Unknown || c.InCluster {
			continue
		}
		fs, err := kubeconfigFiles(c)
		if err != nil {
			continue
		}
		for _, f := range fs {
			if real, err := filepath.EvalSymlinks(f); err == nil {
				f = real
			}
			files[name] = append(files[name], f)
			readers[f] = append(readers[f], name)
		}
	}
	out := make(map[string]Connection, len(conns))
	for name, c := range conns {
		others := map[string]bool{}
		for _, f := range files[name] {
			for _, r := range readers[f] {
				if r != name {
					others[r] = true
				}
			}
		}
		c.SharedWith = nil
		for o := range others {
			c.SharedWith = append(c.SharedWith, o)
		}
		sort.Strings(c.SharedWith)
		out[name] = c
	}
	return out
}

// Target is where a connection leads, resolved offline: the API server's
// address and what authenticates it. Two connections with one Target reach
// one API server.
type Target struct {
	// Server is the API server URL, normalised: lower-case scheme and
	// host, explicit port, no trailing slash.
	Server string
	// CA is a digest of the CA certificates that verify the server (PEM
	// re-encoding and file names do not change it); empty when the
	// system's roots are used or verification is off.
	CA string
	// TLSServerName is the name the server's certificate is checked
	// against when it differs from the address (one address serving
	// several clusters by SNI).
	TLSServerName string
}

// ResolveTarget resolves where a connection leads without contacting it
// and without running a credential plugin.
func ResolveTarget(c Connection) (Target, error) {
	if c.Unknown {
		return Target{}, errors.New("the connection settings are not known yet")
	}
	var cfg *rest.Config
	var err error
	if c.InCluster {
		cfg, err = rest.InClusterConfig()
	} else {
		cfg, err = clientConfig(c, 0)
	}
	if err != nil {
		return Target{}, err
	}
	server, err := normaliseServer(cfg.Host)
	if err != nil {
		return Target{}, err
	}
	t := Target{Server: server, TLSServerName: cfg.TLSClientConfig.ServerName}
	if !cfg.TLSClientConfig.Insecure {
		ca := cfg.TLSClientConfig.CAData
		if len(ca) == 0 && cfg.TLSClientConfig.CAFile != "" {
			if ca, err = os.ReadFile(cfg.TLSClientConfig.CAFile); err != nil {
				return Target{}, fmt.Errorf("reading the CA file: %w", err)
			}
		}
		t.CA = caDigest(ca)
	}
	return t, nil
}

func normaliseServer(host string) (string, error) {
	if !strings.Contains(host, "://") {
		host = "https://" + host
	}
	u, err := url.Parse(host)
	if err != nil {
		return "", fmt.Errorf("the API server address is not a URL: %w", err)
	}
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"https": "443", "http": "80"}[scheme]
	}
	hostname := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return scheme + "://" + net.JoinHostPort(hostname, port) + strings.TrimRight(u.EscapedPath(), "/"), nil
}

// caDigest digests the certificates of a PEM bundle, so that the same CA
// written with other line breaks or comments compares equal.
func caDigest(bundle []byte) string {
	if len(strings.TrimSpace(string(bundle))) == 0 {
		return ""
	}
	h := sha256.New()
	rest, found := bundle, false
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type == "CERTIFICATE" {
			h.Write(b.Bytes)
			found = true
		}
	}
	if !found {
		h.Write([]byte(strings.TrimSpace(string(bundle))))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Problem is a registered cluster that cannot be reached safely, found
// without contacting any cluster.
type Problem struct {
	Cluster string
	// Other is, for two clusters that reach one API server, the cluster
	// sorting first of the two.
	Other string
	// Context is set when the kubeconfig context cannot be chosen
	// (config_context missing from the files, or no context for a cluster
	// in a shared kubeconfig).
	Context *ContextError
	// Clear is set when a bearer token is configured for a server over
	// plain http:// (tokenInClear).
	Clear *ClearTokenError
	Err   error
}

// Check resolves every known connection offline (kubeconfig files are
// read; nothing is contacted, no plugin runs) and reports the clusters
// whose kubeconfig context cannot be chosen safely, those with a bearer
// token configured for a server over plain http://, and every two clusters
// that reach one API server. Other errors (a missing file, a plugin not
// installed) are left to the connection, which reports them for its
// cluster alone.
func Check(conns map[string]Connection) []Problem {
	conns = Share(conns)
	names := make([]string, 0, len(conns))
	for n := range conns {
		names = append(names, n)
	}
	sort.Strings(names)
	var problems []Problem
	first := map[Target]string{}
	for _, n := range names {
		c := conns[n]
		if c.Unknown {
			continue
		}
		t, err := ResolveTarget(c)
		var ce *ContextError
		if errors.As(err, &ce) {
			problems = append(problems, Problem{Cluster: n, Context: ce, Err: err})
			continue
		}
		var clear *ClearTokenError
		if errors.As(err, &clear) {
			problems = append(problems, Problem{Cluster: n, Clear: clear, Err: err})
			continue
		}
		if err != nil {
			continue
		}
		if other, ok := first[t]; ok {
			problems = append(problems, Problem{Cluster: n, Other: other, Err: sameServerError(other, n, t)})
			continue
		}
		first[t] = n
	}
	return problems
}

func sameServerError(a, b string, t Target) error {
	what := "the same address and CA"
	if t.CA == "" {
		what = "the same address, with no CA of their own"
	}
	//lint:ignore ST1005 a diagnostic of sentences, shown to the user as written
	return fmt.Errorf("clusters %q and %q both reach the API server %s (%s), so one of them would receive the other's objects. "+
		"A copied cluster entry whose config_context (or host) was not changed looks like this: point each cluster at its own API server.", a, b, t.Server, what)
}
