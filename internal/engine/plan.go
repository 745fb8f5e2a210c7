package engine

import (
	"bytes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Desired is one object an intent wants, rendered for server-side apply.
type Desired struct {
	Entry
	// Manifest is nil when the object depends on values known only after
	// apply; its Entry.Digest is then empty.
	Manifest map[string]any
	// Hosts and Declares are, for a composed object (whose Manifest is
	// empty: its content is known when applying), the hosts this intent's
	// part of it names and declares (declaresOf); nil otherwise.
	Hosts, Declares []string
	// Part is, for a composed object, this intent's part of it (what it
	// asks for), whose content an adoption compares with a hand-written
	// object's (lostContent); nil otherwise.
	Part map[string]any
}

// Plan renders the translator's objects for owner: ownership labels added,
// digests computed. It contacts no cluster.
//
// Rendering an Istio object to JSON (protobuf's jsonpb) is most of the
// cost, so an object is rendered once: whether it holds a value known only
// after apply is read from the digest's own JSON, rather than from a
// rendering of its own (translate.Object.HasUnknown).
func Plan(owner Owner, objs []translate.Object) ([]Desired, error) {
	out := make([]Desired, 0, len(objs))
	labels := owner.Labels() // copied into each manifest by addLabels
	for _, o := range objs {
		k := o.Key()
		d := Desired{Entry: Entry{Cluster: k.Cluster, APIVersion: k.APIVersion, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}}
		if owner.Composition != nil {
			unknown, err := o.HasUnknown()
			if err != nil {
				return nil, err
			}
			if !unknown {
				// The object's content depends on the other contributions,
				// known only when applying; what this intent asks for is known.
				if d.Digest, err = owner.partDigest(owner.Composition.Contribution.For(k.Cluster).Raw); err != nil {
					return nil, err
				}
				d.Manifest = map[string]any{}
				part, err := o.Manifest()
				if err != nil {
					return nil, err
				}
				d.Hosts, d.Declares, d.Part = hostsOf(part), declaresOf(part), part
			}
			out = append(out, d)
			continue
		}
		m, err := o.Manifest()
		if err != nil {
			return nil, err
		}
		addLabels(m, labels)
		raw, err := canonicalJSON(withoutIdentity(m))
		if err != nil {
			return nil, err
		}
		// The body holds every field of the rendering but the identity;
		// json.Marshal escapes the NUL that starts every placeholder.
		if !bytes.Contains(raw, []byte(`\u0000unknown:`)) && !translate.IsUnknown(k.Namespace) && !translate.IsUnknown(k.Name) {
			d.Digest, d.Manifest = digestOfJSON(raw), m
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
