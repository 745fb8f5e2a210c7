package simulation

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/test/xds"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/config/mesh/meshwatcher"

	"github.com/mesh-intent/terraform-provider-mesh/tools/istio/internal/oracle"
)

// tpCase is a traffic-policy golden case: one policy, or several composed.
type tpCase struct {
	Policy      tpPolicy      `json:"policy"`
	Destination tpDestination `json:"destination"`
	Compose     []struct {
		Policy      tpPolicy      `json:"policy"`
		Destination tpDestination `json:"destination"`
	} `json:"compose"`
}

type tpPolicy struct {
	Name    string `json:"name"`
	Sources struct {
		Namespaces     []string          `json:"namespaces"`
		WorkloadLabels map[string]string `json:"workloadLabels"`
	} `json:"sources"`
	TrafficShift []struct {
		Cluster string `json:"cluster"`
		Local   bool   `json:"local"`
		Subset  string `json:"subset"`
		Weight  int    `json:"weight"`
	} `json:"trafficShift"`
}

type tpDestination struct {
	VirtualDestination string   `json:"virtualDestination"`
	ClientNamespaces   []string `json:"clientNamespaces"`
	Service            string   `json:"service"`
	Namespace          string   `json:"namespace"`
}

func (d tpDestination) host() string {
	if d.VirtualDestination != "" {
		return d.VirtualDestination
	}
	return d.Service + "." + d.Namespace + ".svc.cluster.local"
}

// TestTrafficPolicyTraffic replays every traffic-policy golden case in
// Istio's xDS generation: in each source cluster, a sidecar in the
// policy's source namespace gets the routes for the destination; the table
// records each route's weighted destinations and mirror, and the test
// checks that every destination is an Envoy cluster the sidecar has (else
// Envoy answers 503 "no cluster"), that weights add up to 100, and, for a
// service's cluster subsets, that the subset's endpoints start in that
// cluster and fail over to the others.
func TestTrafficPolicyTraffic(t *testing.T) {
	forEachCase(t, "traffic-policy", nil, simulateTrafficPolicy)
}

