package simulation

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	tlsv3 "github.com/envoyproxy/go-control-plane/envoy/extensions/transport_sockets/tls/v3"
	"github.com/mesh-intent/terraform-provider-mesh/tools/istio/internal/oracle"
	meshconfig "istio.io/api/mesh/v1alpha1"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pilot/test/xds"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/config/mesh/meshwatcher"
	"istio.io/istio/pkg/network"
	"istio.io/istio/pkg/test/util/retry"
	"sigs.k8s.io/yaml"
)

// crossNetworkGateway is the Gateway Istio's multi-network install creates
// (samples/multicluster/expose-services.yaml): every *.local service passed
// through the east-west gateway on 15443. The provider's own Gateway
// (mesh_cluster, its golden cases) must live beside it.
const crossNetworkGateway = `apiVersion: networking.istio.io/v1
kind: Gateway
metadata:
  name: cross-network-gateway
  namespace: istio-system
spec:
  selector:
    istio: eastwestgateway
  servers:
  - port: {number: 15443, name: tls, protocol: TLS}
    tls: {mode: AUTO_PASSTHROUGH}
    hosts: ["*.local"]`

// providerGateway is the east-west Gateway mesh_cluster writes with its
// defaults, read from the translator's own golden output so it cannot
// drift from what the provider writes.
func providerGateway(t *testing.T) string {
	t.Helper()
	c, err := loadCase(t, "cluster", oracle.GoldenDir("cluster")+"/all-features.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range c.objects["east"] {
		if strings.Contains(d, "\nkind: Gateway\n") {
			return d
		}
	}
	t.Fatal("cluster golden case all-features has no Gateway")
	return ""
}

// gatewayFor is the provider's Gateway as mesh_cluster writes it for c:
// the translator's default, with the hosts the registry says c's gateway
// passes when it says so, on the port its pods listen on.
func gatewayFor(t *testing.T, base string, c registryCluster) string {
	t.Helper()
	if c.EastWestGateway == nil || (c.EastWestGateway.Hosts == nil && c.gatewayListenPort() == 15443) {
		return base
	}
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(base), &obj); err != nil {
		t.Fatal(err)
	}
	server := obj["spec"].(map[string]any)["servers"].([]any)[0].(map[string]any)
	if c.EastWestGateway.Hosts != nil {
		hosts := make([]any, len(c.EastWestGateway.Hosts))
		for i, h := range c.EastWestGateway.Hosts {
			hosts[i] = h
		}
		server["hosts"] = hosts
	}
	// The server binds the port the gateway pods listen on (the cluster
	// golden cases gateway-only-custom-port and gateway-target-port).
	server["port"].(map[string]any)["number"] = c.gatewayListenPort()
	out, err := yaml.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// istiod is one cluster's fake istiod.
type istiod struct {
	*xds.FakeDiscoveryServer
	self registryCluster
}

// newIstiod starts a fake istiod for cluster self, loaded with docs (that
// cluster's golden objects) and the standard gateways. It knows every
// network's east-west gateway the way a live istiod learns it: the mesh
// networks arrive after start and force a full push, which is what makes
// istiod re-evaluate which endpoints live on other networks.
func newIstiod(t *testing.T, g *goldenCase, self string, docs []string, extra ...string) *istiod {
	t.Helper()
	return newIstiodWith(t, g, self, append(istioDocs(docs), extra...), nil)
}

