package provider

import (
	"context"
	"encoding/json"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"
	"github.com/hashicorp/terraform-plugin-go/tftypes"
)

// unknownWeight marks a weight not known at validate in tpShiftConfig.
const unknownWeight = -1 << 40

// tpShiftConfig is a traffic policy's configuration as ValidateConfig gets
// it: a service destination, a traffic_shift with the given weights (the
// first entry local, the others a cluster each; unknownWeight for a
// weight not known yet) and, when timeoutUnknown, a timeout not known yet
// (a variable, another resource's attribute).
func tpShiftConfig(t *testing.T, weights []int, timeoutUnknown bool) tfsdk.Config {
	t.Helper()
	ctx := context.Background()
	var sr resource.SchemaResponse
	(&trafficPolicyResource{}).Schema(ctx, resource.SchemaRequest{}, &sr)
	s := sr.Schema
	base := map[string]any{}
	for k, v := range leafBase["mesh_traffic_policy"] {
		base[k] = v
	}
	base["timeout"] = "2s"
	raw, err := leafValue(s.Type().TerraformType(ctx), "", base)
	if err != nil {
		t.Fatal(err)
	}
	shiftPath := tftypes.NewAttributePath().WithAttributeName("traffic_shift")
	timeoutPath := tftypes.NewAttributePath().WithAttributeName("timeout")
	raw, err = tftypes.Transform(raw, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
		switch {
		case p.Equal(timeoutPath) && timeoutUnknown:
			return tftypes.NewValue(tftypes.String, tftypes.UnknownValue), nil
		case p.Equal(shiftPath):
			list := v.Type().(tftypes.List)
			obj := list.ElementType.(tftypes.Object)
			var elems []tftypes.Value
			for i, w := range weights {
				fields := map[string]tftypes.Value{}
				for name, at := range obj.AttributeTypes {
					fields[name] = tftypes.NewValue(at, nil)
				}
				if i == 0 {
					fields["local"] = tftypes.NewValue(tftypes.Bool, true)
				} else {
					fields["cluster"] = tftypes.NewValue(tftypes.String, []string{"", "east", "west", "onprem"}[i%4])
				}
				fields["weight"] = tftypes.NewValue(tftypes.Number, big.NewFloat(float64(w)))
				if w == unknownWeight {
					fields["weight"] = tftypes.NewValue(tftypes.Number, tftypes.UnknownValue)
				}
				elems = append(elems, tftypes.NewValue(obj, fields))
			}
			return tftypes.NewValue(list, elems), nil
		}
		return v, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tfsdk.Config{Schema: s, Raw: raw}
}

func validateTrafficPolicy(cfg tfsdk.Config) diag.Diagnostics {
	var resp resource.ValidateConfigResponse
	(&trafficPolicyResource{}).ValidateConfig(context.Background(), resource.ValidateConfigRequest{Config: cfg}, &resp)
	return resp.Diagnostics
}

// The weights of traffic_shift are checked by terraform validate whatever
// else of the policy is not known yet (issue 38: the check waited for
// plan): with the timeout unknown, weights summing to 90 are one error at
// traffic_shift, and a weight above 100 one at its own weight; weights
// summing to 100, or with one of them unknown, are no error.
func TestValidateChecksWeightsWhileOtherValuesAreUnknown(t *testing.T) {
	cases := []struct {
		name    string
		weights []int
		unknown bool
		want    map[string]string // diagnostic path -> summary
	}{
		{"sum 90, timeout unknown", []int{70, 20}, true, map[string]string{"traffic_shift": "Weights do not sum to 100"}},
		{"sum 90, all known", []int{70, 20}, false, map[string]string{"traffic_shift": "Weights do not sum to 100"}},
		{"weight 120, timeout unknown", []int{120, -20}, true, map[string]string{"traffic_shift[0]": "Invalid weight", "traffic_shift[1]": "Invalid weight"}},
		{"sum 100, timeout unknown", []int{80, 20}, true, nil},
		{"a weight unknown", []int{70, unknownWeight}, true, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			diags := validateTrafficPolicy(tpShiftConfig(t, c.weights, c.unknown))
			got := map[string]string{}
			for _, d := range diags {
				p, ok := d.(diag.DiagnosticWithPath)
				if !ok || d.Severity() != diag.SeverityError {
					t.Errorf("unexpected diagnostic: %s: %s", d.Summary(), d.Detail())
					continue
				}
				if _, dup := got[p.Path().String()]; dup {
					t.Errorf("two errors at %s: %v", p.Path(), diags)
				}
				got[p.Path().String()] = d.Summary()
				if !strings.HasPrefix(d.Detail(), "Attribute traffic_shift") {
					t.Errorf("the detail does not name the attribute: %s", d.Detail())
				}
			}
			if len(got) != len(c.want) {
				t.Fatalf("validate gave %v, want %v", got, c.want)
			}
			for p, s := range c.want {
				if got[p] != s {
					t.Errorf("at %s: got %q, want %q (all: %v)", p, got[p], s, got)
				}
			}
		})
	}
}

