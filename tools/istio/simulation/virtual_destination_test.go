package simulation

import (
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"istio.io/istio/pilot/pkg/simulation"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
	"github.com/mesh-intent/terraform-provider-mesh/tools/istio/internal/oracle"
)

var update = flag.Bool("update", false, "rewrite the traffic tables (<case>.traffic.txt) from Istio's answers")

// tables=false leaves the recorded tables out: only the assertions judge
// (tools/mutate runs mutations so, so that a mutation counts as caught only
// when Istio's answer contradicts the intent or the routing statement, not
// because a table changed).
var tables = flag.Bool("tables", true, "compare the traffic tables with Istio's answers")

// TestVirtualDestinationTraffic replays every virtual destination golden
// case in Istio's xDS generation and checks, per client cluster:
//   - the failover order of the hostname's default cluster follows the
//     backends' priorities (after exclusions), one Envoy priority per rank;
//   - each backend cluster's subset puts that cluster first and the others
//     after it, so shifted traffic keeps failing over;
//   - every SNI a client sends to a remote east-west gateway has a filter
//     chain there, ending at that cluster's backend, with Istio's own
//     cross-network-gateway and the provider's Gateway both in place;
//
// and compares the whole picture with the checked-in traffic table.
func TestVirtualDestinationTraffic(t *testing.T) {
	simulateVirtualDestinations(t, oracle.GoldenDir("virtual-destination"), true)
}

// simulateVirtualDestinations runs simulateVirtualDestination on every
// case of folder, comparing the tables when withTables is set.
func simulateVirtualDestinations(t *testing.T, folder string, withTables bool) {
	simulateVirtualDestinationsWith(t, folder, withTables, providerGateway(t), nil)
}

// simulateVirtualDestinationsWith is simulateVirtualDestinations with the
// provider's east-west Gateway already read, and each (when set) run
// first in every case's subtest.
func simulateVirtualDestinationsWith(t *testing.T, folder string, withTables bool, ours string, each func(*testing.T, *goldenCase)) {
	cases, err := loadCasesIn(t, "virtual-destination", folder)
	if err != nil {
		t.Fatal(err)
	}
	ran, planErrors := 0, 0
	defer func() {
		t.Logf("%s: %d cases simulated, %d plan errors (the golden file's too)", folder, ran, planErrors)
	}()
	for _, g := range cases {
		if g.failed != "" {
			if !withTables {
				t.Errorf("%s/%s: fails to translate here (%s); its plan wrote objects", folder, g.name, g.failed)
			}
			planErrors++
			continue // the golden holds a plan error (oracle.Translate checks it does): nothing reaches Istio
		}
		ran++
		t.Run(g.name, func(t *testing.T) {
			if each != nil {
				each(t, g)
			}
			table := simulateVirtualDestination(t, g, ours)
			if withTables {
				compareTable(t, folder+"/"+g.name+".traffic.txt", table)
			}
		})
	}
}

