package translate

import (
	"google.golang.org/protobuf/types/known/wrapperspb"
	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"
)

// tpDestinationSettings lists the DestinationRule settings of a policy, one
// feature function each, in a fixed order (as Istio's applyTrafficPolicy
// applies connection pool, outlier detection, load balancer, TLS). Each
// touches one part of the rule's trafficPolicy; tpSubsets adds the subsets
// a service's routes need.
func tpDestinationSettings(s tpScope) []tpSetting {
	var out []tpSetting
	out = append(out, tpConnectionPool(s)...)
	out = append(out, tpOutlierDetection(s)...)
	out = append(out, tpLoadBalancer(s)...)
	out = append(out, tpTLSMode(s)...)
	out = append(out, tpSubsets(s)...)
	return out
}

// tpConnectionPool sets the connection pool; its TCP and HTTP halves are
// separate settings, so two policies may set one each.
func tpConnectionPool(s tpScope) []tpSetting {
	cp := s.in.ConnectionPool
	if cp == nil {
		return nil
	}
	var out []tpSetting
	if t := cp.TCP; t != nil {
		tcp := &networkingapi.ConnectionPoolSettings_TCPSettings{MaxConnections: int32(t.MaxConnections)}
		if t.ConnectTimeout != "" {
			tcp.ConnectTimeout = tpDurationpb(t.ConnectTimeout)
		}
		if t.IdleTimeout != "" {
			tcp.IdleTimeout = tpDurationpb(t.IdleTimeout)
		}
		if t.MaxConnectionDuration != "" {
			tcp.MaxConnectionDuration = tpDurationpb(t.MaxConnectionDuration)
		}
		if k := t.Keepalive; k != nil {
			tcp.TcpKeepalive = &networkingapi.ConnectionPoolSettings_TCPSettings_TcpKeepalive{Probes: uint32(k.Probes)}
			if k.Time != "" {
				tcp.TcpKeepalive.Time = tpDurationpb(k.Time)
			}
			if k.Interval != "" {
				tcp.TcpKeepalive.Interval = tpDurationpb(k.Interval)
			}
		}
		out = append(out, tpSetting{key: "connection_pool.tcp", at: Root("connection_pool").Attr("tcp"),
			frag: tpTrafficPolicyFrag(&networkingapi.TrafficPolicy{ConnectionPool: &networkingapi.ConnectionPoolSettings{Tcp: tcp}})})
	}
	if h := cp.HTTP; h != nil {
		http := &networkingapi.ConnectionPoolSettings_HTTPSettings{
			Http1MaxPendingRequests:  int32(h.HTTP1MaxPendingRequests),
			Http2MaxRequests:         int32(h.HTTP2MaxRequests),
			MaxRequestsPerConnection: int32(h.MaxRequestsPerConnection),
			MaxRetries:               int32(h.MaxRetries),
		}
		if h.IdleTimeout != "" {
			http.IdleTimeout = tpDurationpb(h.IdleTimeout)
		}
		out = append(out, tpSetting{key: "connection_pool.http", at: Root("connection_pool").Attr("http"),
			frag: tpTrafficPolicyFrag(&networkingapi.TrafficPolicy{ConnectionPool: &networkingapi.ConnectionPoolSettings{Http: http}})})
	}
	return out
}

// tpOutlierDetection sets outlier detection.
func tpOutlierDetection(s tpScope) []tpSetting {
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
		od.Interval = tpDurationpb(o.Interval)
	}
	if o.BaseEjectionTime != "" {
		od.BaseEjectionTime = tpDurationpb(o.BaseEjectionTime)
	}
	return []tpSetting{{key: "outlier_detection", at: Root("outlier_detection"),
		frag: tpTrafficPolicyFrag(&networkingapi.TrafficPolicy{OutlierDetection: od})}}
}