// A diagnostic's own path is the part of the attribute's path Terraform
// can show in the configuration: the top-level attribute or its element.
func TestSourcePathStopsAtTheElement(t *testing.T) {
	for _, c := range []struct {
		in   path.Path
		want string
	}{
		{path.Root("timeout"), "timeout"},
		{path.Root("traffic_shift"), "traffic_shift"},
		{path.Root("traffic_shift").AtListIndex(1), "traffic_shift[1]"},
		{path.Root("ports").AtListIndex(0).AtName("number"), "ports[0]"},
		{path.Root("backends").AtListIndex(1).AtName("exclude_for").AtName("clusters").AtListIndex(0), "backends[1]"},
		{path.Root("fault").AtName("abort").AtName("percent"), "fault"},
		{path.Root("clusters").AtMapKey("east").AtName("kubernetes").AtName("exec"), `clusters["east"]`},
		{path.Root("east_west_selector").AtMapKey("bad key!"), `east_west_selector["bad key!"]`},
	} {
		if got := sourcePath(c.in).String(); got != c.want {
			t.Errorf("sourcePath(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

// validateDiag is one diagnostic of terraform validate -json, with the
// text of the configuration it points at.
type validateDiag struct {
	Severity, Summary, Detail string
	Snippet                   *struct {
		Code                 string
		HighlightStartOffset int `json:"highlight_start_offset"`
		HighlightEndOffset   int `json:"highlight_end_offset"`
	}
}

func (d validateDiag) highlighted() string {
	if d.Snippet == nil || d.Snippet.HighlightEndOffset > len(d.Snippet.Code) || d.Snippet.HighlightStartOffset > d.Snippet.HighlightEndOffset {
		return ""
	}
	return d.Snippet.Code[d.Snippet.HighlightStartOffset:d.Snippet.HighlightEndOffset]
}

// terraformValidate runs terraform init and validate -json on config (with
// the required_providers block) and returns validate's diagnostics. It
// needs the Terraform CLI and no cluster.
func terraformValidate(t *testing.T, root, name, config string, env []string) []validateDiag {
	t.Helper()
	tf, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("this test needs the Terraform CLI on PATH")
	}
	dir := filepath.Join(root, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.tf"), []byte(relRequiredProviders+config), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tf, "init", "-backend=false", "-input=false", "-no-color")
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("terraform init: %v\n%s", err, out)
	}
	cmd = exec.Command(tf, "validate", "-json")
	cmd.Dir, cmd.Env = dir, env
	out, _ := cmd.Output() // validate exits 1 on errors; the JSON says which
	var v struct{ Diagnostics []validateDiag }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("reading terraform validate -json: %v\n%s", err, out)
	}
	return v.Diagnostics
}

// validateProvider is a provider block that validate accepts without a
// cluster, and a variable that validate does not know.
const validateProvider = `provider "mesh" {
  clusters = {
    east   = { kubernetes = { config_path = "/nonexistent", config_context = "east" } }
    west   = { kubernetes = { config_path = "/nonexistent", config_context = "west" } }
    onprem = { kubernetes = { config_path = "/nonexistent", config_context = "onprem" } }
  }
}
variable "later" { type = string }
`

// terraform validate, as a user runs it: the weights check fires with
// other attributes unknown (a timeout from a variable, a shift target
// from a variable), and every error of a nested attribute points at the
// line that holds it (the list element, or the attribute for a single
// nested one), not at the resource block; the text names the full path.
func TestValidatePointsAtTheLineOfTheMistake(t *testing.T) {
	cases := []struct {
		name, config string
		summary      string // of the one error
		detail       string // its detail starts with this
		highlight    string // the configuration it points at starts with this
	}{
		{"weights, timeout unknown", tpWith(`  timeout = var.later
  traffic_shift = [{ local = true, weight = 70 }, { cluster = "onprem", weight = 20 }]`),
			"Weights do not sum to 100", "Attribute traffic_shift:", `[{ local = true, weight = 70 }`},
		{"weights, target unknown", tpWith(`  traffic_shift = [
    { local = true, weight = 70 },
    { cluster = var.later, weight = 20 },
  ]`),
			"Weights do not sum to 100", "Attribute traffic_shift:", "[\n"},
		{"list element", vdWith(`  ports = [{ number = 0, protocol = "HTTP" }]`),
			"Invalid port", "Attribute ports[0].number:", `{ number = 0, protocol = "HTTP" }`},
		{"second element", vdWith(`  backends = [
    { cluster = "east", namespace = "users", service = "user" },
    { cluster = "onprem", namespace = "Users!", service = "user", priority = 1 },
  ]`),
			"Invalid namespace", "Attribute backends[1].namespace:", `{ cluster = "onprem", namespace = "Users!"`},
		{"single nested", tpWith(`  fault = { abort = { percent = 150, http_status = 503 } }`),
			"Invalid percentage", "Attribute fault.abort.percent:", `{ abort = { percent = 150`},
		{"element of a nested list", apWith(`  sources = [{ namespace = "accounts", service_account = "account" }]
  rules   = [{ methods = ["get"] }]`),
			"Invalid value", "Attribute rules[0].methods[0]:", `{ methods = ["get"] }`},
	}
	root := t.TempDir()
	env := terraformEnv(t, root)
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			diags := terraformValidate(t, root, "c"+string(rune('a'+i)), validateProvider+c.config, env)
			var errs []validateDiag
			for _, d := range diags {
				if d.Severity == "error" {
					errs = append(errs, d)
				}
			}
			if len(errs) != 1 {
				t.Fatalf("terraform validate gave %d errors, want one %q: %+v", len(errs), c.summary, errs)
			}
			d := errs[0]
			if d.Summary != c.summary || !strings.HasPrefix(d.Detail, c.detail) {
				t.Fatalf("terraform validate: %s: %s\nwant %s: %s...", d.Summary, d.Detail, c.summary, c.detail)
			}
			if got := d.highlighted(); !strings.HasPrefix(got, c.highlight) {
				t.Fatalf("the error points at %q, want the configuration starting %q", got, c.highlight)
			}
		})
	}
}

