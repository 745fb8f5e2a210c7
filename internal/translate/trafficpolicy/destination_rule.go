package trafficpolicy

import (
	"maps"
	"slices"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"

	"time"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"
)

// destinationSettings lists the DestinationRule settings of a policy, one
// feature function each, in a fixed order (as Istio's applyTrafficPolicy
// applies connection pool, outlier detection, load balancer, TLS). Each
// touches one part of the rule's trafficPolicy; subsets adds the subsets
// a service's routes need.
func destinationSettings(s scope) []setting {
	var out []setting
	out = append(out, connectionPool(s)...)
	out = append(out, outlierDetection(s)...)
	out = append(out, loadBalancer(s)...)
	out = append(out, tlsMode(s)...)
	out = append(out, subsets(s)...)
	return out
}

// connectionPool sets the connection pool; its TCP and HTTP halves are
// separate settings, so two policies may set one each.
func connectionPool(s scope) []setting {
	cp := s.in.ConnectionPool
	if cp == nil {
		return nil
	}
	var out []setting
	if t := cp.TCP; t != nil {
		tcp := &networkingapi.ConnectionPoolSettings_TCPSettings{MaxConnections: int32(t.MaxConnections)}
		if t.ConnectTimeout != "" {
			tcp.ConnectTimeout = durationProto(t.ConnectTimeout)
		}
		if t.IdleTimeout != "" {
			tcp.IdleTimeout = durationProto(t.IdleTimeout)
		}
		if t.MaxConnectionDuration != "" {
			tcp.MaxConnectionDuration = durationProto(t.MaxConnectionDuration)
		}
		if k := t.Keepalive; k != nil {
			tcp.TcpKeepalive = &networkingapi.ConnectionPoolSettings_TCPSettings_TcpKeepalive{Probes: uint32(k.Probes)}
			if k.Time != "" {
				tcp.TcpKeepalive.Time = durationProto(k.Time)
			}
			if k.Interval != "" {
				tcp.TcpKeepalive.Interval = durationProto(k.Interval)
			}
		}
		out = append(out, setting{key: "connection_pool.tcp", at: translate.Root("connection_pool").Attr("tcp"),
			frag: trafficPolicyFrag(&networkingapi.TrafficPolicy{ConnectionPool: &networkingapi.ConnectionPoolSettings{Tcp: tcp}})})
	}
	if h := cp.HTTP; h != nil {
		http := &networkingapi.ConnectionPoolSettings_HTTPSettings{
			Http1MaxPendingRequests:  int32(h.HTTP1MaxPendingRequests),
			Http2MaxRequests:         int32(h.HTTP2MaxRequests),
			MaxRequestsPerConnection: int32(h.MaxRequestsPerConnection),
			MaxRetries:               int32(h.MaxRetries),
		}
		if h.IdleTimeout != "" {
			http.IdleTimeout = durationProto(h.IdleTimeout)
		}
		out = append(out, setting{key: "connection_pool.http", at: translate.Root("connection_pool").Attr("http"),
			frag: trafficPolicyFrag(&networkingapi.TrafficPolicy{ConnectionPool: &networkingapi.ConnectionPoolSettings{Http: http}})})
	}
	return out
}

// outlierDetection sets outlier detection.
func outlierDetection(s scope) []setting {
	o := s.in.OutlierDetection
	if o == nil {
		return nil
	}
	od := &networkingapi.OutlierDetection{
		MaxEjectionPercent: int32(o.MaxEjectionPercent),
		MinHealthPercent:   int32(o.MinHealthPercent),
	}
	if o.Consecutive5xxErrors != nil {
		od.Consecutive_5XxErrors = wrapperspb.UInt32(uint32(*o.Consecutive5xxErrors))
	}
	if o.ConsecutiveGatewayErrors != nil {
		od.ConsecutiveGatewayErrors = wrapperspb.UInt32(uint32(*o.ConsecutiveGatewayErrors))
	}
	if o.Interval != "" {
		od.Interval = durationProto(o.Interval)
	}
	if o.BaseEjectionTime != "" {
		od.BaseEjectionTime = durationProto(o.BaseEjectionTime)
	}
	return []setting{{key: "outlier_detection", at: translate.Root("outlier_detection"),
		frag: trafficPolicyFrag(&networkingapi.TrafficPolicy{OutlierDetection: od})}}
}

// loadBalancer sets the load-balancing algorithm. Only loadBalancer.simple
// is written: a virtual destination's localityLbSetting (failover) is a
// sibling field and stays its own.
func loadBalancer(s scope) []setting {
	if s.in.LoadBalancer == "" {
		return nil
	}
	lb := &networkingapi.LoadBalancerSettings{LbPolicy: &networkingapi.LoadBalancerSettings_Simple{
		Simple: networkingapi.LoadBalancerSettings_SimpleLB(networkingapi.LoadBalancerSettings_SimpleLB_value[s.in.LoadBalancer]),
	}}
	return []setting{{key: "load_balancer", at: translate.Root("load_balancer"),
		frag: trafficPolicyFrag(&networkingapi.TrafficPolicy{LoadBalancer: lb})}}
}

// tlsMode sets the client TLS mode of a service. A virtual destination
// always uses ISTIO_MUTUAL (its east-west gateways route by the SNI of
// Istio mutual TLS) and sets it itself; validation allows nothing else.
func tlsMode(s scope) []setting {
	if s.in.TLSMode == "" || s.target.virtual {
		return nil
	}
	tls := &networkingapi.ClientTLSSettings{
		Mode: networkingapi.ClientTLSSettings_TLSmode(networkingapi.ClientTLSSettings_TLSmode_value[s.in.TLSMode]),
	}
	return []setting{{key: "tls_mode", at: translate.Root("tls_mode"),
		frag: trafficPolicyFrag(&networkingapi.TrafficPolicy{Tls: tls})}}
}