func simulateVirtualDestination(t *testing.T, g *goldenCase, ours string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# What Istio's xDS generation makes of %s.golden.yaml, per client cluster\n", g.name)
	b.WriteString("# (tools/istio/simulation; `make simulation UPDATE=1` rewrites it). Each row: the\n")
	b.WriteString("# Envoy cluster a request for the hostname uses, its endpoints by Envoy priority\n")
	b.WriteString("# (p0 first; the next priority takes over when the previous one is ejected),\n")
	b.WriteString("# and the SNI sent; then what each remote east-west gateway does with that SNI.\n")
	gateways := map[string]*istiod{}
	gatewayOf := func(name string) *istiod {
		if gateways[name] == nil {
			gateways[name] = newIstiod(t, g, name, g.objects[name], crossNetworkGateway, gatewayFor(t, ours, g.cluster(name)))
		}
		return gateways[name]
	}
	type sent struct{ cluster, sni string }
	var sends []sent
	seen := map[sent]bool{}
	promised := vdPromises[g.name]
	stated := g.vdRouting(t)
	checkRoutingClients(t, stated, g.intentClients())
	// What Istio does, written as a routing statement: compared with the
	// one the plan showed (an example's case) or, for a golden case, with
	// the one computed from the intent.
	fromIstio := routing.Destination{Failover: map[string][]routing.Tier{}, Unknown: map[string]bool{}}
	for _, client := range g.intentClients() {
		s := newIstiod(t, g, client, g.objects[client], crossNetworkGateway, gatewayFor(t, ours, g.cluster(client)))
		if len(g.intent.Clients.Namespaces) > 0 && g.intent.Clients.Namespaces[0] != "*" && len(s.upstreamsFor(s.sidecar("not-a-client"), g.intent.Hostname)) == 0 {
			var seeing []string
			for _, ns := range g.intent.Clients.Namespaces {
				if len(s.upstreamsFor(s.sidecar(ns), g.intent.Hostname)) > 0 {
					seeing = append(seeing, ns)
				}
			}
			sort.Strings(seeing)
			fromIstio.Namespaces = seeing
		}
		ns := "default"
		if len(g.intent.Clients.Namespaces) > 0 && g.intent.Clients.Namespaces[0] != "*" {
			ns = g.intent.Clients.Namespaces[0]
			// exportTo isolation: a namespace clients.namespaces leaves
			// out must not see the hostname at all.
			// Nor any backend cluster's own host (the per-cluster hosts
			// shifts and mirrors go to), which the intent exports alike.
			outsider := s.sidecar("not-a-client")
			hosts := []string{g.intent.Hostname}
			for _, b := range g.intent.Backends {
				hosts = append(hosts, subsetName(b.Cluster)+".cluster."+g.intent.Hostname)
			}
			for _, host := range hosts {
				for name := range s.upstreamsFor(outsider, host) {
					t.Errorf("client %s: a sidecar in namespace not-a-client, which clients.namespaces %v leaves out, gets Istio's cluster %s: the intent exports %s and its per-cluster hosts to %v only", client, g.intent.Clients.Namespaces, name, g.intent.Hostname, g.intent.Clients.Namespaces)
				}
			}
		}
		// The statement's client namespaces (nil: every one) against
		// Istio's: a sidecar in a namespace it does not name must not
		// see the hostname.
		outsider := len(s.upstreamsFor(s.sidecar("not-a-client"), g.intent.Hostname)) > 0
		if want := stated.Namespaces == nil || slices.Contains(stated.Namespaces, "not-a-client"); outsider != want {
			t.Errorf("client %s: Istio gives the hostname to namespace not-a-client = %v; the routing statement's client namespaces are %v (nil: every one)", client, outsider, stated.Namespaces)
		}
		proxy := s.sidecar(ns)
		for _, port := range g.intent.Ports {
			// The hostname, then each backend cluster's own host (the
			// destination of traffic shifted or mirrored to that cluster).
			hosts := []string{g.intent.Hostname}
			firsts := []string{""}
			for _, b := range g.intent.Backends {
				hosts = append(hosts, subsetName(b.Cluster)+".cluster."+g.intent.Hostname)
				firsts = append(firsts, b.Cluster)
			}
			for i, host := range hosts {
				if i > 0 && !routable(port.Protocol) {
					continue // shifts and mirrors are HTTP routes only
				}
				name := fmt.Sprintf("outbound|%d||%s", port.Number, host)
				u, ok := s.upstreamsFor(proxy, host)[name]
				exp := g.expectedTiers(client, firsts[i])
				row := fmt.Sprintf("%s -> %s:%d", client, host, port.Number)
				if !ok {
					if i == 0 || g.visible(client, firsts[i]) {
						t.Errorf("%s: Istio gives the sidecar no cluster %s", row, name)
					}
					continue
				}
				got := g.tierClusters(client, u.tiers)
				if i == 0 && port.Number == g.intent.Ports[0].Number {
					fromIstio.Failover[client] = g.istioTiers(client, u)
				}
				peers := ""
				if len(u.sans) > 0 {
					peers = " | peers " + strings.Join(u.sans, ", ")
				}
				fmt.Fprintf(&b, "%-56s | %s | sni %s%s\n", row, g.describeTiers(client, u.tiers), orNone(u.sni), peers)
				g.checkEndpoints(t, row, client, port.Number, port.TargetPort, u)
				if exp != nil && !equalTiers(got, exp) {
					t.Errorf("client %s: Istio sends requests for %s:%d to %s; the intent says %s", client, host, port.Number, statement(got), statement(exp))
				}
				if i == 0 && !stated.Unknown[client] {
					if want := tierNames(stated.Failover[client]); !equalTiers(got, want) {
						t.Errorf("client %s: Istio sends requests for %s:%d to %s; the routing statement (the plan) says %s", client, host, port.Number, statement(got), statement(want))
					}
				}
				if want, ok := promised[client]; ok && i == 0 && statement(got) != want {
					t.Errorf("client %s: Istio sends requests for %s:%d to %s; the intent (hand-read, vdPromises) says %s", client, host, port.Number, statement(got), want)
				}
				if len(u.tiers) > 1 && !u.outlier {
					t.Errorf("%s: several priorities but no outlier detection: Envoy would never fail over", row)
				}
				for _, tier := range got {
					for _, c := range tier {
						if k := (sent{c, u.sni}); c != client && !seen[k] {
							seen[k] = true
							sends = append(sends, k)
						}
					}
				}
			}
		}
	}
	g.checkStatement(t, fromIstio)
	sort.Slice(sends, func(i, j int) bool {
		if sends[i].cluster != sends[j].cluster {
			return sends[i].cluster < sends[j].cluster
		}
		return sends[i].sni < sends[j].sni
	})
	for _, snd := range sends {
		gw := gatewayOf(snd.cluster)
		res, where := gw.passThrough(t, g.intent.namespace(), snd.sni, g.cluster(snd.cluster).gatewayListenPort())
		fmt.Fprintf(&b, "%-56s | %s\n", "gateway "+snd.cluster+" <- "+snd.sni, res)
		if where == "" {
			t.Errorf("east-west gateway of %s has no filter chain for SNI %s: a client's request would be reset (%s)", snd.cluster, snd.sni, res)
		} else if !g.servesLocally(snd.cluster, where) {
			t.Errorf("east-west gateway of %s sends SNI %s to %s, not to its own backend", snd.cluster, snd.sni, where)
		}
	}
	return b.String()
}

