package gen

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// Rendering the objects the way the provider does: translate, then
// engine.Plan (ownership labels, digests). Two pieces of the provider are
// restated here because they are unexported in internal/provider: a
// virtual destination's record ConfigMap (virtual_destination_record.go)
// and the composition of traffic policies (traffic_policy_resource.go,
// engine/compose.go). The bench driver checks that the provider's state
// and objects match what this renders, so a drift shows up as a failed
// benchmark, not as a wrong floor.

// Write is one server-side apply the floor performs.
type Write struct {
	Key      translate.Key
	Manager  string
	Force    bool
	Manifest map[string]any
}

// Owned is one intent's inventory, as the provider records it in state.
type Owned struct {
	Kind, Name string // owner kind (engine.Owner.Kind) and intent name
	Entries    []engine.Entry
}

// Rendered is everything the floor writes, and what state should hold.
type Rendered struct {
	Writes    []Write
	Inventory []Owned
}

// Objects counts the owned objects of the inventory (what state lists).
func (r *Rendered) Objects() int {
	n := 0
	for _, o := range r.Inventory {
		n += len(o.Entries)
	}
	return n
}

// Keys are the distinct objects written.
func (r *Rendered) Keys() []translate.Key {
	seen := map[translate.Key]bool{}
	var out []translate.Key
	for _, w := range r.Writes {
		if !seen[w.Key] {
			seen[w.Key] = true
			out = append(out, w.Key)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// ID is the instance ID the floor gives an intent (the provider draws a
// random one at create; see engine.Owner.ID): 16 hex digits, derived from
// the intent so that every run writes the same objects.
func ID(kind, name string) string {
	sum := sha256.Sum256([]byte(kind + "/" + name))
	return hex.EncodeToString(sum[:8])
}

func owner(kind, name string) engine.Owner {
	return engine.Owner{Kind: kind, Name: name, ID: ID(kind, name)}
}

// Translated is one intent's translation: its owner and objects.
type Translated struct {
	Owner   engine.Owner
	Objects []translate.Object
	// Policy is set for traffic policies: the contribution's content.
	Policy *trafficpolicy.Named
}

// Translate translates every intent of the spec, as the provider does when
// it plans them (records included).
func (s *Spec) Translate(reg *translate.Registry) ([]Translated, error) {
	var out []Translated
	for _, c := range s.Mesh {
		objs, err := cluster.Translate(c, reg)
		if err != nil {
			return nil, fmt.Errorf("mesh_cluster %s: %w", c.Name, err)
		}
		out = append(out, Translated{Owner: owner("cluster", c.Name), Objects: objs})
	}
	for _, vd := range s.Destinations {
		objs, err := virtualdestination.Translate(vd, reg)
		if err == nil {
			objs, err = virtualdestination.WithRecords(vd, objs, "")
		}
		if err != nil {
			return nil, fmt.Errorf("mesh_virtual_destination %s: %w", vd.Name, err)
		}
		out = append(out, Translated{Owner: owner("virtual-destination", vd.Name), Objects: objs})
	}
	for _, ap := range s.Access {
		vd := s.Destination(ap.Destination)
		dest := accesspolicy.Destination{VirtualDestination: vd.Hostname}
		for _, b := range vd.Backends {
			dest.Backends = append(dest.Backends, accesspolicy.Backend{Cluster: b.Cluster, Namespace: b.Namespace, Service: b.Service})
		}
		objs, err := accesspolicy.Translate(ap.Intent, dest, reg)
		if err != nil {
			return nil, fmt.Errorf("mesh_access_policy %s: %w", ap.Intent.Name, err)
		}
		out = append(out, Translated{Owner: owner("access-policy", ap.Intent.Name), Objects: objs})
	}
	for _, tp := range s.Traffic {
		dest := trafficpolicy.DestinationOf(s.Destination(tp.Destination), reg)
		objs, err := trafficpolicy.Translate(tp.Intent, dest, reg)
		if err != nil {
			return nil, fmt.Errorf("mesh_traffic_policy %s: %w", tp.Intent.Name, err)
		}
		self := trafficpolicy.Named{Policy: tp.Intent, Destination: dest}
		part, err := trafficpolicy.NewPart(self, trafficpolicy.Writer{Workspace: Workspace}, reg)
		if err != nil {
			return nil, fmt.Errorf("mesh_traffic_policy %s: %w", tp.Intent.Name, err)
		}
		o := owner("traffic-policy", tp.Intent.Name)
		o.Composition = &engine.Composition{Composer: &trafficpolicy.Composer{Registry: reg, Version: Provider}, Contribution: part}
		out = append(out, Translated{Owner: o, Objects: objs, Policy: &self})
	}
	return out, nil
}

// Workspace is the workspace identity the provider records in the bench's
// working directories: none is configured or selected there, so it is the
// default.
const Workspace = "default"

// Provider is the provider version the bench's provider records: the
// version its build is given (main.go).
const Provider = "dev"

// Render returns what the floor writes and what state should list
// afterwards.
func (s *Spec) Render() (*Rendered, error) {
	reg := s.Registry()
	translated, err := s.Translate(reg)
	if err != nil {
		return nil, err
	}
	r := &Rendered{}
	// Composed objects: every contribution per object key.
	type composed struct {
		policies      []trafficpolicy.Named
		contributions map[string]string
	}
	shared := map[translate.Key]*composed{}
	for _, t := range translated {
		desired, err := engine.Plan(t.Owner, t.Objects)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Owner, err)
		}
		r.Inventory = append(r.Inventory, Owned{Kind: t.Owner.Kind, Name: t.Owner.Name, Entries: engine.Entries(desired)})
		if t.Owner.Composition != nil {
			for _, d := range desired {
				c := shared[d.Key()]
				if c == nil {
					c = &composed{contributions: map[string]string{}}
					shared[d.Key()] = c
				}
				c.policies = append(c.policies, *t.Policy)
				c.contributions[t.Owner.Name] = t.Owner.Composition.Contribution.For(d.Entry.Cluster).Raw
			}
			continue
		}
		for _, d := range desired {
			r.Writes = append(r.Writes, Write{Key: d.Key(), Manager: t.Owner.FieldManager(""), Manifest: d.Manifest})
		}
	}
	keys := make([]translate.Key, 0, len(shared))
	for k := range shared {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	for _, key := range keys {
		c := shared[key]
		objs, err := trafficpolicy.Compose(c.policies, reg)
		if err != nil {
			return nil, err
		}
		var manifest map[string]any
		for _, o := range objs {
			if o.Key() == key {
				if manifest, err = o.Manifest(); err != nil {
					return nil, err
				}
			}
		}
		if manifest == nil {
			return nil, fmt.Errorf("composition of %s rendered nothing", key)
		}
		// As engine/compose.go: the contributions as annotations, one
		// label per contributor (its instance ID), under the composer's
		// field manager.
		prefix := "traffic-policy.mesh-intent.io/"
		labels := map[string]any{engine.LabelManagedBy: engine.ManagedByValue}
		annotations := map[string]any{}
		for name, contribution := range c.contributions {
			labels[prefix+name] = ID("traffic-policy", name)
			annotations[prefix+name] = contribution
		}
		meta := manifest["metadata"].(map[string]any)
		meta["labels"], meta["annotations"] = labels, annotations
		r.Writes = append(r.Writes, Write{Key: key, Manager: engine.ManagedByValue + "/traffic-policy-composer", Force: true, Manifest: manifest})
	}
	return r, nil
}
