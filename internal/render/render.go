// Package render writes the objects a plan planned as YAML, for review:
// per intent and cluster into the directory MESH_RENDER_DIR names (make
// render), and as the documents of the mesh_rendered_objects data source.
package render

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// DirEnv names a directory into which every plan writes, per intent,
// the objects it planned, as YAML: `MESH_RENDER_DIR=out terraform plan
// -refresh=false` shows a reviewer the content behind each digest of the
// objects attribute, without contacting a cluster (make render).
const DirEnv = "MESH_RENDER_DIR"

// Planned writes the planned objects of one intent to
// <dir>/<cluster>/<owner kind>.<owner name>.yaml, one file per cluster, the
// objects in the inventory's order.
func Planned(owner engine.Owner, desired []engine.Desired) error {
	dir := os.Getenv(DirEnv)
	if dir == "" {
		return nil
	}
	docs, err := Docs(owner, desired)
	if err != nil {
		return err
	}
	byCluster := map[string][]string{}
	var clusters []string
	for i, d := range desired {
		if byCluster[d.Cluster] == nil {
			clusters = append(clusters, d.Cluster)
		}
		byCluster[d.Cluster] = append(byCluster[d.Cluster], docs[i])
	}
	for _, c := range clusters {
		if err := os.MkdirAll(filepath.Join(dir, c), 0o755); err != nil {
			return err
		}
		file := filepath.Join(dir, c, owner.Kind+"."+owner.Name+".yaml")
		if err := os.WriteFile(file, []byte(strings.Join(byCluster[c], "---\n")), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Docs renders each planned object of an intent as a YAML document
// headed by a comment with its key and owner; a composed object is this
// intent's part alone.
func Docs(owner engine.Owner, desired []engine.Desired) ([]string, error) {
	out := make([]string, 0, len(desired))
	for _, d := range desired {
		doc := fmt.Sprintf("# %s, owned by %s\n", d.Entry.StateKey(), owner)
		manifest := d.Manifest
		if owner.Composition != nil && owner.Composition.Composer != nil && manifest != nil {
			// A composed object holds every contribution; apply composes
			// them. This is the object with this intent's alone.
			m, err := owner.Composition.Composer.Compose(d.Entry.Key(), map[string]composition.Contribution{owner.Name: owner.Composition.Contribution.For(d.Entry.Cluster).Contribution})
			if err != nil {
				return nil, err
			}
			doc += "# composed at apply with the other contributions to this object; this intent's part:\n"
			manifest = m
		}
		if manifest == nil {
			doc += "# content known after apply\n"
		} else {
			raw, err := yaml.Marshal(manifest)
			if err != nil {
				return nil, err
			}
			doc += string(raw)
		}
		out = append(out, doc)
	}
	return out, nil
}
