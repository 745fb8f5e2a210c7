package oraclecall

import (
	"bytes"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// goldenCases reads the inputs of an intent's golden cases.
func goldenCases(t *testing.T, pkg string) map[string]struct {
	Registry []translate.CaseCluster `json:"registry"`
	Intent   json.RawMessage         `json:"intent"`
} {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "translate", pkg, "testdata", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]struct {
		Registry []translate.CaseCluster `json:"registry"`
		Intent   json.RawMessage         `json:"intent"`
	}{}
	for _, f := range files {
		if strings.HasSuffix(f, ".golden.yaml") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		c := out[f]
		if err := yaml.Unmarshal(raw, &c); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out[f] = c
	}
	if len(out) == 0 {
		t.Fatalf("no golden cases of %s", pkg)
	}
	return out
}

// TestServeAnswersAsTheTranslatorDoes checks that what goes through the
// translating program (Serve, JSON both ways) is what the translator and
// the routing statement answer in process: the objects of every virtual
// destination case, and the statement of every virtual destination and
// access policy case, rendered from the decoded answer.
func TestServeAnswersAsTheTranslatorDoes(t *testing.T) {
	serve := func(req Request) Response {
		t.Helper()
		in, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if err := Serve(bytes.NewReader(in), &out); err != nil {
			t.Fatal(err)
		}
		var resp Response
		if err := json.Unmarshal(out.Bytes(), &resp); err != nil {
			t.Fatal(err)
		}
		return resp
	}
	for name, c := range goldenCases(t, "virtualdestination") {
		reg := translate.CaseRegistry(c.Registry)
		var in virtualdestination.Intent
		if err := yaml.UnmarshalStrict(c.Intent, &in); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		objs, err := virtualdestination.Translate(in, reg)
		got := serve(Request{Op: "translate", Intent: "virtual-destination", Raw: c.Intent, Registry: c.Registry})
		if err != nil {
			if got.Err != err.Error() {
				t.Errorf("%s: the translator fails with %q; served: %q", name, err, got.Err)
			}
		} else {
			n := 0
			for _, docs := range got.Objects {
				n += len(docs)
			}
			if got.Err != "" || n != len(objs) {
				t.Errorf("%s: the translator writes %d objects; served %d (error %q)", name, len(objs), n, got.Err)
			}
			for _, o := range objs {
				want, err := render(o)
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(strings.Join(got.Objects[o.Cluster], "\n"), want) {
					t.Errorf("%s: served objects of %s lack\n%s", name, o.Cluster, want)
				}
			}
		}
		d, err := routing.VirtualDestination(in, reg)
		resp := serve(Request{Op: "routing", Intent: "virtual-destination", Raw: c.Intent, Registry: c.Registry})
		if err != nil {
			if resp.Err != err.Error() {
				t.Errorf("%s: the routing statement fails with %q; served: %q", name, err, resp.Err)
			}
			continue
		}
		var served routing.Destination
		if err := json.Unmarshal(resp.Routing, &served); err != nil {
			t.Fatalf("%s: %v (%s)", name, err, resp.Err)
		}
		if !maps.Equal(served.Statement(), d.Statement()) {
			t.Errorf("%s: served statement %v, in process %v", name, served.Statement(), d.Statement())
		}
	}
	for name, c := range goldenCases(t, "accesspolicy") {
		in, err := accessCase(c.Intent)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		a, err := routing.AccessPolicy(in.Policy, in.Destination, translate.CaseRegistry(c.Registry))
		resp := serve(Request{Op: "routing", Intent: "access-policy", Raw: c.Intent, Registry: c.Registry})
		if err != nil {
			if resp.Err != err.Error() {
				t.Errorf("%s: the routing statement fails with %q; served: %q", name, err, resp.Err)
			}
			continue
		}
		var served routing.Access
		if err := json.Unmarshal(resp.Routing, &served); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !maps.Equal(served.Statement(), a.Statement()) {
			t.Errorf("%s: served statement %v, in process %v", name, served.Statement(), a.Statement())
		}
	}
}
