package virtualdestination

import (
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"

	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"
)

// appendDestinationRules appends the DestinationRules of one cluster,
// alongside its ServiceEntries (appendServiceEntries).
func appendDestinationRules(out []translate.Object, p *plan, v *view) []translate.Object {
	if v.client {
		out = append(out, translate.Object{Cluster: v.cluster.Name, Resource: clientDestinationRule(p, v)})
		if len(routablePorts(p.in.Ports)) > 0 {
			for _, o := range v.subsets {
				out = append(out, translate.Object{Cluster: v.cluster.Name, Resource: clusterHostDestinationRule(p, v, o)})
			}
		}
	}
	if v.serves != nil {
		out = append(out, translate.Object{Cluster: v.cluster.Name, Resource: backendDestinationRule(p, v.serves)})
	}
	return out
}

// clientDestinationRule is how a client cluster's sidecars reach the
// hostname. Each feature touches one part of the traffic policy, applied in
// this order.
func clientDestinationRule(p *plan, v *view) *networking.DestinationRule {
	op := p.parts(v)
	tp := op.clientPolicy
	if tp == nil {
		tp = &networkingapi.TrafficPolicy{}
		p.applyMutualTLS(tp)
		p.applyOutlierDetection(tp)
		applyPriorityFailover(p, tp, v)
		op.clientPolicy = tp
	}
	return &networking.DestinationRule{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "DestinationRule"),
		ObjectMeta: translate.ObjectMeta(p.namespace, ObjectName(p.in.Name)),
		Spec: networkingapi.DestinationRule{
			Host:          p.in.Hostname,
			TrafficPolicy: tp,
			ExportTo:      append([]string(nil), p.exportTo...),
		},
	}
}

// backendDestinationRule is what a backend cluster's east-west gateway
// reads for the hostname: Istio mTLS, so the gateway accepts the local
// endpoint as an mTLS destination. Exported to the gateway's namespace like
// the backend ServiceEntry.
func backendDestinationRule(p *plan, b *Backend) *networking.DestinationRule {
	tp := &networkingapi.TrafficPolicy{}
	p.applyMutualTLS(tp)
	return &networking.DestinationRule{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "DestinationRule"),
		ObjectMeta: translate.ObjectMeta(b.Namespace, BackendObjectName(p.in.Name)),
		Spec: networkingapi.DestinationRule{
			Host:          p.in.Hostname,
			TrafficPolicy: tp,
			ExportTo:      []string{p.namespace},
		},
	}
}

// localityOn and localityOff are the values of
// LocalityLoadBalancerSetting.enabled, shared by every DestinationRule
// (translated objects are never changed afterwards).
var localityOn, localityOff = wrapperspb.Bool(true), wrapperspb.Bool(false)

// applyMutualTLS originates Istio mTLS: the east-west gateway routes by
// the SNI of that handshake, and the backend's sidecar terminates it.
//
// The settings are made once per virtual destination and shared by its
// DestinationRules, as is the outlier detection: translated objects are
// never changed afterwards.
func (p *plan) applyMutualTLS(tp *networkingapi.TrafficPolicy) {
	if p.tls == nil {
		p.tls = &networkingapi.ClientTLSSettings{Mode: networkingapi.ClientTLSSettings_ISTIO_MUTUAL}
	}
	tp.Tls = p.tls
}

// applyOutlierDetection ejects a failing backend; without it Envoy never
// leaves a priority and failover does nothing.
func (p *plan) applyOutlierDetection(tp *networkingapi.TrafficPolicy) {
	if p.outlierDetection == nil {
		o := p.outlier
		p.outlierDetection = &networkingapi.OutlierDetection{
			Consecutive_5XxErrors: wrapperspb.UInt32(o.consecutive5xx),
			Interval:              durationpb.New(o.interval),
			BaseEjectionTime:      durationpb.New(o.ejection),
			MaxEjectionPercent:    o.maxEjectionPercent,
		}
	}
	tp.OutlierDetection = p.outlierDetection
}

