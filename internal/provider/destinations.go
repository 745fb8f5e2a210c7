package provider

import (
	"sort"
	"sync"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// destinationIndex holds the virtual destinations this provider process has
// seen, by hostname, so traffic and access policies that name a hostname
// can find its backends without contacting a cluster. Terraform plans a
// policy after the virtual destination it references
// (mesh_virtual_destination.x.hostname), so the entry is there in time.
type destinationIndex struct {
	mu     sync.Mutex
	byHost map[string]translate.VirtualDestinationIntent
}

func (d *destinationIndex) remember(in translate.VirtualDestinationIntent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.byHost == nil {
		d.byHost = map[string]translate.VirtualDestinationIntent{}
	}
	d.byHost[in.Hostname] = in
}

func (d *destinationIndex) lookup(hostname string) (translate.VirtualDestinationIntent, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	in, ok := d.byHost[hostname]
	return in, ok
}

// trafficPolicyIndex holds the traffic policies planned in this run, so a
// policy can be checked against the others on the same destination.
type trafficPolicyIndex struct {
	mu     sync.Mutex
	byName map[string]translate.NamedTrafficPolicy
}

// rememberAndList records p and returns every policy on p's destination,
// p included, sorted by name.
func (t *trafficPolicyIndex) rememberAndList(p translate.NamedTrafficPolicy) []translate.NamedTrafficPolicy {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byName == nil {
		t.byName = map[string]translate.NamedTrafficPolicy{}
	}
	t.byName[p.Policy.Name] = p
	var out []translate.NamedTrafficPolicy
	for _, o := range t.byName {
		if o.Destination.VirtualDestination == p.Destination.VirtualDestination &&
			o.Destination.Service == p.Destination.Service && o.Destination.Namespace == p.Destination.Namespace {
			out = append(out, o)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Policy.Name < out[j].Policy.Name })
	return out
}