// newIstiodWith is newIstiod with Kubernetes objects per cluster (Services,
// pods, EndpointSlices), which istiod reads through one registry per
// cluster.
func newIstiodWith(t *testing.T, g *goldenCase, self string, configs []string, kube map[cluster.ID]string) *istiod {
	t.Helper()
	nw := meshwatcher.NewFixedNetworksWatcher(nil)
	if kube != nil {
		for i, c := range g.registry {
			if c.Network == "" || c.EastWestGateway == nil {
				continue
			}
			id := cluster.ID(c.Name)
			kube[id] = strings.TrimPrefix(kube[id]+"\n---\n"+ewGatewayService(c, i), "\n---\n")
		}
	}
	s := xds.NewFakeDiscoveryServer(t, xds.FakeOptions{
		DefaultClusterName:              cluster.ID(self),
		ConfigString:                    strings.Join(configs, "\n---\n"),
		KubernetesObjectStringByCluster: kube,
		NetworksWatcher:                 nw,
	})
	networks := &meshconfig.MeshNetworks{Networks: map[string]*meshconfig.Network{}}
	var want []string
	for _, c := range g.registry {
		if c.Network == "" {
			continue
		}
		n := networks.Networks[c.Network]
		if n == nil {
			n = &meshconfig.Network{}
			networks.Networks[c.Network] = n
		}
		n.Endpoints = append(n.Endpoints, &meshconfig.Network_NetworkEndpoints{Ne: &meshconfig.Network_NetworkEndpoints_FromRegistry{FromRegistry: c.Name}})
		if c.EastWestGateway != nil && kube != nil {
			// istiod learns this gateway from its Service (ewGatewayService).
			want = append(want, c.Network)
		} else if c.EastWestGateway != nil {
			// The registry's address (a host name too, which istiod
			// resolves through the simulation's DNS) and port.
			n.Gateways = append(n.Gateways, &meshconfig.Network_IstioNetworkGateway{
				Gw: &meshconfig.Network_IstioNetworkGateway_Address{Address: c.EastWestGateway.Address}, Port: c.gatewayPort(),
			})
			want = append(want, c.Network)
		}
	}
	nw.SetNetworks(networks)
	// Wait until istiod's push context knows every gateway: a condition,
	// not a time. No bound of our own decides it (a slow machine only
	// waits longer); a push that never comes ends with the test binary's
	// -timeout, which names this wait in its goroutine dump.
	retry.UntilSuccessOrFail(t, func() error {
		for _, n := range want {
			if len(s.PushContext().NetworkManager().GatewaysForNetwork(network.ID(n))) == 0 {
				return fmt.Errorf("istiod of %s does not know network %s's gateway yet", self, n)
			}
		}
		return nil
	}, retry.Timeout(untilDeadline(t)), retry.Delay(10*time.Millisecond))
	return &istiod{FakeDiscoveryServer: s, self: g.cluster(self)}
}

// ewGatewayService is cluster c's east-west gateway Service as Istio's
// multi-network install makes it (samples/multicluster/gen-eastwest-gateway.sh):
// labelled with the cluster's network, a LoadBalancer whose address is the
// registry's. istiod reads it from that cluster's registry, so the gateway
// it learns belongs to cluster c, and the endpoint that stands for c's pods
// on another network carries topology.istio.io/cluster=c (ep_filters.go).
// A gateway given by address in meshNetworks belongs to no cluster
// ("Cluster: TODO" in model/network.go): its endpoints carry no cluster
// label, and a failoverPriority on topology.istio.io/cluster cannot tell
// the remote cluster from any other.
func ewGatewayService(c registryCluster, i int) string {
	ingress := "ip: " + c.EastWestGateway.Address
	if !isIP(c.EastWestGateway.Address) {
		// A cloud load balancer's DNS name, which istiod resolves.
		ingress = "hostname: " + c.EastWestGateway.Address
	}
	return fmt.Sprintf(`apiVersion: v1
kind: Service
metadata:
  name: istio-eastwestgateway
  namespace: istio-system
  labels: {istio: eastwestgateway, topology.istio.io/network: %[1]s, networking.istio.io/gatewayPort: "%[2]d"}
spec:
  type: LoadBalancer
  clusterIP: 10.96.1.%[3]d
  selector: {istio: eastwestgateway}
  ports: [{name: tls, port: %[2]d, targetPort: %[2]d, protocol: TCP}]
status:
  loadBalancer:
    ingress: [{%[4]s}]`, c.Network, c.gatewayPort(), i+1, ingress)
}

// sidecar is a client workload of the cluster in namespace ns.
func (s *istiod) sidecar(ns string) *model.Proxy {
	labels := map[string]string{"app": "client", "version": "v1"}
	return s.SetupProxy(&model.Proxy{
		ID:              "client-0." + ns,
		ConfigNamespace: ns,
		Labels:          labels,
		IPAddresses:     []string{"10.1.0.5"},
		Metadata: &model.NodeMetadata{
			Namespace: ns, Labels: labels,
			Network: network.ID(s.self.Network), ClusterID: cluster.ID(s.self.Name),
		},
	})
}

// eastWestGateway is the cluster's east-west gateway proxy, running in ns
// (a virtual destination's namespace must be the gateway's).
func (s *istiod) eastWestGateway(ns string) *model.Proxy {
	labels := map[string]string{"istio": "eastwestgateway", "app": "istio-eastwestgateway", "topology.istio.io/network": s.self.Network}
	return s.SetupProxy(&model.Proxy{
		ID:              "istio-eastwestgateway-0." + ns,
		Type:            model.Router,
		ConfigNamespace: ns,
		Labels:          labels,
		IPAddresses:     []string{"10.1.0.9"},
		Metadata: &model.NodeMetadata{
			Namespace: ns, Labels: labels,
			Network: network.ID(s.self.Network), ClusterID: cluster.ID(s.self.Name),
		},
	})
}

