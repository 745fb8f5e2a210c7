package simulation

import (
	"flag"
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"istio.io/istio/pilot/pkg/simulation"

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
	for _, g := range cases {
		if g.failed != "" {
			if !withTables {
				t.Errorf("%s/%s: fails to translate here (%s); its plan wrote objects", folder, g.name, g.failed)
			}
			continue // the golden holds a plan error: nothing reaches Istio
		}
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
	for _, client := range g.intentClients() {
		s := newIstiod(t, g, client, g.objects[client], crossNetworkGateway, gatewayFor(t, ours, g.cluster(client)))
		ns := "default"
		if len(g.intent.Clients.Namespaces) > 0 && g.intent.Clients.Namespaces[0] != "*" {
			ns = g.intent.Clients.Namespaces[0]
			// exportTo isolation: a namespace clients.namespaces leaves
			// out must not see the hostname at all.
			outsider := s.sidecar("not-a-client")
			for name := range s.upstreamsFor(outsider, g.intent.Hostname) {
				t.Errorf("client %s: a sidecar in namespace not-a-client, which clients.namespaces %v leaves out, gets Istio's cluster %s: the intent exports %s to %v only", client, g.intent.Clients.Namespaces, name, g.intent.Hostname, g.intent.Clients.Namespaces)
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
				peers := ""
				if len(u.sans) > 0 {
					peers = " | peers " + strings.Join(u.sans, ", ")
				}
				fmt.Fprintf(&b, "%-56s | %s | sni %s%s\n", row, g.describeTiers(client, u.tiers), orNone(u.sni), peers)
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
	sort.Slice(sends, func(i, j int) bool {
		if sends[i].cluster != sends[j].cluster {
			return sends[i].cluster < sends[j].cluster
		}
		return sends[i].sni < sends[j].sni
	})
	for _, snd := range sends {
		gw := gatewayOf(snd.cluster)
		res, where := gw.passThrough(t, g.intent.namespace(), snd.sni)
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
// east-west gateway on 15443 and reports what it reaches: the upstream
// cluster and its endpoints, or why the connection fails.
func (s *istiod) passThrough(t *testing.T, ns, sni string) (string, string) {
	gw := s.eastWestGateway(ns)
	sim := simulation.NewSimulation(t, s.FakeDiscoveryServer, gw)
	res := sim.Run(simulation.Call{
		Port: 15443, Sni: sni, TLS: simulation.MTLS, Alpn: "istio-peer-exchange",
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
	leaveTo, leavePrio := "", 0
	for _, b := range g.intent.Backends {
		bc := g.cluster(b.Cluster)
		if (!b.ExcludeFor.empty() && b.ExcludeFor.selects(clientCluster)) || bc.Region == clientCluster.Region {
			continue
		}
		if leaveTo == "" || b.Priority < leavePrio {
			leaveTo, leavePrio = bc.Region, b.Priority
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