func simulateTrafficPolicy(t *testing.T, g *goldenCase, tc tpCase) string {
	type pd struct {
		p tpPolicy
		d tpDestination
	}
	pds := []pd{{tc.Policy, tc.Destination}}
	if len(tc.Compose) > 0 {
		pds = nil
		for _, c := range tc.Compose {
			pds = append(pds, pd{c.Policy, c.Destination})
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# What Istio's xDS generation makes of %s.golden.yaml: per source cluster, the\n", g.name)
	b.WriteString("# routes a sidecar in the policy's source namespace gets for the destination, each with\n")
	b.WriteString("# its weighted Envoy clusters and mirror; for a cluster subset of a service, its\n")
	b.WriteString("# endpoints by Envoy priority. `make simulation UPDATE=1` rewrites it.\n")
	for _, c := range sortedKeys(g.objects) {
		s := newPolicyIstiod(t, g, c, pds[0].d)
		for _, x := range pds {
			ns := "default"
			switch {
			case len(x.p.Sources.Namespaces) > 0:
				ns = x.p.Sources.Namespaces[0]
			case len(x.d.ClientNamespaces) > 0:
				ns = x.d.ClientNamespaces[0] // where the destination exists
			}
			proxy := s.sidecar(ns)
			if len(x.p.Sources.WorkloadLabels) > 0 {
				for k, v := range x.p.Sources.WorkloadLabels {
					proxy.Labels[k] = v
					proxy.Metadata.Labels[k] = v
				}
				proxy = s.SetupProxy(proxy)
			}
			clusters := map[string]bool{}
			for _, cl := range s.Clusters(proxy) {
				clusters[cl.Name] = true
			}
			host := x.d.host()
			vh := findVirtualHost(s.Routes(proxy), host)
			if vh == nil {
				t.Errorf("%s: a sidecar in %s has no routes for %s", c, ns, host)
				continue
			}
			for _, r := range vh.Routes {
				if r.Name != x.p.Name && !(len(pds) > 1 || r.Name == "default") {
					continue
				}
				row := fmt.Sprintf("%s (%s) -> %s route %s", c, ns, host, orNone(r.Name))
				fmt.Fprintf(&b, "%-70s | %s\n", row, describeRoute(t, row, r, clusters))
			}
			if x.d.Service != "" {
				subsets := s.subsetEndpoints(t, g, proxy, host)
				for _, sub := range sortedKeys(subsets) {
					fmt.Fprintf(&b, "%-70s | %s\n", fmt.Sprintf("%s subset %s of %s", c, sub, host), subsets[sub])
				}
				// Another cluster's request for a cluster subset that
				// lands here (shifted to this cluster, or failing over to
				// it) arrives at this cluster's east-west gateway with the
				// subset in its SNI, through Istio's cross-network-gateway
				// (*.local).
				for _, sub := range sortedKeys(subsets) {
					if !g.isCluster(sub) {
						continue // a version subset stays in its cluster
					}
					sni := fmt.Sprintf("outbound_.8080_.%s_.%s", sub, host)
					res, where := s.passThrough(t, "istio-system", sni)
					fmt.Fprintf(&b, "%-70s | %s\n", "gateway "+c+" <- "+sni, res)
					if where == "" {
						t.Errorf("east-west gateway of %s has no filter chain for SNI %s: a request for subset %s failing over to %s would be reset (%s)", c, sni, sub, c, res)
					}
				}
			}
		}
	}
	return b.String()
}

// newPolicyIstiod is a fake istiod for cluster self with its golden objects
// and the destination as the mesh has it: for a virtual destination, a
// ServiceEntry of its hosts (the virtual destination's own objects are not
// part of a traffic-policy case), for a service, the Service with one pod
// in every cluster of the registry, which istiod sees through its
// multi-cluster registries with each endpoint labelled by its cluster.
func newPolicyIstiod(t *testing.T, g *goldenCase, self string, d tpDestination) *istiod {
	t.Helper()
	docs := append(istioDocs(g.objects[self]), crossNetworkGateway)
	kube := map[cluster.ID]string{}
	if d.VirtualDestination != "" {
		var clusters []string
		for _, c := range g.registry {
			clusters = append(clusters, subsetName(c.Name))
		}
		docs = append(docs, oracle.VirtualDestinationStandIn(d.VirtualDestination, clusters, d.ClientNamespaces)...)
	} else {
		for i, c := range g.registry {
			kube[cluster.ID(c.Name)] = fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}}
spec:
  clusterIP: 10.96.0.%[3]d
  selector: {app: %[1]s}
  ports: [{name: http, port: 8080, protocol: TCP}]
---
apiVersion: v1
kind: Pod
metadata: {name: %[1]s-0, namespace: %[2]s, labels: {app: %[1]s, version: v1, security.istio.io/tlsMode: istio}}
spec: {nodeName: node-%[4]s}
status: {podIP: 10.%[3]d.0.1, phase: Running, conditions: [{type: Ready, status: "True"}]}
---
apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %[1]s-%[4]s, namespace: %[2]s, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
endpoints:
- addresses: [10.%[3]d.0.1]
  conditions: {ready: true}
  targetRef: {kind: Pod, name: %[1]s-0, namespace: %[2]s}
ports: [{name: http, port: 8080, protocol: TCP}]`, d.Service, d.Namespace, i+1, c.Name)
		}
	}
	s := xds.NewFakeDiscoveryServer(t, xds.FakeOptions{
		DefaultClusterName:              cluster.ID(self),
		ConfigString:                    strings.Join(docs, "\n---\n"),
		KubernetesObjectStringByCluster: kube,
		NetworksWatcher:                 meshwatcher.NewFixedNetworksWatcher(nil),
	})
	return &istiod{FakeDiscoveryServer: s, self: g.cluster(self)}
}

func findVirtualHost(rcs []*route.RouteConfiguration, host string) *route.VirtualHost {
	for _, rc := range rcs {
		for _, vh := range rc.VirtualHosts {
			for _, d := range vh.Domains {
				if d == host {
					return vh
				}
			}
		}
	}
	return nil
}

// describeRoute renders a route's destinations and checks them.
func describeRoute(t *testing.T, row string, r *route.Route, clusters map[string]bool) string {
	a := r.GetRoute()
	if a == nil {
		return "not a forwarding route"
	}
	var parts []string
	check := func(name string) {
		if !clusters[name] {
			t.Errorf("%s: routes to %s, which the sidecar has no cluster for (Envoy answers 503)", row, name)
		}
	}
	switch {
	case a.GetWeightedClusters() != nil:
		total := uint32(0)
		for _, wc := range a.GetWeightedClusters().Clusters {
			parts = append(parts, fmt.Sprintf("%d%% %s", wc.GetWeight().GetValue(), wc.Name))
			total += wc.GetWeight().GetValue()
			check(wc.Name)
		}
		if total != 100 {
			t.Errorf("%s: weights add up to %d, not 100", row, total)
		}
	default:
		parts = append(parts, "100% "+a.GetCluster())
		check(a.GetCluster())
	}
	for _, m := range a.RequestMirrorPolicies {
		pct := "100"
		if f := m.GetRuntimeFraction().GetDefaultValue(); f != nil {
			pct = fmt.Sprintf("%d/%s", f.Numerator, f.Denominator)
		}
		parts = append(parts, "mirror "+pct+" "+m.Cluster)
		check(m.Cluster)
	}
	if to := a.GetTimeout(); to != nil && to.AsDuration() > 0 {
		parts = append(parts, "timeout "+to.AsDuration().String())
	}
	if rp := a.GetRetryPolicy(); rp != nil {
		parts = append(parts, fmt.Sprintf("retries %d on %s", rp.GetNumRetries().GetValue(), rp.RetryOn))
	}
	return strings.Join(parts, ", ")
}

// subsetEndpoints renders, for each subset cluster of host (EDS), its
// endpoints by Envoy priority, naming each endpoint's cluster by its pod
// address (10.<registry index+1>.0.1), and checks that a subset named
// after a cluster starts in that cluster and fails over to every other.
func (s *istiod) subsetEndpoints(t *testing.T, g *goldenCase, p *model.Proxy, host string) map[string]string {
	out := map[string]string{}
	for _, cla := range s.Endpoints(p) {
		parts := strings.Split(cla.ClusterName, "|")
		if len(parts) != 4 || parts[3] != host || parts[2] == "" {
			continue
		}
		byPrio := map[uint32][]string{}
		var prios []uint32
		for _, lle := range cla.Endpoints {
			if _, ok := byPrio[lle.Priority]; !ok {
				prios = append(prios, lle.Priority)
			}
			for _, e := range lle.LbEndpoints {
				addr := e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress()
				name := "?" + addr
				for i, c := range g.registry {
					if addr == fmt.Sprintf("10.%d.0.1", i+1) {
						name = c.Name
					}
				}
				byPrio[lle.Priority] = append(byPrio[lle.Priority], name)
			}
		}
		sort.Slice(prios, func(i, j int) bool { return prios[i] < prios[j] })
		var tiers []string
		for i, pr := range prios {
			sort.Strings(byPrio[pr])
			tiers = append(tiers, fmt.Sprintf("p%d: %s", i, strings.Join(byPrio[pr], ", ")))
		}
		subset := parts[2]
		out[subset] = strings.Join(tiers, " | ")
		for _, c := range g.registry {
			if subsetName(c.Name) != subset {
				continue
			}
			want := []string{"p0: " + c.Name}
			var rest []string
			for _, o := range g.registry {
				if o.Name != c.Name {
					rest = append(rest, o.Name)
				}
			}
			if len(rest) > 0 {
				want = append(want, "p1: "+strings.Join(rest, ", "))
			}
			if got := strings.Join(tiers, " | "); got != strings.Join(want, " | ") {
				t.Errorf("%s: subset %s of %s gives %q; it should start in %s and fail over to the others: %q", s.self.Name, subset, host, got, c.Name, strings.Join(want, " | "))
			}
		}
	}
	return out
}
