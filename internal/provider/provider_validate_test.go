package provider

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-testing/helper/resource"
)

// Bad provider configurations fail at plan with a message that names the
// attribute. None of them reaches a cluster: the hosts are unroutable.
func TestProviderConfigValidation(t *testing.T) {
	const good = `host = "https://127.0.0.1:1"
        token = "t"`
	cases := []struct {
		name    string
		cluster string // body of clusters.east
		extra   string // more provider attributes
		want    string // regexp over the error output
	}{
		{"no way to connect", `kubernetes = {}`, "", `No way to connect[\s\S]*clusters\["east"\]\.kubernetes`},
		{"exec with token", `kubernetes = {
        host  = "https://127.0.0.1:1"
        token = "t"
        exec  = { api_version = "client.authentication.k8s.io/v1", command = "aws" }
      }`, "", `Contradictory credentials[\s\S]*clusters\["east"\]\.kubernetes\.exec`},
		{"gateway port out of range", `kubernetes = {
        ` + good + `
      }
      east_west_gateway = { address = "203.0.113.1", port = 70000 }`, "", `clusters\["east"\]\.east_west_gateway\.port[\s\S]*between 1 and\s+65535`},
		{"invalid label key", `kubernetes = {
        ` + good + `
      }
      labels = { "bad key!" = "x" }`, "", `Invalid label key[\s\S]*clusters\["east"\]\.labels\["bad key!"\]`},
		{"invalid label value", `kubernetes = {
        ` + good + `
      }
      labels = { cloud = "not valid!" }`, "", `Invalid label value[\s\S]*clusters\["east"\]\.labels\["cloud"\]`},
		{"context without kubeconfig", `kubernetes = {
        ` + good + `
        config_context = "east"
      }`, "", `Context without kubeconfig[\s\S]*clusters\["east"\]\.kubernetes\.config_context`},
		{"client certificate without key", `kubernetes = {
        host               = "https://127.0.0.1:1"
        client_certificate = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
      }`, "", `Incomplete client certificate[\s\S]*clusters\["east"\]\.kubernetes\.client_key`},
		{"insecure with CA", `kubernetes = {
        ` + good + `
        insecure               = true
        cluster_ca_certificate = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
      }`, "", `Contradictory TLS settings[\s\S]*clusters\["east"\]\.kubernetes\.insecure`},
		{"host not a URL", `kubernetes = {
        host  = "east.example.com"
        token = "t"
      }`, "", `Invalid URL[\s\S]*clusters\["east"\]\.kubernetes\.host`},
		{"CA not PEM", `kubernetes = {
        ` + good + `
        cluster_ca_certificate = "not pem"
      }`, "", `Invalid PEM data[\s\S]*clusters\["east"\]\.kubernetes\.cluster_ca_certificate`},
		{"trust domain with scheme", `kubernetes = {
        ` + good + `
      }
      trust_domain = "spiffe://east.mesh"`, "", `Invalid trust domain[\s\S]*clusters\["east"\]\.trust_domain`},
		{"exec api version", `kubernetes = {
        host = "https://127.0.0.1:1"
        exec = { api_version = "v1", command = "aws" }
      }`, "", `clusters\["east"\]\.kubernetes\.exec\.api_version[\s\S]*client\.authentication\.k8s\.io/v1`},
		{"token over plain http", `kubernetes = {
        host  = "http://127.0.0.1:1"
        token = "t"
      }`, "", `Token over plain HTTP[\s\S]*clusters\["east"\]\.kubernetes\.host`},
		{"exec token over plain http", `kubernetes = {
        host = "http://127.0.0.1:1"
        exec = { api_version = "client.authentication.k8s.io/v1", command = "sh" }
      }`, "", `Token over plain HTTP[\s\S]*clusters\["east"\]\.kubernetes\.host[\s\S]*exec credential plugin "sh"`},
		{"empty config_path", `kubernetes = {
        config_path = ""
      }`, "", `No way to connect[\s\S]*clusters\["east"\]\.kubernetes`},
		{"host without credentials", `kubernetes = {
        host = "https://127.0.0.1:1"
      }`, "", `No credentials[\s\S]*clusters\["east"\]\.kubernetes\.host`},
		{"request timeout", `kubernetes = {
        ` + good + `
      }`, `request_timeout = "soon"`, `Invalid duration[\s\S]*request_timeout`},
		{"empty field manager", `kubernetes = {
        ` + good + `
      }`, `field_manager = ""`, `field_manager[\s\S]*length`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			config := fmt.Sprintf(`
provider "mesh" {
  clusters = {
    east = {
      %s
    }
  }
  %s
}
data "mesh_clusters" "all" {}
`, c.cluster, c.extra)
			planFailsWith(t, config, c.want)
		})
	}
}

// planFailsWith plans config offline (no cluster is reached; nothing can
// be written) and requires a plan error matching want.
func planFailsWith(t *testing.T, config, want string) {
	t.Helper()
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config:      config,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(want),
		}},
	})
}

func TestProviderConfigValidation_badClusterName(t *testing.T) {
	resource.UnitTest(t, resource.TestCase{
		ProtoV6ProviderFactories: protoV6ProviderFactories,
		Steps: []resource.TestStep{{
			Config: `
provider "mesh" {
  clusters = {
    East_1 = { kubernetes = { host = "https://127.0.0.1:1", token = "t" } }
  }
}
data "mesh_clusters" "all" {}
`,
			PlanOnly:    true,
			ExpectError: regexp.MustCompile(`Invalid cluster name[\s\S]*clusters\["East_1"\]`),
		}},
	})
}

// A URL validator never echoes the value: a proxy URL may carry a password.
func TestURLValidatorDoesNotEchoTheValue(t *testing.T) {
	const secret = "s3cret-proxy-password"
	req := validator.StringRequest{Path: path.Root("proxy_url"), ConfigValue: types.StringValue("ftp://user:" + secret + "@proxy.example:3128")}
	var resp validator.StringResponse
	urlValidator{schemes: []string{"http", "https", "socks5"}}.ValidateString(context.Background(), req, &resp)
	if !resp.Diagnostics.HasError() {
		t.Fatal("an ftp:// proxy URL was accepted")
	}
	for _, d := range resp.Diagnostics {
		if strings.Contains(d.Summary()+d.Detail(), secret) {
			t.Fatalf("the diagnostic echoes the value: %s: %s", d.Summary(), d.Detail())
		}
	}
}