// passThrough sends an Istio-mTLS connection with sni to the cluster's
// east-west gateway on port (where its pods listen) and reports what it
// reaches: the upstream cluster and its endpoints, or why the connection
// fails.
func (s *istiod) passThrough(t *testing.T, ns, sni string, port uint32) (string, string) {
	gw := s.eastWestGateway(ns)
	sim := simulation.NewSimulation(t, s.FakeDiscoveryServer, gw)
	res := sim.Run(simulation.Call{
		Port: int(port), Sni: sni, TLS: simulation.MTLS, Alpn: "istio-peer-exchange",
		Protocol: simulation.TCP, CallMode: simulation.CallModeGateway,
	})
	if res.Error != nil {
		return "RESET: " + res.Error.Error(), ""
	}
	for _, c := range s.Clusters(gw) {
		if c.Name == res.ClusterMatched {
			u := readUpstream(c)
			var eps []string
			for _, tier := range u.tiers {
				eps = append(eps, tier...)
			}
			if len(eps) == 0 { // an EDS cluster (a Kubernetes Service)
				for _, cla := range s.Endpoints(gw) {
					if cla.ClusterName != res.ClusterMatched {
						continue
					}
					for _, lle := range cla.Endpoints {
						for _, e := range lle.LbEndpoints {
							sa := e.GetEndpoint().GetAddress().GetSocketAddress()
							eps = append(eps, fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue()))
						}
					}
				}
				sort.Strings(eps)
			}
			if len(eps) == 0 {
				return "RESET: cluster " + res.ClusterMatched + " has no endpoint", ""
			}
			return strings.Join(eps, ", "), strings.Join(eps, ",")
		}
	}
	return "RESET: no cluster " + res.ClusterMatched, ""
}