// subsets defines, for a service, the subsets its shift and mirror
// targets route to. A virtual destination's subsets (one per backend
// cluster) belong to its own DestinationRule.
//
// A version subset selects the given labels. A cluster subset selects no
// label: it holds every endpoint of the service, and a failoverPriority on
// Istio's topology.istio.io/cluster endpoint label puts that cluster first
// and every other cluster after it, so traffic sent to one cluster still
// fails over when it fails (Istio applies failoverPriority only with
// outlier detection, so the subset carries the policy's, or a default).
// Selecting the cluster label instead would leave such traffic nowhere to
// go, and `istioctl analyze` reports a subset on that label as selecting
// no pods (IST0173: pods do not carry it, Istio adds it to endpoints).
//
// Every cluster the policy reaches (sources and named clusters) gets every
// cluster subset of the policy, not only the ones its own routes use: a
// request for one cluster's subset that fails over to another cluster
// arrives at that cluster's east-west gateway with the subset's SNI
// (outbound_.<port>_.<subset>_.<host>), and a gateway with no cluster for
// an SNI resets the connection.
func subsets(s scope) []setting {
	if !s.target.ownDR {
		return nil
	}
	var out []setting
	for _, name := range s.clusterSubsets {
		out = append(out, clusterSubset(s.in, name))
	}
	add := func(at translate.Path, subset string, labels map[string]string) {
		out = append(out, setting{key: "subsets[" + subset + "]", at: at,
			frag: &networkingapi.DestinationRule{Subsets: []*networkingapi.Subset{{Name: subset, Labels: maps.Clone(labels)}}}})
	}
	if s.routes {
		for i, e := range s.in.TrafficShift {
			if e.Subset != "" {
				add(translate.Root("traffic_shift").Index(i), e.Subset, e.Labels)
			}
		}
		if m := s.in.Mirror; m != nil && m.Subset != "" {
			add(translate.Root("mirror"), m.Subset, m.Labels)
		}
	}
	return out
}

// clusterSubsetClusters are the clusters whose subset a policy on a
// service routes to from any of its source clusters, sorted.
func clusterSubsetClusters(in Intent, sources []string) []string {
	set := map[string]bool{}
	for _, e := range in.TrafficShift {
		switch {
		case e.Cluster != "":
			set[e.Cluster] = true
		case e.Local:
			for _, c := range sources {
				set[c] = true
			}
		}
	}
	if m := in.Mirror; m != nil && m.Cluster != "" {
		set[m.Cluster] = true
	}
	return slices.Sorted(maps.Keys(set))
}

// clusterSubset is the subset of one cluster (see subsets).
func clusterSubset(in Intent, cluster string) setting {
	od := defaultSubsetOutlier()
	if o := outlierDetection(scope{in: in}); len(o) == 1 {
		od = o[0].frag.(*networkingapi.DestinationRule).TrafficPolicy.OutlierDetection
	}
	name := virtualdestination.SubsetName(cluster)
	return setting{key: "subsets[" + name + "]", at: translate.Root("traffic_shift"),
		frag: &networkingapi.DestinationRule{Subsets: []*networkingapi.Subset{{
			Name: name,
			TrafficPolicy: &networkingapi.TrafficPolicy{
				LoadBalancer: &networkingapi.LoadBalancerSettings{LocalityLbSetting: &networkingapi.LocalityLoadBalancerSetting{
					Enabled:          wrapperspb.Bool(true),
					FailoverPriority: []string{clusterLabel + "=" + cluster},
				}},
				OutlierDetection: od,
			},
		}}}}
}

// defaultSubsetOutlier ejects an endpoint after 5 consecutive 5xx or
// gateway errors (a remote east-west gateway answers 503 when it cannot
// reach its backend), as a virtual destination's failover does by default.
func defaultSubsetOutlier() *networkingapi.OutlierDetection {
	return &networkingapi.OutlierDetection{
		Consecutive_5XxErrors: wrapperspb.UInt32(5),
		Interval:              durationpb.New(10 * time.Second),
		BaseEjectionTime:      durationpb.New(30 * time.Second),
		MaxEjectionPercent:    100,
	}
}

func trafficPolicyFrag(tp *networkingapi.TrafficPolicy) *networkingapi.DestinationRule {
	return &networkingapi.DestinationRule{TrafficPolicy: tp}
}

// trafficPolicyDestinationRule is the DestinationRule the policies' settings
// go to in one source cluster. For a virtual destination it is the virtual
// destination's own object (same namespace and name), of which these
// settings are only some fields: the engine applies them with the policy's
// own field manager, so the virtual destination keeps its subsets,
// failover and TLS. For a service it is ours, exported to every namespace.
func trafficPolicyDestinationRule(t target, rule *networkingapi.DestinationRule) *networking.DestinationRule {
	var exportTo []string
	if t.ownDR {
		exportTo = []string{"*"}
	}
	return &networking.DestinationRule{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "DestinationRule"),
		ObjectMeta: translate.ObjectMeta(t.drNamespace, t.drName),
		Spec: networkingapi.DestinationRule{
			Host:          t.host,
			TrafficPolicy: rule.TrafficPolicy,
			Subsets:       rule.Subsets,
			ExportTo:      exportTo,
		},
	}
}
