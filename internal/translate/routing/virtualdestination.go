package routing

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// Destination is where a virtual destination's clients send requests.
type Destination struct {
	// Failover maps each client cluster to its failover order: requests
	// go to the first tier, shared by weight, while any of its backends is
	// healthy, then to the next. Excluded backends are absent. A client
	// whose order depends on a region or zone known only after apply maps
	// to nil and is listed in Unknown.
	Failover map[string][]Tier
	Unknown  map[string]bool
	// Namespaces are the client namespaces that see the hostname, sorted;
	// nil means every namespace.
	Namespaces []string
}

// Tier is the backend clusters that share requests at one step of a
// failover order, sorted by cluster name, with their weights.
type Tier []Share

// VirtualDestination states where requests for a virtual destination go
// from each client cluster, from the intent's documented meaning
// (docs/design/virtual-destination.md, sections 4 to 6):
//
//   - the clients are clients' placement (omitted: every cluster);
//   - a backend is visible to a client unless its exclude_for selects it;
//   - priority mode: visible backends in order of priority, equal
//     priorities sharing by weight (default 1);
//   - locality mode: the client's zone, then its region, then the region
//     traffic leaves to (that of the visible backend of lowest priority
//     outside the client's region, ties by cluster name), then the rest;
//     backends of one step share by weight.
//
// It fails, as the translation does, when the intent names an
// unregistered cluster or leaves a client without a backend, and returns
// translate.ErrUnknownPlacement when a placement selects by labels not
// known yet.
func VirtualDestination(in virtualdestination.Intent, reg *translate.Registry) (Destination, error) {
	clients, err := selectClusters(reg, in.Clients.Placement, translate.Root("clients"))
	if err != nil {
		return Destination{}, err
	}
	excluded := make([]map[string]bool, len(in.Backends))
	for i, b := range in.Backends {
		if reg.Cluster(b.Cluster) == nil {
			return Destination{}, fmt.Errorf("routing: backend cluster %q is not registered", b.Cluster)
		}
		excluded[i] = map[string]bool{}
		if b.ExcludeFor.IsZero() {
			continue // an omitted exclude_for excludes nobody
		}
		names, err := selectClusters(reg, b.ExcludeFor, translate.Root("backends").Index(i).Attr("exclude_for"))
		if err != nil {
			return Destination{}, err
		}
		for _, n := range names {
			excluded[i][n] = true
		}
	}
	mode := virtualdestination.FailoverModePriority
	if in.Failover != nil && in.Failover.Mode != "" {
		mode = in.Failover.Mode
	}
	d := Destination{Failover: map[string][]Tier{}}
	for _, c := range clients {
		var visible []virtualdestination.Backend
		for i, b := range in.Backends {
			if !excluded[i][c] {
				visible = append(visible, b)
			}
		}
		if len(visible) == 0 {
			return Destination{}, fmt.Errorf("routing: client cluster %q sees no backend of %s", c, in.Hostname)
		}
		var step func(virtualdestination.Backend) int64
		switch mode {
		case virtualdestination.FailoverModePriority:
			step = func(b virtualdestination.Backend) int64 { return b.Priority }
		case virtualdestination.FailoverModeLocality:
			if localityUnknown(reg, c, visible) {
				if d.Unknown == nil {
					d.Unknown = map[string]bool{}
				}
				d.Unknown[c] = true
				d.Failover[c] = nil
				continue
			}
			step = localityStep(reg.Cluster(c), visible, reg)
		default:
			return Destination{}, fmt.Errorf("routing: unknown failover mode %q", mode)
		}
		d.Failover[c] = tiers(visible, step)
	}
	if ns := in.Clients.Namespaces; len(ns) > 0 && !(len(ns) == 1 && ns[0] == "*") {
		d.Namespaces = append([]string(nil), ns...)
		sort.Strings(d.Namespaces)
	}
	return d, nil
}

// tiers groups backends by step, ascending; within a tier by cluster.
func tiers(backends []virtualdestination.Backend, step func(virtualdestination.Backend) int64) []Tier {
	byStep := map[int64]Tier{}
	var steps []int64
	for _, b := range backends {
		s := step(b)
		if _, ok := byStep[s]; !ok {
			steps = append(steps, s)
		}
		w := int64(1)
		if b.Weight != nil {
			w = *b.Weight
		}
		byStep[s] = append(byStep[s], Share{To: b.Cluster, Weight: w})
	}
	sort.Slice(steps, func(i, j int) bool { return steps[i] < steps[j] })
	out := make([]Tier, 0, len(steps))
	for _, s := range steps {
		t := byStep[s]
		sort.Slice(t, func(i, j int) bool { return t[i].To < t[j].To })
		out = append(out, t)
	}
	return out
}

// localityStep is how far a backend is from the client: 0 same zone, 1
// same region, 2 the region traffic leaves to, 3 elsewhere.
func localityStep(client *translate.Cluster, visible []virtualdestination.Backend, reg *translate.Registry) func(virtualdestination.Backend) int64 {
	// The region traffic leaves to: that of the lowest-priority visible
	// backend outside the client's region (ties: cluster name).
	var leave *virtualdestination.Backend
	for i := range visible {
		b := &visible[i]
		if reg.Cluster(b.Cluster).Region == client.Region {
			continue
		}
		if leave == nil || b.Priority < leave.Priority || b.Priority == leave.Priority && b.Cluster < leave.Cluster {
			leave = b
		}
	}
	to := ""
	if leave != nil {
		to = reg.Cluster(leave.Cluster).Region
	}
	return func(b virtualdestination.Backend) int64 {
		bc := reg.Cluster(b.Cluster)
		switch {
		case bc.Region == client.Region && bc.Zone == client.Zone:
			return 0
		case bc.Region == client.Region:
			return 1
		case bc.Region == to:
			return 2
		default:
			return 3
		}
	}
}

// localityUnknown reports a region or zone, of the client or of a visible
// backend, known only after apply.
func localityUnknown(reg *translate.Registry, client string, visible []virtualdestination.Backend) bool {
	names := []string{client}
	for _, b := range visible {
		names = append(names, b.Cluster)
	}
	for _, n := range names {
		c := reg.Cluster(n)
		if translate.IsUnknown(c.Region) || translate.IsUnknown(c.Zone) {
			return true
		}
	}
	return false
}

// Statement renders the destination one line per client cluster:
// "east > onprem", "east, west > onprem", "east 75%, west 25% > onprem",
// followed by " (ns accounts)" when only some namespaces see the hostname.
func (d Destination) Statement() Statement {
	out := make(Statement, len(d.Failover))
	suffix := ""
	if len(d.Namespaces) > 0 {
		suffix = " (ns " + strings.Join(d.Namespaces, ", ") + ")"
	}
	for c, order := range d.Failover {
		if d.Unknown[c] {
			out[c] = unknownLine(c)
			continue
		}
		parts := make([]string, len(order))
		for i, t := range order {
			parts[i] = sharesString(t, false)
		}
		out[c] = strings.Join(parts, " > ") + suffix
	}
	return out
}
