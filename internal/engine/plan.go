package engine

import (
	"bytes"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Desired is one object an intent wants, rendered for server-side apply.
type Desired struct {
	Entry
	// Manifest is nil when the object depends on values known only after
	// apply; its Entry.Digest is then empty. Objects of equal content in
	// several clusters share one map (Plan): read it, never change it.
	Manifest map[string]any
	// Hosts and Declares are, for a composed object (whose Manifest is
	// empty: its content is known when applying), the hosts this intent's
	// part of it names and declares (declaresOf); nil otherwise.
	Hosts, Declares []string
	// Part is, for a composed object, this intent's part of it (what it
	// asks for), whose content an adoption compares with a hand-written
	// object's (lostContent); nil otherwise. Shared like Manifest: read it
	// only.
	Part map[string]any
}

// Plan renders the translator's objects for owner: ownership labels added,
// digests computed. It contacts no cluster.
//
// Rendering an Istio object to JSON (protobuf's jsonpb) is most of the
// cost, so an object is rendered once: whether it holds a value known only
// after apply is read from the digest's own JSON, rather than from a
// rendering of its own (translate.Object.HasUnknown).
//
// Objects of equal content in several clusters (translate.Contents: most
// of a virtual destination's client clusters get the same objects) are
// rendered, canonicalised and digested once: they share the Manifest
// map, which no one changes, and the digest. A composed object's digest
// is its cluster's contribution's, digested once per contribution.
func Plan(owner Owner, objs []translate.Object) ([]Desired, error) {
	out := make([]Desired, 0, len(objs))
	labels := owner.Labels() // copied into each manifest by addLabels
	var contents translate.Contents
	rendered := map[uint64]rendering{}
	var parts map[string]string // a composed object's digest by contribution
	for _, o := range objs {
		k := o.Key()
		d := Desired{Entry: Entry{Cluster: k.Cluster, APIVersion: k.APIVersion, Kind: k.Kind, Namespace: k.Namespace, Name: k.Name}}
		id, numbered := contents.ID(o)
		r, seen := rendered[id]
		if !numbered || !seen {
			var err error
			if r, err = render(owner, labels, o, k); err != nil {
				return nil, err
			}
			if numbered {
				rendered[id] = r
			}
		}
		if owner.Composition != nil {
			if r.known {
				// The object's content depends on the other contributions,
				// known only when applying; what this intent asks for is known.
				raw := owner.Composition.Contribution.For(k.Cluster).Raw
				digest, ok := parts[raw]
				if !ok {
					var err error
					if digest, err = owner.partDigest(raw); err != nil {
						return nil, err
					}
					if parts == nil {
						parts = map[string]string{}
					}
					parts[raw] = digest
				}
				d.Digest, d.Manifest = digest, map[string]any{}
				d.Hosts, d.Declares, d.Part = r.hosts, r.declares, r.part
			}
			out = append(out, d)
			continue
		}
		if r.known {
			d.Digest, d.Manifest = r.digest, r.manifest
		}
		out = append(out, d)
	}
	return out, nil
}

// rendering is what Plan makes of one object's content: known is false
// when it depends on a value known only after apply. For a composed
// object, the hosts and declares of this intent's part of it; for any
// other, its manifest and digest.
type rendering struct {
	known           bool
	manifest        map[string]any
	digest          string
	hosts, declares []string
	part            map[string]any // a composed object's part (Desired.Part)
}

func render(owner Owner, labels map[string]string, o translate.Object, k translate.Key) (rendering, error) {
	if owner.Composition != nil {
		unknown, err := o.HasUnknown()
		if err != nil || unknown {
			return rendering{}, err
		}
		part, err := o.Manifest()
		if err != nil {
			return rendering{}, err
		}
		return rendering{known: true, hosts: hostsOf(part), declares: declaresOf(part), part: part}, nil
	}
	m, err := o.Manifest()
	if err != nil {
		return rendering{}, err
	}
	addLabels(m, labels)
	raw, err := canonicalJSON(withoutIdentity(m))
	if err != nil {
		return rendering{}, err
	}
	// The body holds every field of the rendering but the identity;
	// json.Marshal escapes the NUL that starts every placeholder.
	if bytes.Contains(raw, []byte(`\u0000unknown:`)) || translate.IsUnknown(k.Namespace) || translate.IsUnknown(k.Name) {
		return rendering{}, nil
	}
	return rendering{known: true, manifest: m, digest: digestOfJSON(raw)}, nil
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