// intentClients are the client clusters the intent selects (clients; none:
// every cluster of the registry), whatever the translator wrote.
func (g *goldenCase) intentClients() []string {
	var out []string
	for _, c := range g.registry {
		if g.intent.Clients.placement.selects(c) {
			out = append(out, c.Name)
		}
	}
	sort.Strings(out)
	return out
}

// statement writes tiers as the routing statement does: "a > b, c".
func statement(tiers [][]string) string {
	parts := make([]string, len(tiers))
	for i, tier := range tiers {
		parts[i] = strings.Join(tier, ", ")
	}
	if len(parts) == 0 {
		return "nowhere"
	}
	return strings.Join(parts, " > ")
}

// vdPromises are the failover orders for the hostname read by hand from
// the cases' intents (not from any output): client cluster -> order.
var vdPromises = map[string]map[string]string{
	// priorities 0, 10, 20: every client east > west > onprem.
	"priority-three-clusters": {"east": "east > west > onprem", "west": "east > west > onprem", "onprem": "east > west > onprem"},
	// west (priority 2) is excluded for the private clusters.
	"exclusion-public-cloud": {"east": "east > onprem", "onprem": "east > onprem", "west": "east > onprem > west"},
	// own zone, then the region of the lowest-priority backend outside
	// the client's region, then the rest.
	"locality-failover": {"east": "east > west > onprem", "west": "west > east > onprem", "onprem": "onprem > east > west", "central": "east > onprem, west"},
	// the other zone of the client's region next; leaving us-east-1, the
	// tie of west and onprem (priority 5) goes to onprem (name first).
	"locality-zone-tie": {
		"east-a": "east-a > east-b > onprem > west", "east-b": "east-b > east-a > onprem > west",
		"west": "west > east-a, east-b > onprem", "onprem": "onprem > east-a, east-b > west",
	},
}

