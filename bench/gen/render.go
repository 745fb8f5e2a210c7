package gen

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// What the floor writes is what the provider's engine writes: the
// translated intents are planned with engine.Plan (what the provider's
// plan stores: object keys and digests), and the engine applies those
// planned objects to in-memory clusters (record.go), intents one at a time
// in Terraform's order (traffic policies after the virtual destinations
// they compose into); every server-side apply request it sends is kept,
// body and field manager as sent, composed objects included. Nothing is
// rendered a second time here. The bench driver checks that the
// provider's state lists exactly the inventory the engine returned, and
// that the clusters hold the same objects after the provider's apply as
// after the floor's (bench/steps.go), so a change to what the provider
// plans or writes that this package does not follow fails the benchmark.

// Write is one server-side apply the floor performs: the request the
// engine sent.
type Write struct {
	Key     translate.Key
	Manager string
	Force   bool
	// Body is the apply configuration as the engine sent it.
	Body json.RawMessage
	// Wave orders the writes as Terraform orders the intents: every
	// write of wave 0 before any of wave 1.
	Wave int
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
	// Requests counts every request the engine sent to the in-memory
	// clusters (reads included), per cluster.
	Requests map[string]int `json:"-"`
}

// Save writes r to path as JSON, for Load.
func (r *Rendered) Save(path string) error {
	raw, err := json.Marshal(r)
	if err != nil {
		return err
	}
	return os.WriteFile(path, raw, 0o644)
}

// Load reads what Save wrote.
func Load(path string) (*Rendered, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r := &Rendered{}
	return r, json.Unmarshal(raw, r)
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

// Workspace is the workspace identity the provider records in the
// contributions of the bench's traffic policies: none is configured in
// the bench's configurations, and the provider then records none
// (providerData.recordedWorkspace).
const Workspace = ""

// Provider is the provider version the bench's provider records: the
// version its build is given (main.go).
const Provider = "dev"

// Render returns what the floor writes (the engine's requests for the
// planned objects) and what state should list afterwards (the inventory
// the engine returned).
func (s *Spec) Render() (*Rendered, error) {
	reg := s.Registry()
	translated, err := s.Translate(reg)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, c := range s.Clusters {
		names = append(names, c.Name)
	}
	rec := newRecorder(names)
	eng := &engine.Engine{Clients: rec, Composers: Composers(reg), Shared: shareddata.Compositions{}}
	r := &Rendered{}
	ctx := context.Background()
	for wave, composed := range []bool{false, true} {
		rec.setWave(wave)
		for _, t := range translated {
			if (t.Owner.Composition != nil) != composed {
				continue
			}
			desired, err := engine.Plan(t.Owner, t.Objects)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Owner, err)
			}
			entries, err := eng.Apply(ctx, t.Owner, desired, nil)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.Owner, err)
			}
			r.Inventory = append(r.Inventory, Owned{Kind: t.Owner.Kind, Name: t.Owner.Name, Entries: entries})
		}
	}
	r.Writes = rec.writes
	r.Requests = map[string]int{}
	for c, d := range rec.clusters {
		r.Requests[c] = len(d.Actions())
	}
	return r, nil
}

// Composers are the engine's composers as the provider sets them
// (internal/provider/provider.go): which contributions compose into the
// objects they are on. An engine without them composes nothing.
func Composers(reg *translate.Registry) map[string]composition.Composer {
	return map[string]composition.Composer{
		intentkind.TrafficPolicy.Owner: &trafficpolicy.Composer{Registry: reg, Version: Provider},
	}
}
