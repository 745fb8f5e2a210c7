package engine

import (
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Desired is one object an intent wants, rendered for server-side apply.
type Desired struct {
	Entry
	// Manifest is nil when the object depends on values known only after
	// apply; its Entry.Digest is then empty.
	Manifest map[string]any
}

// Plan renders the translator's objects for owner: ownership labels added,
// digests computed. It contacts no cluster.
func Plan(owner Owner, objs []translate.Object) ([]Desired, error) {
	out := make([]Desired, 0, len(objs))
	for _, o := range objs {
		k := o.Key()
		d := Desired{Entry: Entry{Cluster: k.Cluster, APIVersion: k.APIVersion, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}}
		unknown, err := o.HasUnknown()
		if err != nil {
			return nil, err
		}
		if !unknown && owner.Composition != nil {
			// The object's content depends on the other contributions,
			// known only when applying; what this intent asks for is known.
			if d.Digest, err = contributionDigest(owner.Composition.Contribution); err != nil {
				return nil, err
			}
			d.Manifest = map[string]any{}
		} else if !unknown {
			m, err := o.Manifest()
			if err != nil {
				return nil, err
			}
			addLabels(m, owner.Labels())
			if d.Digest, err = desiredDigest(m); err != nil {
				return nil, err
			}
			d.Manifest = m
		}
		out = append(out, d)
	}
	return out, nil
}

func addLabels(manifest map[string]any, labels map[string]string) {
	meta, _ := manifest["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		manifest["metadata"] = meta
	}
	l, _ := meta["labels"].(map[string]any)
	if l == nil {
		l = map[string]any{}
		meta["labels"] = l
	}
	for k, v := range labels {
		l[k] = v
	}
}

// Entries returns the inventory entries of desired objects.
func Entries(ds []Desired) []Entry {
	out := make([]Entry, len(ds))
	for i, d := range ds {
		out[i] = d.Entry
	}
	return out
}