// clientClusters are the clusters holding the client ServiceEntry.
func (g *goldenCase) clientClusters() []string {
	var out []string
	for c, docs := range g.objects {
		for _, d := range docs {
			if strings.Contains(d, "\nkind: ServiceEntry\n") && strings.Contains(d, "\n  name: vd-"+g.intent.Name+"\n") {
				out = append(out, c)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// tierClusters names the cluster behind every endpoint, tier by tier.
func (g *goldenCase) tierClusters(client string, tiers [][]string) [][]string {
	var out [][]string
	for _, tier := range tiers {
		var names []string
		for _, ep := range tier {
			names = append(names, g.endpointCluster(client, ep))
		}
		sort.Strings(names)
		out = append(out, names)
	}
	return out
}

func (g *goldenCase) describeTiers(client string, tiers [][]string) string {
	var parts []string
	for i, tier := range tiers {
		var eps []string
		for _, ep := range tier {
			eps = append(eps, g.endpointCluster(client, ep)+" ("+ep+")")
		}
		parts = append(parts, fmt.Sprintf("p%d: %s", i, strings.Join(eps, ", ")))
	}
	if len(parts) == 0 {
		return "NO ENDPOINT"
	}
	return strings.Join(parts, " | ")
}

// endpointCluster maps an endpoint address to its cluster: an east-west
// gateway address is that gateway's cluster, a Service name is local.
func (g *goldenCase) endpointCluster(client, ep string) string {
	addr := strings.Fields(ep)[0]
	host := addr[:strings.LastIndex(addr, ":")]
	for _, c := range g.registry {
		if c.EastWestGateway != nil && (c.EastWestGateway.Address == host || c.gatewayAddr() == host) {
			return c.Name
		}
	}
	if strings.HasSuffix(host, ".svc.cluster.local") {
		return client
	}
	return "?" + host
}

// servesLocally reports whether the gateway's endpoints are the backend
// Service of that cluster.
func (g *goldenCase) servesLocally(cluster, eps string) bool {
	for _, b := range g.intent.Backends {
		if b.Cluster == cluster && strings.HasPrefix(eps, b.Service+"."+b.Namespace+".svc.cluster.local:") {
			return true
		}
	}
	return false
}

// expectedTiers is what the intent asks for, from client, for the hostname
// (first "") or one backend cluster's own host, in priority mode: the
// visible backends grouped by priority, that cluster first.
// nil when the test does not state it (locality mode).
func (g *goldenCase) expectedTiers(client, first string) [][]string {
	subset := first
	locality := g.intent.Failover != nil && g.intent.Failover.Mode == "locality"
	clientCluster := g.cluster(client)
	// Locality mode (DESIGN.md): same zone, same region, then the region
	// of the lowest-priority visible backend outside the client's region,
	// then any other.
	leaveTo, leavePrio, leaveCluster := "", 0, ""
	for _, b := range g.intent.Backends {
		bc := g.cluster(b.Cluster)
		if (!b.ExcludeFor.empty() && b.ExcludeFor.selects(clientCluster)) || bc.Region == clientCluster.Region {
			continue
		}
		// A tie in priority goes to the backend whose cluster name sorts
		// first (the translator's documented rule, localityFailoverRegion),
		// whatever order the intent lists them in.
		if leaveTo == "" || b.Priority < leavePrio || b.Priority == leavePrio && b.Cluster < leaveCluster {
			leaveTo, leavePrio, leaveCluster = bc.Region, b.Priority, b.Cluster
		}
	}
	rank := func(priority int, cluster string) int {
		if !locality {
			return priority
		}
		bc := g.cluster(cluster)
		switch {
		case bc.Region == clientCluster.Region && bc.Zone == clientCluster.Zone:
			return 0
		case bc.Region == clientCluster.Region:
			return 1
		case leaveTo != "" && bc.Region == leaveTo:
			return 2
		}
		return 3
	}
	byPrio := map[int][]string{}
	var prios []int
	for _, b := range g.intent.Backends {
		if !b.ExcludeFor.empty() && b.ExcludeFor.selects(clientCluster) {
			continue
		}
		if b.Cluster == subset {
			continue
		}
		r := rank(b.Priority, b.Cluster)
		if _, ok := byPrio[r]; !ok {
			prios = append(prios, r)
		}
		byPrio[r] = append(byPrio[r], b.Cluster)
	}
	sort.Ints(prios)
	var out [][]string
	if subset != "" {
		out = append(out, []string{subset})
	}
	for _, p := range prios {
		names := byPrio[p]
		sort.Strings(names)
		out = append(out, names)
	}
	return out
}

func equalTiers(a, b [][]string) bool {
	return fmt.Sprint(a) == fmt.Sprint(b)
}

func orNone(s string) string {
	if s == "" {
		return "(none: plaintext)"
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string { return oracle.SortedKeys(m) }

// compareTable checks got against the file, or rewrites it with -update.
func compareTable(t *testing.T, path, got string) {
	t.Helper()
	if !*tables {
		return
	}
	oracle.Compare(t, path, got, *update, "make simulation UPDATE=1")
}

// visible reports whether the backend in cluster is an endpoint for client
// (not excluded for it).
func (g *goldenCase) visible(client, cluster string) bool {
	for _, b := range g.intent.Backends {
		if b.Cluster == cluster && (b.ExcludeFor.empty() || !b.ExcludeFor.selects(g.cluster(client))) {
			return true
		}
	}
	return false
}

// subsetName is translate.SubsetName for the cluster names of the golden
// cases (DNS labels, which it keeps as they are).
func subsetName(cluster string) string { return cluster }

func routable(protocol string) bool {
	switch strings.ToUpper(protocol) {
	case "HTTP", "HTTP2", "GRPC":
		return true
	}
	return false
}

// checkEndpoints compares every endpoint of a client's Envoy cluster for
// one port of the hostname with the intent: the client's own backend is
// dialled at its Service on the port's target_port (or the port), a
// remote one at its cluster's east-west gateway on the registry's
// east_west_gateway.port, and each carries its backend's weight (unset:
// 1), which shares traffic within its tier.
func (g *goldenCase) checkEndpoints(t *testing.T, row, client string, number, targetPort uint32, u upstream) {
	t.Helper()
	for _, e := range u.endpoints {
		c := g.endpointCluster(client, fmt.Sprintf("%s:%d", e.address, e.port))
		var want uint32
		var weight uint32 = 1
		found := false
		for _, b := range g.intent.Backends {
			if b.Cluster != c {
				continue
			}
			found = true
			if b.Weight != nil {
				weight = *b.Weight
			}
			if c == client {
				want = number
				if targetPort != 0 {
					want = targetPort
				}
				if addr := b.Service + "." + b.Namespace + ".svc.cluster.local"; e.address != addr {
					t.Errorf("%s: the local endpoint is %s; the intent's backend in %s is the Service %s", row, e.address, c, addr)
				}
			} else {
				want = g.cluster(c).gatewayPort()
			}
		}
		if !found {
			t.Errorf("%s: endpoint %s:%d is no backend of the intent", row, e.address, e.port)
			continue
		}
		if e.port != want {
			where := "its east-west gateway's port (east_west_gateway.port)"
			if c == client {
				where = "the Service's port (target_port, or the port)"
			}
			t.Errorf("%s: Istio dials the backend in %s on %s:%d; the intent and registry say %d, %s", row, c, e.address, e.port, want, where)
		}
		got := e.weight
		if got == 0 {
			got = 1
		}
		if got != weight {
			t.Errorf("%s: the backend in %s has load-balancing weight %d in Istio's cluster; the intent gives it weight %d", row, c, got, weight)
		}
	}
}

// istioTiers is Istio's Envoy cluster for a client as a statement's
// failover order: the backend cluster behind each endpoint, tier by
// Envoy priority, each with its load-balancing weight.
func (g *goldenCase) istioTiers(client string, u upstream) []routing.Tier {
	byPriority := map[uint32]routing.Tier{}
	var prios []uint32
	for _, e := range u.endpoints {
		if _, ok := byPriority[e.priority]; !ok {
			prios = append(prios, e.priority)
		}
		w := int64(e.weight)
		if w == 0 {
			w = 1
		}
		byPriority[e.priority] = append(byPriority[e.priority], routing.Share{To: g.endpointCluster(client, fmt.Sprintf("%s:%d", e.address, e.port)), Weight: w})
	}
	slices.Sort(prios)
	var out []routing.Tier
	for _, p := range prios {
		tier := byPriority[p]
		sort.Slice(tier, func(i, j int) bool { return tier[i].To < tier[j].To })
		out = append(out, tier)
	}
	return out
}

// checkStatement compares, client by client, the routing statement with
// Istio's answer written as one (fromIstio): the statement the plan showed
// for an example's case, so that what users read in a plan is judged by
// Istio and not by a second computation from the same intent; for a
// golden case, the statement computed from the intent. A client whose
// order the plan could not know yet keeps the plan's words.
func (g *goldenCase) checkStatement(t *testing.T, fromIstio routing.Destination) {
	t.Helper()
	want, what := g.planned, "the plan shows"
	if want == nil {
		want, what = g.vdRouting(t).Statement(), "the routing statement says"
	}
	for c, line := range want {
		unknown := routing.Destination{Failover: map[string][]routing.Tier{c: nil}, Unknown: map[string]bool{c: true}}.Statement()[c]
		if line == unknown {
			fromIstio.Unknown[c] = true
		}
	}
	got := fromIstio.Statement()
	for _, c := range sortedKeys(got) {
		if got[c] != want[c] {
			t.Errorf("client %s: Istio sends requests for %s so: %q; %s %q", c, g.intent.Hostname, got[c], what, want[c])
		}
	}
	for _, c := range sortedKeys(want) {
		if _, ok := got[c]; !ok {
			t.Errorf("client %s: %s %q; Istio gives that cluster's sidecars no cluster for %s", c, what, want[c], g.intent.Hostname)
		}
	}
}