// tpLoadBalancer sets the load-balancing algorithm. Only loadBalancer.simple
// is written: a virtual destination's localityLbSetting (failover) is a
// sibling field and stays its own.
func tpLoadBalancer(s tpScope) []tpSetting {
	if s.in.LoadBalancer == "" {
		return nil
	}
	lb := &networkingapi.LoadBalancerSettings{LbPolicy: &networkingapi.LoadBalancerSettings_Simple{
		Simple: networkingapi.LoadBalancerSettings_SimpleLB(networkingapi.LoadBalancerSettings_SimpleLB_value[s.in.LoadBalancer]),
	}}
	return []tpSetting{{key: "load_balancer", at: Root("load_balancer"),
		frag: tpTrafficPolicyFrag(&networkingapi.TrafficPolicy{LoadBalancer: lb})}}
}

// tpTLSMode sets the client TLS mode of a service. A virtual destination
// always uses ISTIO_MUTUAL (its east-west gateways route by the SNI of
// Istio mutual TLS) and sets it itself; validation allows nothing else.
func tpTLSMode(s tpScope) []tpSetting {
	if s.in.TLSMode == "" || s.target.virtual {
		return nil
	}
	tls := &networkingapi.ClientTLSSettings{
		Mode: networkingapi.ClientTLSSettings_TLSmode(networkingapi.ClientTLSSettings_TLSmode_value[s.in.TLSMode]),
	}
	return []tpSetting{{key: "tls_mode", at: Root("tls_mode"),
		frag: tpTrafficPolicyFrag(&networkingapi.TrafficPolicy{Tls: tls})}}
}

// tpSubsets defines, for a service, the subsets its shift and mirror
// targets route to: per cluster by Istio's topology.istio.io/cluster
// endpoint label, per version by the given labels. A virtual destination's
// subsets (one per backend cluster) belong to its own DestinationRule.
func tpSubsets(s tpScope) []tpSetting {
	if !s.target.ownDR {
		return nil
	}
	var out []tpSetting
	add := func(at Path, cluster string, local bool, subset string, labels map[string]string) {
		name := tpTargetSubset(s, cluster, local, subset)
		if cluster != "" || local {
			c := cluster
			if local {
				c = s.cluster
			}
			labels = map[string]string{tpClusterLabel: c}
		}
		out = append(out, tpSetting{key: "subsets[" + name + "]", at: at,
			frag: &networkingapi.DestinationRule{Subsets: []*networkingapi.Subset{{Name: name, Labels: copyMap(labels)}}}})
	}
	for i, e := range s.in.TrafficShift {
		add(Root("traffic_shift").Index(i), e.Cluster, e.Local, e.Subset, e.Labels)
	}
	if m := s.in.Mirror; m != nil {
		add(Root("mirror"), m.Cluster, false, m.Subset, m.Labels)
	}
	// One policy may name a subset twice (a cluster and local in that
	// cluster); keep the first.
	seen := map[string]bool{}
	var unique []tpSetting
	for _, st := range out {
		if !seen[st.key] {
			seen[st.key] = true
			unique = append(unique, st)
		}
	}
	return unique
}

func tpTrafficPolicyFrag(tp *networkingapi.TrafficPolicy) *networkingapi.DestinationRule {
	return &networkingapi.DestinationRule{TrafficPolicy: tp}
}

// trafficPolicyDestinationRule is the DestinationRule the policies' settings
// go to in one source cluster. For a virtual destination it is the virtual
// destination's own object (same namespace and name), of which these
// settings are only some fields: the engine applies them with the policy's
// own field manager, so the virtual destination keeps its subsets,
// failover and TLS. For a service it is ours, exported to every namespace.
func trafficPolicyDestinationRule(t tpTarget, rule *networkingapi.DestinationRule) *networking.DestinationRule {
	var exportTo []string
	if t.ownDR {
		exportTo = []string{"*"}
	}
	return &networking.DestinationRule{
		TypeMeta:   typeMeta(NetworkingV1, "DestinationRule"),
		ObjectMeta: objectMeta(t.drNamespace, t.drName),
		Spec: networkingapi.DestinationRule{
			Host:          t.host,
			TrafficPolicy: rule.TrafficPolicy,
			Subsets:       rule.Subsets,
			ExportTo:      exportTo,
		},
	}
}
