package runstate

import (
	"fmt"
	"sort"
	"sync"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// DestinationIndex holds the virtual destinations this provider process has
// planned, by hostname, so traffic and access policies that name a hostname
// find its backends without contacting a cluster. Terraform plans a policy
// after the virtual destination it references
// (mesh_virtual_destination.x.hostname), so the entry is there in time.
type DestinationIndex struct {
	mu     sync.Mutex
	byHost map[string]destinationEntry
	// byVIP names the virtual destination holding each VIP.
	byVIP map[string]string
	// replacing holds, by planned hostname, the instance IDs this state
	// holds for virtual destinations planned with that hostname: a
	// replacement is planned twice, first with its prior state, then as
	// a create without it, and the records of the instance it replaces
	// are its own leftovers (the provider's checkHostnameRecords).
	replacing map[string]map[string]bool
}

// NotePrior records that a virtual destination planned with hostname
// replaces or updates the instance id of this state.
func (d *DestinationIndex) NotePrior(hostname, id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.replacing == nil {
		d.replacing = map[string]map[string]bool{}
	}
	if d.replacing[hostname] == nil {
		d.replacing[hostname] = map[string]bool{}
	}
	d.replacing[hostname][id] = true
}

// PriorOf reports whether id is an instance of this state that a virtual
// destination planned with hostname replaces or updates.
func (d *DestinationIndex) PriorOf(hostname, id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.replacing[hostname][id]
}

type destinationEntry struct {
	intent virtualdestination.Intent
	// pending is set when the virtual destination's configuration is not
	// fully known yet: policies on it are planned as known after apply.
	pending bool
	name    string
}

// Remember records a planned virtual destination. Two virtual destinations
// with one hostname are an error: Istio would keep one of them, silently.
// So are two with one VIP: sidecars would give both one listener, and TCP
// traffic for one would reach the other. It returns the attribute at fault
// and a summary with the error.
func (d *DestinationIndex) Remember(in virtualdestination.Intent) (string, string, error) {
	if err := d.put(in.Hostname, destinationEntry{intent: in, name: in.Name}); err != nil {
		return "hostname", "Duplicate hostname", err
	}
	if in.VIP == "" || translate.IsUnknown(in.VIP) {
		return "", "", nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byVIP == nil {
		d.byVIP = map[string]string{}
	}
	for vip, name := range d.byVIP {
		if name == in.Name && vip != in.VIP {
			delete(d.byVIP, vip) // planned again with another VIP
		}
	}
	if other, ok := d.byVIP[in.VIP]; ok && other != in.Name {
		return "vip", "Duplicate VIP", fmt.Errorf("virtual destinations %q and %q both get VIP %s; sidecars would give them one listener, and TCP traffic for one would reach the other. Set `vip` on one of them to an unused address (e.g. in 241.0.0.0/8)", other, in.Name, in.VIP)
	}
	d.byVIP[in.VIP] = in.Name
	return "", "", nil
}

// Clone is a copy of the index, for a rendering that must not count as
// planned (mesh_rendered_objects).
func (d *DestinationIndex) Clone() *DestinationIndex {
	d.mu.Lock()
	defer d.mu.Unlock()
	c := &DestinationIndex{byHost: map[string]destinationEntry{}, byVIP: map[string]string{}}
	for k, v := range d.byHost {
		c.byHost[k] = v
	}
	for k, v := range d.byVIP {
		c.byVIP[k] = v
	}
	return c
}

// RememberPending records that the virtual destination name serves
// hostname, with a configuration known only after apply.
func (d *DestinationIndex) RememberPending(name, hostname string) error {
	return d.put(hostname, destinationEntry{pending: true, name: name})
}

func (d *DestinationIndex) put(hostname string, e destinationEntry) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byHost == nil {
		d.byHost = map[string]destinationEntry{}
	}
	if old, ok := d.byHost[hostname]; ok && old.name != e.name {
		return fmt.Errorf("virtual destinations %q and %q both serve hostname %s; Istio would keep only one of them. Give each a hostname of its own", old.name, e.name, hostname)
	}
	d.byHost[hostname] = e
	return nil
}

// Lookup returns the virtual destination planned for hostname.
func (d *DestinationIndex) Lookup(hostname string) (in virtualdestination.Intent, pending, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.byHost[hostname]
	return e.intent, e.pending, ok
}

// TrafficPolicyIndex holds the traffic policies planned in this run, so a
// policy can be checked against the others on the same destination.
type TrafficPolicyIndex struct {
	mu     sync.Mutex
	byName map[string]trafficpolicy.Named
}

// RememberAndList records p and returns every policy on p's destination,
// p included, sorted by name.
func (t *TrafficPolicyIndex) RememberAndList(p trafficpolicy.Named) []trafficpolicy.Named {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byName == nil {
		t.byName = map[string]trafficpolicy.Named{}
	}
	t.byName[p.Policy.Name] = p
	return t.onLocked(p)
}

// On lists the policies remembered on p's destination (p included once
// remembered), sorted by name.
func (t *TrafficPolicyIndex) On(p trafficpolicy.Named) []trafficpolicy.Named {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.onLocked(p)
}

func (t *TrafficPolicyIndex) onLocked(p trafficpolicy.Named) []trafficpolicy.Named {
	var out []trafficpolicy.Named
	for _, o := range t.byName {
		if o.Destination.VirtualDestination == p.Destination.VirtualDestination &&
			o.Destination.Service == p.Destination.Service && o.Destination.Namespace == p.Destination.Namespace {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Policy.Name < out[j].Policy.Name })
	return out
}
