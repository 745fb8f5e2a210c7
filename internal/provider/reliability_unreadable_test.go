package provider

import (
	"encoding/json"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

// relPlanUnknownKeys saves a plan with -detailed-exitcode (plus extra
// arguments) and returns its exit code, its text, and the keys of addr's
// objects that the plan leaves known after apply, as liveOwned keys.
func relPlanUnknownKeys(t *testing.T, w *relTF, addr string, extra ...string) (int, string, []string) {
	t.Helper()
	out, code := w.run(append([]string{"plan", "-detailed-exitcode", "-out=plan.tfplan"}, extra...)...)
	if code == 1 {
		t.Fatalf("plan failed:\n%s", out)
	}
	shown, scode := w.run("show", "-json", "plan.tfplan")
	if scode != 0 {
		t.Fatalf("terraform show failed:\n%s", shown)
	}
	var doc struct {
		ResourceChanges []struct {
			Address string `json:"address"`
			Change  struct {
				AfterUnknown struct {
					Objects any `json:"objects"`
				} `json:"after_unknown"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(shown[strings.Index(shown, "{"):]), &doc); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, rc := range doc.ResourceChanges {
		if rc.Address != addr {
			continue
		}
		m, ok := rc.Change.AfterUnknown.Objects.(map[string]any)
		if !ok {
			if rc.Change.AfterUnknown.Objects == true {
				t.Fatalf("the plan leaves all of %s's objects unknown, not the unread cluster's:\n%s", addr, out)
			}
			continue
		}
		for k, v := range m {
			if v != true {
				continue
			}
			e, err := engine.EntryFromStateKey(k, "")
			if err != nil {
				t.Fatal(err)
			}
			keys = append(keys, liveKey(e))
		}
	}
	sort.Strings(keys)
	return code, out, keys
}

// keysIn returns the keys of one cluster.
func keysIn(keys []string, cluster string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k, cluster+"/") {
			out = append(out, k)
		}
	}
	return out
}

// A plan that cannot read a cluster holding an intent's objects does not
// say "No changes": west stops answering after a virtual destination was
// applied in three clusters. The plan exits 2 under -detailed-exitcode,
// names west, and leaves exactly west's objects known after apply. A
// refresh-only apply while west is away keeps that in state, so a plan
// with -refresh=false re-checks west too. An apply of a new port while
// west is away updates east and onprem, fails naming west only, and state
// lists exactly what exists. Once west is back the apply converges and the
// next plan is empty.
func TestAccReliability_unreadableClusterIsReChecked(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	proxies := newRelProxies(t)
	owner := engine.Owner{Kind: "virtual-destination", Name: "rel-unread"}
	const addr = "mesh_virtual_destination.unread"
	w := newRelTF(t)
	relCleanup(t, w, func() { proxies.heal(t) }, owner)
	provider := providerConfigWith(t, `request_timeout = "10s"`, proxies.connection)

	w.write(provider + relVDConfig("unread", owner.Name, 8080, `["east", "west", "onprem"]`))
	w.apply()
	w.requireExact(addr, owner.Kind, owner.Name)
	// Every cluster answers and nothing changed: no perpetual re-check.
	w.planIsEmpty()
	if out, code := w.run("plan", "-detailed-exitcode", "-refresh=false"); code != 0 {
		t.Fatalf("plan -refresh=false with every cluster read: exit %d\n%s", code, out)
	}
	inWest := keysIn(relKeys(w.mustInventory(addr)), "west")
	if len(inWest) == 0 {
		t.Fatal("no objects in west to re-check")
	}

	// West stops answering: the plan is not empty, and re-checks exactly
	// west's objects.
	proxies["west"].Refuse()
	code, out, unknown := relPlanUnknownKeys(t, w, addr)
	if code != 2 {
		t.Fatalf("plan with west unreadable: exit %d, want 2 (changes):\n%s", code, out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"Warning: Cluster west could not be read", "re-checked at apply", "Cluster west is unreachable", "(known after apply)"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the plan does not say %q:\n%s", want, out)
		}
	}
	if regexp.MustCompile(`Cluster (east|onprem) could not be read`).MatchString(flat) {
		t.Errorf("the plan names a cluster that answered:\n%s", out)
	}
	if strings.Join(unknown, " ") != strings.Join(inWest, " ") {
		t.Fatalf("the plan re-checks %v, want exactly west's objects %v", unknown, inWest)
	}

	// A refresh while west is away keeps its entries and records that it
	// could not be read: a plan without refresh re-checks west as well.
	w.refreshOnly()
	code, out, unknown = relPlanUnknownKeys(t, w, addr, "-refresh=false")
	if code != 2 || strings.Join(unknown, " ") != strings.Join(inWest, " ") || !strings.Contains(out, "Cluster west could not be read") {
		t.Fatalf("plan -refresh=false after a refresh that could not read west: exit %d, re-checks %v, want exit 2 and %v:\n%s", code, unknown, inWest, out)
	}

	// An apply while west is away: east and onprem take the new port,
	// west fails, and state lists exactly what exists.
	before := relSnapshot(t, owner)
	w.write(provider + relVDConfig("unread", owner.Name, 9090, `["east", "west", "onprem"]`))
	out = w.applyFails()
	relRequireClusterError(t, out, "west", `is unreachable`)
	requireStateCoversLive(t, w, addr, owner, "west")
	after := relSnapshot(t, owner)
	for k, v := range before {
		switch {
		case strings.HasPrefix(k, "west/") && after[k] != v:
			t.Errorf("%s in west was written while west was away", k)
		case !strings.HasPrefix(k, "west/") && strings.Contains(k, "/ServiceEntry/") && after[k] == v:
			t.Errorf("%s has the old port, although its cluster answered", k)
		}
	}
	if out, code := w.run("plan", "-detailed-exitcode", "-refresh=false"); code != 2 || !strings.Contains(out, "Cluster west could not be read") {
		t.Fatalf("plan -refresh=false after an apply that could not reach west: exit %d, want 2 naming west:\n%s", code, out)
	}

	// West is back: the apply converges, and the plan is empty again.
	proxies.heal(t)
	w.apply()
	w.requireExact(addr, owner.Kind, owner.Name)
	w.planIsEmpty()
	if out, code := w.run("plan", "-detailed-exitcode", "-refresh=false"); code != 0 {
		t.Fatalf("plan -refresh=false after converging: exit %d\n%s", code, out)
	}
	requireNoOrphans(t, w)
}

// A registry known only after apply says so once per run, however many
// intents the plan has, and names the checks that wait for the apply.
func TestAccReliability_unknownRegistryWarnsOnce(t *testing.T) {
	w := newRelTF(t)
	config := `
resource "terraform_data" "registry" {
  input = { east = { network = "net-east" } }
}
provider "mesh" {
  clusters = terraform_data.registry.output
}
`
	for _, name := range []string{"a", "b", "c"} {
		config += relVDConfigOne(name)
	}
	w.write(config)
	out, code := w.run("plan", "-detailed-exitcode")
	if code != 2 {
		t.Fatalf("plan with the registry unknown: exit %d, want 2:\n%s", code, out)
	}
	if n := strings.Count(out, "Warning: Cluster registry known only after apply"); n != 1 {
		t.Fatalf("the unknown registry is reported %d times, want once:\n%s", n, out)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{"every cluster an intent names", "retired_clusters", "wait for the apply"} {
		if !strings.Contains(flat, want) {
			t.Errorf("the warning does not say %q:\n%s", want, out)
		}
	}
}

// relVDConfigOne is a virtual destination with one backend in east.
func relVDConfigOne(name string) string {
	return `
resource "mesh_virtual_destination" "` + name + `" {
  name     = "rel-unknown-` + name + `"
  hostname = "rel-unknown-` + name + `.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [{ cluster = "east", namespace = "users", service = "user" }]
}
`
}
