package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// terraform validate reports each mistake of the bad-input table that it
// can see (all but those of badInputNeedsPlan) exactly once, naming the
// attribute, in sentences ending with a full stop: a schema validator and
// the translator's rules (ValidateConfig) never both report it. Like
// TestExamplesValidate it needs the Terraform CLI and no cluster; the
// provider block points nowhere, since validate does not connect.
func TestValidateGivesOneErrorPerMistake(t *testing.T) {
	prov := `provider "mesh" {
  clusters = {
    east = { kubernetes = { config_path = "/nonexistent", config_context = "east" }, labels = { cloud = "aws" } }
    west = { kubernetes = { config_path = "/nonexistent", config_context = "west" } }
    onprem = { kubernetes = { config_path = "/nonexistent", config_context = "onprem" } }
  }
}
`
	type c struct{ name, config string }
	cases := []c{
		{"cluster name", `resource "mesh_cluster" "c" { name = "East_1" }`},
		{"mtls", `resource "mesh_cluster" "c" {
  name      = "east"
  mtls_mode = "STRICTER"
}`},
		{"istio ns", `resource "mesh_cluster" "c" {
  name            = "east"
  istio_namespace = "Istio_System"
}`},
		{"gw sel", `resource "mesh_cluster" "c" {
  name               = "east"
  east_west_selector = { "bad key!" = "x" }
}`},
		{"vd name", vdWith(`  name = "User_1"`)},
		{"vd hostname", vdWith(`  hostname = "not a host!"`)},
		{"vd port zero", vdWith(`  ports = [{ number = 0, protocol = "HTTP" }]`)},
		{"vd protocol", vdWith(`  ports = [{ number = 8080, protocol = "SMTP" }]`)},
		{"vd dup backend", vdWith(`  backends = [{ cluster = "east", namespace = "users", service = "user" }, { cluster = "east", namespace = "users", service = "user" }]`)},
		{"vd failover mode", vdWith(`  failover = { mode = "random" }`)},
		{"vd outlier interval", vdWith(`  failover = { outlier_detection = { interval = "soon" } }`)},
		{"tp weights", tpWith(`  traffic_shift = [{ local = true, weight = 70 }, { cluster = "onprem", weight = 20 }]`)},
		{"tp timeout", tpWith(`  timeout = "fast"`)},
		{"tp fault percent", tpWith(`  fault = { abort = { percent = 150, http_status = 503 } }`)},
		{"tp fault status", tpWith(`  fault = { abort = { percent = 1, http_status = 99 } }`)},
		{"tp retries", tpWith(`  retries = { attempts = -1 }`)},
		{"tp lb", tpWith(`  load_balancer = "FASTEST"`)},
		{"tp outlier vd", tpWith(`  outlier_detection = { consecutive_5xx_errors = 3 }`)},
		{"tp per try", tpWith(`  retries = { attempts = 2, per_try_timeout = "500" }`)},
		{"ap no sources", apWith(`  sources = []`)},
		{"ap method", apWith(`  sources = [{ namespace = "accounts", service_account = "account" }]
  rules   = [{ methods = ["get"] }]`)},
		{"ap path", apWith(`  sources = [{ namespace = "accounts", service_account = "account" }]
  rules   = [{ paths = ["/a*b"] }]`)},
		{"ap port", apWith(`  sources = [{ namespace = "accounts", service_account = "account" }]
  rules   = [{ ports = [0] }]`)},
		{"ap ns", apWith(`  sources = [{ namespace = "Bad NS", service_account = "account" }]`)},
	}
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("TestValidateGivesOneErrorPerMistake needs the Terraform CLI on PATH")
	}
	root := t.TempDir()
	env := terraformEnv(t, root)
	for i, cs := range cases {
		t.Run(cs.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(root, "c", fmt.Sprint(i))
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(relRequiredProviders+prov+cs.config), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, args := range [][]string{{"init", "-backend=false", "-input=false", "-no-color"}, {"validate", "-json"}} {
				cmd := exec.Command(tf, args...)
				cmd.Dir, cmd.Env = dir, env
				out, err := cmd.CombinedOutput()
				if args[0] == "init" {
					if err != nil {
						t.Fatalf("terraform init: %v\n%s", err, out)
					}
					continue
				}
				var v struct {
					Diagnostics []struct{ Severity, Summary, Detail string }
				}
				if err := json.Unmarshal(out, &v); err != nil {
					t.Fatalf("reading terraform validate -json: %v\n%s", err, out)
				}
				var errs []string
				for _, d := range v.Diagnostics {
					if d.Severity != "error" {
						continue
					}
					errs = append(errs, d.Summary+": "+d.Detail)
					if !strings.HasPrefix(d.Detail, "Attribute ") || !strings.HasSuffix(strings.TrimRight(d.Detail, `)"`), ".") {
						t.Errorf("the detail does not name the attribute or does not end with a full stop: %q", d.Detail)
					}
				}
				if len(errs) != 1 {
					t.Errorf("terraform validate gave %d errors, want exactly one:\n  %s", len(errs), strings.Join(errs, "\n  "))
				}
			}
		})
	}
}