// terraform validate checks what is known of a configuration, one value
// at a time (issue 38: any value not known yet skipped every rule): a
// traffic policy for some callers only (sources.namespaces) that sets a
// connection pool, a destination setting, is an error on connection_pool
// while its timeout, or sources.clusters, is not known yet; the same
// policy without the connection pool is no error, whatever is unknown; and
// a valid configuration of each intent with any one of its strings not
// known yet is no error.
func TestValidateChecksWhatIsKnown(t *testing.T) {
	ctx := context.Background()
	type res struct {
		name string
		r    interface {
			resource.Resource
			resource.ResourceWithValidateConfig
		}
	}
	config := func(t *testing.T, r res, values map[string]any, unknown string) tfsdk.Config {
		t.Helper()
		var sr resource.SchemaResponse
		r.r.Schema(ctx, resource.SchemaRequest{}, &sr)
		raw, err := leafValue(sr.Schema.Type().TerraformType(ctx), "", values)
		if err != nil {
			t.Fatal(err)
		}
		if unknown != "" {
			raw, err = tftypes.Transform(raw, func(p *tftypes.AttributePath, v tftypes.Value) (tftypes.Value, error) {
				if frameworkPath(p).String() == unknown {
					return tftypes.NewValue(v.Type(), tftypes.UnknownValue), nil
				}
				return v, nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		return tfsdk.Config{Schema: sr.Schema, Raw: raw}
	}
	validate := func(t *testing.T, r res, values map[string]any, unknown string) diag.Diagnostics {
		var resp resource.ValidateConfigResponse
		r.r.ValidateConfig(ctx, resource.ValidateConfigRequest{Config: config(t, r, values, unknown)}, &resp)
		return resp.Diagnostics
	}
	tp := res{"mesh_traffic_policy", &trafficPolicyResource{}}
	pool := map[string]any{}
	for k, v := range leafBase[tp.name] {
		pool[k] = v
	}
	pool["sources.namespaces.0"] = "accounts"
	pool["sources.clusters.0"] = "east"
	pool["timeout"] = "2s"
	pool["connection_pool.tcp.max_connections"] = 100
	for _, unknown := range []string{"timeout", "sources.clusters"} {
		diags := validate(t, tp, pool, unknown)
		if !diags.HasError() || !strings.Contains(diagText(diags), "Destination setting for some callers only") {
			t.Errorf("with %s unknown: want the connection pool's error, got %q", unknown, diagText(diags))
		}
	}
	delete(pool, "connection_pool.tcp.max_connections")
	for _, unknown := range []string{"timeout", "sources.clusters", "sources.namespaces", "sources.namespaces[0]"} {
		if diags := validate(t, tp, pool, unknown); diags.HasError() {
			t.Errorf("a valid policy with %s unknown: %q", unknown, diagText(diags))
		}
	}
	valid := map[string]map[string]any{"mesh_traffic_policy": {"timeout": "2s"}}
	for _, r := range []res{{"mesh_virtual_destination", &virtualDestinationResource{}}, tp, {"mesh_access_policy", &accessPolicyResource{}}} {
		base := map[string]any{}
		for k, v := range leafBase[r.name] {
			base[k] = v
		}
		for k, v := range valid[r.name] {
			base[k] = v
		}
		if diags := validate(t, r, base, ""); diags.HasError() {
			t.Fatalf("%s: the base configuration is not valid: %q", r.name, diagText(diags))
		}
		var strs []string
		_ = tftypes.Walk(config(t, r, base, "").Raw, func(p *tftypes.AttributePath, v tftypes.Value) (bool, error) {
			if v.Type().Is(tftypes.String) && !v.IsNull() {
				strs = append(strs, frameworkPath(p).String())
			}
			return true, nil
		})
		if len(strs) < 3 {
			t.Fatalf("%s: only %v strings to make unknown", r.name, strs)
		}
		for _, s := range strs {
			if diags := validate(t, r, base, s); diags.HasError() {
				t.Errorf("%s with %s unknown: %q", r.name, s, diagText(diags))
			}
		}
	}
}
