package provider

import (
	"regexp"
	"strings"
	"testing"
)

// badInputVD is a valid virtual destination the policy cases refer to.
const badInputVD = `
resource "mesh_virtual_destination" "user" {
  name     = "user"
  hostname = "user.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east", namespace = "users", service = "user", priority = 0 },
    { cluster = "onprem", namespace = "users", service = "user", priority = 1 },
  ]
}
`

// vdWith is a virtual destination with one attribute replaced or added.
func vdWith(attrs string) string {
	base := map[string]string{
		"name":     `"user"`,
		"hostname": `"user.global"`,
		"ports":    `[{ number = 8080, protocol = "HTTP" }]`,
		"backends": `[{ cluster = "east", namespace = "users", service = "user" }, { cluster = "onprem", namespace = "users", service = "user", priority = 1 }]`,
	}
	var b strings.Builder
	b.WriteString("resource \"mesh_virtual_destination\" \"user\" {\n")
	for _, k := range []string{"name", "hostname", "ports", "backends"} {
		if !regexp.MustCompile(`(?m)^\s*` + k + `\s*=`).MatchString(attrs) {
			b.WriteString("  " + k + " = " + base[k] + "\n")
		}
	}
	b.WriteString(attrs + "\n}\n")
	return b.String()
}

func tpWith(attrs string) string {
	return badInputVD + `
resource "mesh_traffic_policy" "p" {
  name        = "p"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
` + attrs + "\n}\n"
}

func apWith(attrs string) string {
	return badInputVD + `
resource "mesh_access_policy" "p" {
  name        = "p"
  destination = { virtual_destination = mesh_virtual_destination.user.hostname }
` + attrs + "\n}\n"
}

// Bad input across every resource and the provider: each fails at plan
// with a diagnostic naming the attribute, and nothing reaches any cluster.
// badInputCase is one configuration that must fail, and the attribute the
// error names.
type badInputCase struct {
	name, provider, config, path string
}