// applyPriorityFailover makes the client send traffic to the lowest
// priority rank that has a healthy endpoint, then the next.
//
// The client's visible backends have K distinct priorities, ranked 0..K-1.
// An endpoint of rank r carries mesh-intent.io/rank-le-t=true for every t in
// r..K-2, and failoverPriority lists rank-le-(K-2)=true, ..., rank-le-0=true.
// Istio gives an endpoint that matches the first m entries (and not the
// next) the priority K-1-m, so rank r, which matches the first K-1-r
// entries, gets Envoy priority r.
//
// With a single rank locality load balancing is disabled: every backend
// shares the load, and the mesh's default locality preference does not
// apply.
func applyPriorityFailover(p *plan, tp *networkingapi.TrafficPolicy, v *view) {
	lb := &networkingapi.LocalityLoadBalancerSetting{}
	if v.tiers <= 1 {
		lb.Enabled = localityOff
	} else {
		lb.Enabled = localityOn
		lb.FailoverPriority = p.failoverPriority(FailoverRankLabelPrefix, v.rankMark(), v.tiers)
	}
	tp.LoadBalancer = &networkingapi.LoadBalancerSettings{LocalityLbSetting: lb}
}

// clusterHostDestinationRule is how the client reaches one backend
// cluster first (ClusterHost): the same mTLS and outlier
// detection as the hostname, and a failoverPriority that puts that cluster
// first and the other backends after it, in the destination's order
// (subsetOrders). A traffic policy that shifts or mirrors a share of the
// requests to one cluster sends it there, and that share still fails over.
func clusterHostDestinationRule(p *plan, v *view, o subsetOrder) *networking.DestinationRule {
	op := p.parts(v)
	tp := op.hostPolicies[o.cluster]
	if tp == nil {
		tp = &networkingapi.TrafficPolicy{}
		p.applyMutualTLS(tp)
		p.applyOutlierDetection(tp)
		lb := &networkingapi.LocalityLoadBalancerSetting{Enabled: localityOff}
		if o.tiers > 1 {
			lb = &networkingapi.LocalityLoadBalancerSetting{Enabled: localityOn, FailoverPriority: p.failoverPriority(o.labelPrefix, v.rankMark(), o.tiers)}
		}
		tp.LoadBalancer = &networkingapi.LoadBalancerSettings{LocalityLbSetting: lb}
		op.hostPolicies[o.cluster] = tp
	}
	return &networking.DestinationRule{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "DestinationRule"),
		ObjectMeta: translate.ObjectMeta(p.namespace, ClusterObjectName(p.in.Name, SubsetName(o.cluster))),
		Spec: networkingapi.DestinationRule{
			Host:          p.clusterHost(o.cluster),
			TrafficPolicy: tp,
			ExportTo:      append([]string(nil), p.exportTo...),
		},
	}
}

// subsetOrder is the failover order of one backend cluster's subset in
// one client cluster: that cluster first, then the other backends.
type subsetOrder struct {
	cluster string
	// labelPrefix + t ("true") marks the endpoints of rank at most t in
	// this order; FailoverRankLabelPrefix when the order is the
	// destination's own (the cluster already is alone in front).
	labelPrefix string
	rank        map[string]int // backend cluster -> rank in this order
	tiers       int
	// keys are the rank labels, labelPrefix + t for t in 0..tiers-2.
	keys []string
}

// withKeys fills keys from labelPrefix and tiers.
func (o subsetOrder) withKeys(p *plan) subsetOrder {
	o.keys = p.rankLabels(o.labelPrefix, o.tiers-1)
	return o
}

// rankLabels are the labels an endpoint of cluster needs for this order.
func (o subsetOrder) rankLabels(cluster, mark string, into map[string]string) {
	for t := o.rank[cluster]; t < o.tiers-1; t++ {
		into[o.keys[t]] = mark
	}
}

// subsetOrders computes, for every target cluster, the order inside its
// subset: the cluster, then the destination's ranks without it. A cluster
// that is already alone in the destination's first rank reuses the
// destination's labels.
func subsetOrders(p *plan, v *view) []subsetOrder {
	out := make([]subsetOrder, 0, len(v.targets))
	for i, x := range v.targets {
		o := subsetOrder{cluster: x.backend.Cluster, rank: map[string]int{}}
		if i == 0 && (len(v.targets) == 1 || v.targets[1].rank > 0) {
			o.labelPrefix, o.tiers = FailoverRankLabelPrefix, v.tiers
			for _, t := range v.targets {
				o.rank[t.backend.Cluster] = t.rank
			}
			out = append(out, o.withKeys(p))
			continue
		}
		o.labelPrefix, o.tiers = SubsetName(x.backend.Cluster)+subsetRankLabelSuffix, 1
		last := -1
		for _, t := range v.targets {
			if t.backend.Cluster == x.backend.Cluster {
				continue
			}
			if t.rank != last {
				o.tiers++
				last = t.rank
			}
			o.rank[t.backend.Cluster] = o.tiers - 1
		}
		out = append(out, o.withKeys(p))
	}
	return out
}
