package provider

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
)

func planTextVD(service string) string {
	return `
resource "mesh_virtual_destination" "pt" {
  name     = "rel-pt"
  hostname = "rel-pt.global"
  ports    = [{ number = 8080, protocol = "HTTP" }]
  backends = [
    { cluster = "east",   namespace = "users", service = "user", priority = 0 },
    { cluster = "west",   namespace = "users", service = "` + service + `", priority = 1 },
    { cluster = "onprem", namespace = "users", service = "user", priority = 2 },
  ]
}
`
}

var planObjectLine = regexp.MustCompile(`(?m)^\s*([~+-]) "([^"]+/[^"]+)"\s+= `)

// A change to one backend of a virtual destination on three clusters: the
// text of terraform plan names, under objects, exactly the objects that the
// apply then writes, each by its key (cluster, kind, namespace, name), and
// no other; the unchanged ones are hidden by Terraform's diff.
func TestAccObjects_planNamesTheObjectsThatChange(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "virtual-destination", Name: "rel-pt"})
	w.write(providerConfig(t, "") + planTextVD("user"))
	w.apply()
	before := liveVersions(t)

	w.write(providerConfig(t, "") + planTextVD("user-v2"))
	out, code := w.run("plan")
	if code != 0 {
		t.Fatalf("plan failed (exit %d):\n%s", code, out)
	}
	named := map[string]bool{}
	for _, m := range planObjectLine.FindAllStringSubmatch(out, -1) {
		e, err := engine.EntryFromStateKey(m[2], "")
		if err != nil {
			t.Fatalf("the plan names %q, which is no object key: %v\n%s", m[2], err, out)
		}
		named[liveKey(e)] = true
	}
	if len(named) == 0 || !strings.Contains(out, "unchanged elements hidden") {
		t.Fatalf("the plan names no object by key, or shows the unchanged ones:\n%s", out)
	}
	w.apply()
	after := liveVersions(t)
	written := map[string]bool{}
	for k, v := range after {
		if before[k] != v {
			written[k] = true
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			written[k] = true
		}
	}
	if strings.Join(sortedKeys(named), "\n") != strings.Join(sortedKeys(written), "\n") {
		t.Fatalf("the plan named\n  %v\nbut the apply wrote\n  %v\nplan:\n%s", sortedKeys(named), sortedKeys(written), out)
	}
	for k := range named {
		if !strings.HasPrefix(k, "west/") && !strings.Contains(k, "/ServiceEntry/") && !strings.Contains(k, "/ConfigMap/") {
			t.Errorf("a change to west's backend changes %s", k)
		}
	}
	w.planIsEmpty()
}

// A state written with objects as a list (schema version 0, the shape of
// testdata/state-v0/demo.tfstate) plans with no change after the upgrade
// to the map, and the next refresh stores the map.
func TestAccObjects_stateUpgradePlansEmpty(t *testing.T) {
	for _, c := range testClusters {
		ensureNamespace(t, c, "users")
	}
	w := newRelTF(t)
	relCleanup(t, w, nil, engine.Owner{Kind: "cluster", Name: "onprem"}, engine.Owner{Kind: "virtual-destination", Name: "rel-imp"}, engine.Owner{Kind: "access-policy", Name: "rel-imp"})
	w.write(providerConfig(t, "") + importConfig)
	w.apply()

	// The fixture says which attributes each type had in version 0.
	v0Attrs := map[string]map[string]bool{}
	for _, rs := range v0State(t)["resources"].([]any) {
		r := rs.(map[string]any)
		attrs := r["instances"].([]any)[0].(map[string]any)["attributes"].(map[string]any)
		v0Attrs[r["type"].(string)] = map[string]bool{}
		for k := range attrs {
			v0Attrs[r["type"].(string)][k] = true
		}
	}
	statePath := filepath.Join(w.dir, "terraform.tfstate")
	raw, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	var state map[string]any
	if err := json.Unmarshal(raw, &state); err != nil {
		t.Fatal(err)
	}
	for _, rs := range state["resources"].([]any) {
		r := rs.(map[string]any)
		typ := r["type"].(string)
		for _, inst := range r["instances"].([]any) {
			in := inst.(map[string]any)
			attrs := in["attributes"].(map[string]any)
			in["schema_version"] = 0
			var list []any
			keys := make([]string, 0)
			objs := attrs["objects"].(map[string]any)
			for k := range objs {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				e, err := engine.EntryFromStateKey(k, objs[k].(string))
				if err != nil {
					t.Fatal(err)
				}
				list = append(list, map[string]any{"cluster": e.Cluster, "api_version": e.APIVersion, "kind": e.Kind, "namespace": e.Namespace, "name": e.Name, "digest": e.Digest})
			}
			attrs["objects"] = list
			for k := range attrs {
				if !v0Attrs[typ][k] {
					delete(attrs, k) // added since version 0
				}
			}
			if len(attrs) != len(v0Attrs[typ]) {
				t.Fatalf("%s: the version 0 state had %v, this one has %v", typ, sortedKeys(v0Attrs[typ]), attrs)
			}
		}
	}
	if raw, err = json.MarshalIndent(state, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statePath, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	w.planIsEmpty()
	w.refreshOnly()
	s, _ := w.stateFile()
	for _, r := range s.Resources {
		for _, inst := range r.Instances {
			if _, ok := inst.Attributes["objects"].(map[string]any); !ok {
				t.Fatalf("%s.%s: objects not upgraded to a map: %T", r.Type, r.Name, inst.Attributes["objects"])
			}
			// routing came after version 0: the refresh fills it, which
			// is why the plan above was empty.
			if r.Type != "mesh_cluster" {
				if routing, ok := inst.Attributes["routing"].(map[string]any); !ok || len(routing) == 0 {
					t.Errorf("%s.%s: routing not filled by the refresh of an old state: %v", r.Type, r.Name, inst.Attributes["routing"])
				}
			}
		}
	}
	w.requireExact("mesh_virtual_destination.imp", "virtual-destination", "rel-imp")
}
