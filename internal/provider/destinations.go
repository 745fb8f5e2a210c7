package provider

import (
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