// upstream is one Envoy cluster as a table reads it.
type upstream struct {
	name string
	sni  string
	// sans are the peer identities the client accepts (none: any the
	// mesh's trust bundle signs).
	sans []string
	// tiers are the endpoints by Envoy priority, each "address:port" with
	// its weight when set.
	tiers [][]string
	// endpoints are the same endpoints, read as numbers.
	endpoints []envoyEndpoint
	// lbPolicy and localityConfig tell whether priorities are in effect.
	outlier bool
}

// envoyEndpoint is one endpoint of an Envoy cluster: where the sidecar
// dials, its load-balancing weight (0: unset, which Envoy takes as 1), and
// its priority.
type envoyEndpoint struct {
	address  string
	port     uint32
	weight   uint32
	priority uint32
}

// upstreamsFor returns the outbound clusters of host (default and subsets)
// that the proxy receives, by name.
func (s *istiod) upstreamsFor(p *model.Proxy, host string) map[string]upstream {
	out := map[string]upstream{}
	for _, c := range s.Clusters(p) {
		parts := strings.Split(c.Name, "|")
		if len(parts) != 4 || parts[0] != "outbound" || parts[3] != host {
			continue
		}
		out[c.Name] = readUpstream(c)
	}
	return out
}

func readUpstream(c *clusterv3.Cluster) upstream {
	u := upstream{name: c.Name, outlier: c.OutlierDetection != nil}
	u.sni, u.sans = clusterTLS(c)
	byPriority := map[uint32][]string{}
	var prios []uint32
	for _, lle := range c.GetLoadAssignment().GetEndpoints() {
		if _, ok := byPriority[lle.Priority]; !ok {
			prios = append(prios, lle.Priority)
		}
		for _, e := range lle.LbEndpoints {
			sa := e.GetEndpoint().GetAddress().GetSocketAddress()
			ep := fmt.Sprintf("%s:%d", sa.GetAddress(), sa.GetPortValue())
			u.endpoints = append(u.endpoints, envoyEndpoint{sa.GetAddress(), sa.GetPortValue(), e.GetLoadBalancingWeight().GetValue(), lle.Priority})
			if w := e.GetLoadBalancingWeight().GetValue(); w > 1 {
				ep += fmt.Sprintf(" w%d", w)
			}
			byPriority[lle.Priority] = append(byPriority[lle.Priority], ep)
		}
	}
	sort.Slice(prios, func(i, j int) bool { return prios[i] < prios[j] })
	for _, p := range prios {
		eps := byPriority[p]
		sort.Strings(eps)
		u.tiers = append(u.tiers, eps)
	}
	return u
}

// clusterTLS is the SNI the cluster sends to Istio-mTLS endpoints, and the
// subject alt names it accepts from them.
func clusterTLS(c *clusterv3.Cluster) (string, []string) {
	read := func(ctx *tlsv3.UpstreamTlsContext) (string, []string) {
		var sans []string
		vc := ctx.GetCommonTlsContext().GetCombinedValidationContext().GetDefaultValidationContext()
		for _, m := range vc.GetMatchTypedSubjectAltNames() {
			sans = append(sans, m.GetMatcher().GetExact()+m.GetMatcher().GetPrefix())
		}
		for _, m := range vc.GetMatchSubjectAltNames() { //nolint:staticcheck // what istiod fills today
			sans = append(sans, m.GetExact()+m.GetPrefix())
		}
		sort.Strings(sans)
		return ctx.Sni, sans
	}
	for _, m := range c.TransportSocketMatches {
		ctx := &tlsv3.UpstreamTlsContext{}
		if m.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx) == nil && ctx.Sni != "" {
			return read(ctx)
		}
	}
	ctx := &tlsv3.UpstreamTlsContext{}
	if c.GetTransportSocket().GetTypedConfig().UnmarshalTo(ctx) == nil {
		return read(ctx)
	}
	return "", nil
}

func isIP(s string) bool {
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.Trim(p, "0123456789") != "" {
			return false
		}
	}
	return true
}

// untilDeadline is how long a wait for a condition may last: until the
// test binary's own deadline (go test -timeout), or a day without one, so
// that the machine's speed never decides a test.
func untilDeadline(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return time.Until(d)
	}
	return 24 * time.Hour
}
