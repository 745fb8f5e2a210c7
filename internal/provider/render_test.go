package provider

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/render"
)

// MESH_RENDER_DIR with terraform plan -refresh=false writes, per cluster,
// the YAML of every object the plan lists, with no cluster reachable (every
// API server address is a closed port): one document per key of the
// objects attribute, each headed by its key, and nothing else.
func TestAccRender_planWritesEveryObjectOffline(t *testing.T) {
	w := newRelTF(t)
	out := filepath.Join(t.TempDir(), "rendered")
	w.env = append(w.env, render.DirEnv+"="+out)
	// One closed port per cluster: two clusters on one address would be a
	// plan error (they would reach one API server).
	port := map[string]int{"east": 1, "west": 2, "onprem": 3}
	provider := providerConfigWith(t, "", func(_ *testing.T, c string) string {
		return fmt.Sprintf(`host = "https://127.0.0.1:%d"
        token = "unused"
        insecure = true`, port[c])
	})
	w.write(provider + planTextVD("user") + `
resource "mesh_traffic_policy" "pt" {
  name        = "rel-pt"
  destination = { virtual_destination = mesh_virtual_destination.pt.hostname }
  timeout     = "2s"
}

output "keys" {
  value = concat(keys(mesh_virtual_destination.pt.objects), keys(mesh_traffic_policy.pt.objects))
}
`)
	plan, code := w.run("plan", "-refresh=false", "-out=plan.tfplan")
	if code != 0 {
		t.Fatalf("plan failed (exit %d):\n%s", code, plan)
	}
	shown, code := w.run("show", "-json", "plan.tfplan")
	if code != 0 {
		t.Fatalf("terraform show failed:\n%s", shown)
	}
	var rendered []string
	err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, doc := range strings.Split(string(b), "---\n") {
			head, body, _ := strings.Cut(doc, "\n")
			key, _, ok := strings.Cut(strings.TrimPrefix(head, "# "), ", owned by ")
			if !ok || !strings.HasPrefix(key, filepath.Base(filepath.Dir(p))+"/") {
				t.Errorf("%s: a document without its key in its cluster's file: %q", p, head)
			}
			if !strings.Contains(body, "kind: ") || !strings.Contains(body, "spec:") && !strings.Contains(body, "data:") {
				t.Errorf("%s: %s has no content:\n%s", p, key, body)
			}
			rendered = append(rendered, key)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(rendered)
	var doc struct {
		ResourceChanges []struct {
			Change struct {
				After struct {
					Objects map[string]any `json:"objects"`
				} `json:"after"`
			} `json:"change"`
		} `json:"resource_changes"`
	}
	if err := json.Unmarshal([]byte(shown[strings.Index(shown, "{"):]), &doc); err != nil {
		t.Fatal(err)
	}
	var planned []string
	for _, rc := range doc.ResourceChanges {
		for k := range rc.Change.After.Objects {
			planned = append(planned, k)
		}
	}
	sort.Strings(planned)
	if len(planned) < 10 || strings.Join(planned, "\n") != strings.Join(rendered, "\n") {
		t.Fatalf("the plan lists\n  %v\nand rendered were\n  %v", planned, rendered)
	}
}
