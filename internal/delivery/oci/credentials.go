package oci

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
)

// Credentials are how a run authenticates to a registry: at most one of a
// docker config file, a username and password, or a token. None means
// anonymous. They are evaluated at every run (the provider reads them from
// its configuration) and never stored: not in state, not in the artifact,
// and never written into an error or a log.
type Credentials struct {
	// DockerConfigFile is a docker config.json ("auths" entries; a
	// credential helper is not run).
	DockerConfigFile string
	Username         string
	Password         string
	// Token is a registry bearer token (sent as "Authorization: Bearer").
	Token string
}

// Kinds lists which kinds of credentials are set, for the check that at
// most one is.
func (c Credentials) Kinds() []string {
	var out []string
	if c.DockerConfigFile != "" {
		out = append(out, "docker_config_file")
	}
	if c.Username != "" || c.Password != "" {
		out = append(out, "username/password")
	}
	if c.Token != "" {
		out = append(out, "token")
	}
	return out
}

// authenticator is the go-containerregistry authenticator of c for the
// registry host.
func (c Credentials) authenticator(host string) (authn.Authenticator, error) {
	if kinds := c.Kinds(); len(kinds) > 1 {
		return nil, fmt.Errorf("registry credentials: set one of docker_config_file, username/password or token, not %s", strings.Join(kinds, " and "))
	}
	switch {
	case c.DockerConfigFile != "":
		return dockerConfigAuth(c.DockerConfigFile, host)
	case c.Username != "" || c.Password != "":
		if c.Username == "" || c.Password == "" {
			return nil, errors.New("registry credentials: username and password go together; set both")
		}
		return authn.FromConfig(authn.AuthConfig{Username: c.Username, Password: c.Password}), nil
	case c.Token != "":
		return authn.FromConfig(authn.AuthConfig{RegistryToken: c.Token}), nil
	}
	return authn.Anonymous, nil
}

// dockerConfig is the part of a docker config.json we read.
type dockerConfig struct {
	Auths map[string]struct {
		Auth          string `json:"auth"`
		Username      string `json:"username"`
		Password      string `json:"password"`
		IdentityToken string `json:"identitytoken"`
		RegistryToken string `json:"registrytoken"`
	} `json:"auths"`
}

// dockerConfigAuth reads the entry of host in a docker config file. Its
// errors name the file and the host, never a value read from the file.
func dockerConfigAuth(file, host string) (authn.Authenticator, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("registry credentials: reading docker_config_file: %w", err)
	}
	var cfg dockerConfig
	if err := json.Unmarshal(raw, &cfg); err != nil {
		// json's syntax errors quote no input, only offsets.
		return nil, fmt.Errorf("registry credentials: docker_config_file %s is not a docker config.json: %w", file, err)
	}
	for _, key := range []string{host, "https://" + host, "http://" + host, "https://" + host + "/v1/", "https://" + host + "/v2/"} {
		e, ok := cfg.Auths[key]
		if !ok {
			continue
		}
		ac := authn.AuthConfig{Username: e.Username, Password: e.Password, IdentityToken: e.IdentityToken, RegistryToken: e.RegistryToken}
		if e.Auth != "" {
			dec, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return nil, fmt.Errorf("registry credentials: the auth of %s in docker_config_file %s is not base64", host, file)
			}
			user, pass, ok := strings.Cut(string(dec), ":")
			if !ok {
				return nil, fmt.Errorf("registry credentials: the auth of %s in docker_config_file %s is not user:password", host, file)
			}
			ac.Username, ac.Password = user, pass
		}
		return authn.FromConfig(ac), nil
	}
	return nil, fmt.Errorf("registry credentials: docker_config_file %s has no auths entry for %s", file, host)
}