// badInputCases is the bad-input table, shared by the plan and validate
// tests.
func badInputCases(t *testing.T) []badInputCase {
	t.Helper()
	noWestGateway := strings.Replace(providerConfig(t, ""), `east_west_gateway = { address = "203.0.113.20" }`, "", 1)
	sharedTrust := strings.Replace(providerConfig(t, ""), `trust_domain = "west.mesh"`, `trust_domain = "east.mesh"`, 1)
	return []badInputCase{
		// mesh_cluster
		{"cluster name not a DNS label", "", `resource "mesh_cluster" "c" { name = "East_1" }`, `name`},
		{"cluster not registered", "", `resource "mesh_cluster" "c" { name = "wine" }`, `name`},
		{"mtls mode", "", `resource "mesh_cluster" "c" {
  name      = "east"
  mtls_mode = "STRICTER"
}`, `mtls_mode`},
		{"istio namespace", "", `resource "mesh_cluster" "c" {
  name            = "east"
  istio_namespace = "Istio_System"
}`, `istio_namespace`},
		{"gateway selector label", "", `resource "mesh_cluster" "c" {
  name               = "east"
  east_west_selector = { "bad key!" = "x" }
}`, `east_west_selector\["bad key!"\]`},
		// mesh_virtual_destination
		{"vd name", "", vdWith(`  name = "User_1"`), `name`},
		{"vd hostname", "", vdWith(`  hostname = "not a host!"`), `hostname`},
		{"vd port zero", "", vdWith(`  ports = [{ number = 0, protocol = "HTTP" }]`), `ports\[0\]\.number`},
		{"vd protocol", "", vdWith(`  ports = [{ number = 8080, protocol = "SMTP" }]`), `ports\[0\]\.protocol`},
		{"vd unknown backend cluster", "", vdWith(`  backends = [{ cluster = "wine", namespace = "users", service = "user" }]`), `backends\[0\]\.cluster`},
		{"vd duplicate backend", "", vdWith(`  backends = [{ cluster = "east", namespace = "users", service = "user" }, { cluster = "east", namespace = "users", service = "user" }]`), `backends\[1\]`},
		{"vd failover mode", "", vdWith(`  failover = { mode = "random" }`), `failover\.mode`},
		{"vd outlier interval", "", vdWith(`  failover = { outlier_detection = { interval = "soon" } }`), `failover\.outlier_detection\.interval`},
		{"vd unknown client cluster", "", vdWith(`  clients = { clusters = ["wine"] }`), `clients\.clusters\[0\]`},
		{"vd exclusion of unknown cluster", "", vdWith(`  backends = [{ cluster = "east", namespace = "users", service = "user" }, { cluster = "onprem", namespace = "users", service = "user", priority = 1, exclude_for = { clusters = ["wine"] } }]`), `backends\[1\]\.exclude_for\.clusters\[0\]`},
		{"vd remote backend without gateway", noWestGateway, vdWith(`  backends = [{ cluster = "east", namespace = "users", service = "user" }, { cluster = "west", namespace = "users", service = "user", priority = 1 }]`), `backends\[1\]`},
		// mesh_traffic_policy
		{"tp weights do not sum to 100", "", tpWith(`  traffic_shift = [{ local = true, weight = 70 }, { cluster = "onprem", weight = 20 }]`), `traffic_shift`},
		{"tp timeout", "", tpWith(`  timeout = "fast"`), `timeout`},
		{"tp fault percent", "", tpWith(`  fault = { abort = { percent = 150, http_status = 503 } }`), `fault\.abort\.percent`},
		{"tp fault status", "", tpWith(`  fault = { abort = { percent = 1, http_status = 99 } }`), `fault\.abort\.http_status`},
		{"tp shift to a cluster that is no backend", "", tpWith(`  sources       = { clusters = ["east", "onprem"] }
  traffic_shift = [{ local = true, weight = 80 }, { cluster = "west", weight = 20 }]`), `traffic_shift\[1\]\.cluster`},
		{"tp retries", "", tpWith(`  retries = { attempts = -1 }`), `retries\.attempts`},
		{"tp load balancer", "", tpWith(`  load_balancer = "FASTEST"`), `load_balancer`},
		{"tp outlier detection on a virtual destination", "", tpWith(`  outlier_detection = { consecutive_5xx_errors = 3 }`), `outlier_detection`},
		{"tp per-try timeout", "", tpWith(`  retries = { attempts = 2, per_try_timeout = "500" }`), `retries\.per_try_timeout`},
		{"tp unknown source cluster", "", tpWith(`  sources = { clusters = ["wine"] }
  timeout = "2s"`), `sources\.clusters\[0\]`},
		// mesh_access_policy
		{"ap no sources", "", apWith(`  sources = []`), `sources`},
		{"ap unknown source cluster", "", apWith(`  sources = [{ clusters = ["wine"], namespace = "accounts", service_account = "account" }]`), `sources\[0\]\.clusters\[0\]`},
		{"ap method", "", apWith(`  sources = [{ namespace = "accounts", service_account = "account" }]
  rules   = [{ methods = ["get"] }]`), `rules\[0\]\.methods\[0\]`},
		{"ap path", "", apWith(`  sources = [{ namespace = "accounts", service_account = "account" }]
  rules   = [{ paths = ["/a*b"] }]`), `rules\[0\]\.paths\[0\]`},
		{"ap port", "", apWith(`  sources = [{ namespace = "accounts", service_account = "account" }]
  rules   = [{ ports = [0] }]`), `rules\[0\]\.ports\[0\]`},
		{"ap namespace", "", apWith(`  sources = [{ namespace = "Bad NS", service_account = "account" }]`), `sources\[0\]\.namespace`},
		{"ap trust domains collide", sharedTrust, apWith(`  sources = [{ cluster_selector = { cloud = "aws" }, namespace = "accounts", service_account = "account" }]`), `sources\[0\]`},
		{"two intents write one object", "", badInputVD + `
resource "mesh_virtual_destination" "user_backend" {
  name      = "user-backend"
  hostname  = "user-backend.global"
  namespace = "users"
  ports     = [{ number = 9090, protocol = "HTTP" }]
  backends  = [{ cluster = "west", namespace = "users", service = "user" }]
  clients   = { clusters = ["east"] }
}`, `name`},
		// provider
		{"provider exec with token", strings.Replace(providerConfig(t, ""), `config_context = "east"`, `config_context = "east"
        token = "t"
        exec = { api_version = "client.authentication.k8s.io/v1", command = "true" }`, 1),
			`resource "mesh_cluster" "c" { name = "east" }`, `clusters\["east"\]\.kubernetes\.exec`},
		{"provider label key", strings.Replace(providerConfig(t, ""), `labels = { cloud = "aws", env = "prod" }`, `labels = { "cloud provider" = "aws" }`, 1),
			`resource "mesh_cluster" "c" { name = "east" }`, `clusters\["east"\]\.labels\["cloud provider"\]`},
	}
}

// errorBlock is one error diagnostic in Terraform's human output (run
// with -no-color): its summary and its detail (the text after the
// configuration excerpt).
type errorBlock struct{ summary, detail string }

// errorBlocks reads the error diagnostics of a Terraform command's output:
// each starts at a line "Error: <summary>" and runs to the next diagnostic.
func errorBlocks(out string) []errorBlock {
	var blocks []errorBlock
	var cur *errorBlock
	var paras [][]string
	finish := func() {
		if cur == nil {
			return
		}
		var detail []string
		for _, p := range paras {
			// The configuration excerpt: "with ...", "on main.tf line ...".
			if len(p) > 0 && !strings.HasPrefix(p[0], "with ") && !strings.HasPrefix(p[0], "on ") {
				detail = append(detail, p...)
			}
		}
		cur.detail, cur, paras = strings.Join(detail, " "), nil, nil
	}
	for _, line := range strings.Split(out, "\n") {
		text := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "Error: "):
			finish()
			blocks = append(blocks, errorBlock{summary: strings.TrimPrefix(line, "Error: ")})
			cur = &blocks[len(blocks)-1]
		case strings.HasPrefix(line, "Warning: "):
			finish()
		case cur != nil && text == "":
			paras = append(paras, nil)
		case cur != nil:
			if len(paras) == 0 {
				paras = append(paras, nil)
			}
			paras[len(paras)-1] = append(paras[len(paras)-1], text)
		}
	}
	finish()
	return blocks
}

// Every case of the bad-input table fails at plan with exactly one error,
// naming the attribute, in full sentences that end with a full stop, and
// nothing reaches any cluster. One mistake, one diagnostic: a schema
// validator and the translator never both report it.
func TestAccBadInputFailsAtPlan(t *testing.T) {
	requireMesh(t)
	// The valid virtual destination the policy cases refer to has its
	// backends in users: the plan checks that it exists. Run alone, no
	// earlier test has made it.
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	cases := badInputCases(t)
	if len(cases) < 30 {
		t.Fatalf("the table must hold at least 30 cases, has %d", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			provider := c.provider
			if provider == "" {
				provider = providerConfig(t, "")
			}
			w := newRelTF(t)
			w.write(provider + c.config)
			out, code := w.run("plan")
			if code == 0 {
				t.Fatalf("terraform plan passed:\n%s", out)
			}
			blocks := errorBlocks(out)
			if len(blocks) != 1 {
				t.Fatalf("terraform plan gave %d errors, want exactly one:\n%s", len(blocks), out)
			}
			if !regexp.MustCompile(`Attribute\s+` + c.path).MatchString(blocks[0].detail) {
				t.Errorf("the error does not name attribute %s:\n%s", c.path, out)
			}
			if !strings.HasSuffix(strings.TrimRight(blocks[0].detail, `)"`), ".") {
				t.Errorf("the error's detail does not end with a full stop: %q", blocks[0].detail)
			}
			if left := relAllOwned(t); len(left) > 0 {
				t.Fatalf("the failed plan left objects in the clusters: %v", left)
			}
		})
	}
}

// badInputNeedsPlan are the cases terraform validate cannot catch: they
// depend on the provider's cluster registry (clusters, gateways, trust
// domains) or on another resource's values, which exist only at plan.
var badInputNeedsPlan = map[string]string{
	"cluster not registered":                   "registry",
	"vd unknown backend cluster":               "registry",
	"vd unknown client cluster":                "registry",
	"vd exclusion of unknown cluster":          "registry",
	"vd remote backend without gateway":        "registry (east_west_gateway)",
	"tp shift to a cluster that is no backend": "the virtual destination's backends",
	"tp unknown source cluster":                "registry",
	"ap unknown source cluster":                "registry",
	"ap trust domains collide":                 "registry (trust domains)",
	"two intents write one object":             "another resource's objects",
}

// terraform validate catches every other case of the bad-input table,
// naming the attribute: the resources run the translator's own rules in
// ValidateResourceConfig, and the provider its in ValidateProviderConfig.
func TestAccBadInputFailsAtValidate(t *testing.T) {
	cases := badInputCases(t)
	checked := 0
	for _, c := range cases {
		if _, plan := badInputNeedsPlan[c.name]; plan {
			continue
		}
		checked++
		t.Run(c.name, func(t *testing.T) {
			provider := c.provider
			if provider == "" {
				provider = providerConfig(t, "")
			}
			w := newRelTF(t)
			w.write(provider + c.config)
			out, code := w.run("validate", "-no-color")
			if code == 0 {
				t.Fatalf("terraform validate passed:\n%s", out)
			}
			if !regexp.MustCompile(c.path).MatchString(out) {
				t.Fatalf("terraform validate failed without naming %s:\n%s", c.path, out)
			}
		})
	}
	for name := range badInputNeedsPlan {
		found := false
		for _, c := range cases {
			found = found || c.name == name
		}
		if !found {
			t.Errorf("badInputNeedsPlan lists %q, which is not in the table", name)
		}
	}
	if checked < 25 {
		t.Fatalf("only %d cases checked at validate", checked)
	}
}
