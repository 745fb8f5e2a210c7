package virtualdestination

import (
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"

	"sort"
	"strings"

	"google.golang.org/protobuf/proto"
	networkingapi "istio.io/api/networking/v1alpha3"
	networking "istio.io/client-go/pkg/apis/networking/v1"
)

// appendServiceEntries appends the ServiceEntries of one cluster: the
// client one when clients run there, the backend one when clients in other
// clusters reach its backend.
func appendServiceEntries(out []translate.Object, p *plan, v *view) []translate.Object {
	if v.client {
		client := clientServiceEntry(p, v)
		out = append(out, translate.Object{Cluster: v.cluster.Name, Resource: client})
		if se := clusterHostsServiceEntry(p, v, client); se != nil {
			out = append(out, translate.Object{Cluster: v.cluster.Name, Resource: se})
		}
	}
	if v.serves != nil {
		out = append(out, translate.Object{Cluster: v.cluster.Name, Resource: backendServiceEntry(p, v.serves)})
		if se := backendClusterHostsServiceEntry(p, v.serves); se != nil {
			out = append(out, translate.Object{Cluster: v.cluster.Name, Resource: se})
		}
	}
	return out
}

// clientServiceEntry declares the hostname to the client cluster's
// sidecars: MESH_INTERNAL (mTLS, the identity of a mesh service), the stable
// VIP, and one endpoint per backend visible from this cluster. DNS
// resolution, because a local backend is reached by its Service FQDN and a
// remote one through an east-west gateway that may be a DNS name.
func clientServiceEntry(p *plan, v *view) *networking.ServiceEntry {
	se := hostnameServiceEntry(p, p.namespace, ObjectName(p.in.Name))
	se.Spec.ExportTo = append([]string(nil), p.exportTo...)
	op := p.parts(v)
	for _, t := range v.targets {
		k := endpointKey{t.backend, t.local}
		ep := op.endpoints[k]
		if ep == nil {
			ep = endpoint(p, v, t)
			op.endpoints[k] = ep
		}
		se.Spec.Endpoints = append(se.Spec.Endpoints, ep)
	}
	se.Spec.SubjectAltNames = subjectAltNames(v)
	return se
}

// subjectAltNames are the SPIFFE identities of the backends the client
// reaches, spiffe://<trust domain of the backend cluster>/ns/<namespace>/sa/<service account>,
// when every backend names its service account (validation requires all
// or none): Istio mTLS then checks that the peer, behind whichever
// east-west gateway, is one of them.
func subjectAltNames(v *view) []string {
	set := map[string]bool{}
	for _, t := range v.targets {
		if t.backend.ServiceAccount == "" {
			return nil
		}
		td := t.cluster.TrustDomain
		if td == "" {
			td = translate.DefaultTrustDomain
		}
		set["spiffe://"+td+"/ns/"+t.backend.Namespace+"/sa/"+t.backend.ServiceAccount] = true
	}
	out := make([]string, 0, len(set))
	for k := range set {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// clusterHostsServiceEntry declares, next to the hostname, one host per
// visible backend cluster (ClusterHost) with the same
// endpoints; each host's DestinationRule puts its cluster first. It has no
// VIP (the hosts are destinations of the hostname's routes, never called
// directly) and only the HTTP ports: traffic shifts and mirrors are HTTP
// routes, and Istio refuses a ServiceEntry with several hosts and a TCP
// port. nil when the hostname has no HTTP port.
//
// When every port is routable its endpoints are the client ServiceEntry's
// own (client), shared: translated objects are never changed afterwards.
func clusterHostsServiceEntry(p *plan, v *view, client *networking.ServiceEntry) *networking.ServiceEntry {
	ports := routablePorts(p.in.Ports)
	if len(ports) == 0 || len(v.subsets) == 0 {
		return nil
	}
	if len(ports) == len(p.in.Ports) {
		return &networking.ServiceEntry{
			TypeMeta:   client.TypeMeta,
			ObjectMeta: translate.ObjectMeta(p.namespace, ClusterObjectName(p.in.Name, "clusters")),
			Spec: networkingapi.ServiceEntry{
				Hosts:           clusterHosts(p, v),
				Ports:           client.Spec.Ports,
				Location:        client.Spec.Location,
				Resolution:      client.Spec.Resolution,
				ExportTo:        client.Spec.ExportTo,
				Endpoints:       client.Spec.Endpoints,
				SubjectAltNames: client.Spec.SubjectAltNames,
			},
		}
	}
	se := clientServiceEntry(p, v)
	se.ObjectMeta = translate.ObjectMeta(p.namespace, ClusterObjectName(p.in.Name, "clusters"))
	se.Spec.Addresses = nil
	se.Spec.Ports = servicePorts(ports)
	keep := map[string]bool{}
	for _, port := range ports {
		keep[portName(port)] = true
	}
	for i, shared := range se.Spec.Endpoints {
		ep := proto.Clone(shared).(*networkingapi.WorkloadEntry) // the client ServiceEntry's, shared
		for name := range ep.Ports {
			if !keep[name] {
				delete(ep.Ports, name)
			}
		}
		se.Spec.Endpoints[i] = ep
	}
	se.Spec.Hosts = clusterHosts(p, v)
	return se
}

// clusterHosts are the per-cluster hosts of the hostname, in subset order.
func clusterHosts(p *plan, v *view) []string {
	out := make([]string, 0, len(v.subsets))
	for _, o := range v.subsets {
		out = append(out, p.clusterHost(o.cluster))
	}
	return out
}

// endpoint is one backend as an endpoint of a client ServiceEntry.
//
// A local backend is its Service FQDN: the sidecar resolves it to the
// ClusterIP, and the port is the Service port (target_port). A remote
// backend is its cluster's east-west gateway on the gateway port (15443) for
// every service port; the gateway routes the mTLS connection by its SNI,
// outbound_.<port>_.<subset>_.<hostname>, without terminating it.
//
// No endpoint carries `network`. Once istiod knows the other networks'
// east-west gateways (meshNetworks, or gateway Services labelled
// topology.istio.io/network: every multi-network install), it replaces an
// endpoint of another network by that network's gateway and gives the
// replacement only Istio's own topology labels
// (pilot/pkg/xds/endpoints/ep_filters.go, EndpointsByNetworkFilter). Our
// remote endpoint already is that gateway; replaced, it would lose the
// mesh-intent.io labels that failoverPriority and the subsets select, and
// the failover order would invert. Without a network the endpoint counts
// as reachable from the proxy's network and is sent as written; a local
// endpoint with the network set would even be forced through the local
// gateway for a proxy whose network is unset.
//
// Locality is set in locality mode only. In priority mode every endpoint
// stays in one locality group, because Istio (1.30+) applies
// failoverPriority to a DNS cluster through the first locality group only;
// endpoints in other groups would be mis-prioritised or dropped.
func endpoint(p *plan, v *view, t target) *networkingapi.WorkloadEntry {
	ep := &networkingapi.WorkloadEntry{Labels: endpointLabels(t.backend.Cluster)}
	if t.local {
		ep.Address = serviceFQDN(t.backend.Service, t.backend.Namespace)
	} else {
		gw := t.cluster.EastWestGateway
		port := uint32(translate.DefaultEastWestPort)
		if gw.Port != 0 {
			port = gw.Port
		}
		ep.Address = gw.Address
		ep.Ports = map[string]uint32{}
		for _, sp := range p.in.Ports {
			ep.Ports[portName(sp)] = port
		}
	}
	if t.backend.Weight != nil {
		ep.Weight = uint32(*t.backend.Weight)
	}
	// Rank r carries rank-le-t for every t in r..tiers-2; see
	// failoverPriority.
	keys := p.rankLabels(FailoverRankLabelPrefix, v.tiers-1)
	for tier := t.rank; tier < v.tiers-1; tier++ {
		ep.Labels[keys[tier]] = v.rankMark()
	}
	// The same, for the order inside each cluster's subset.
	for _, o := range v.subsets {
		o.rankLabels(t.backend.Cluster, v.rankMark(), ep.Labels)
	}
	return ep
}

// endpointLabels are the labels every endpoint carries: its backend
// cluster, for subsets, and the Istio mTLS mode.
func endpointLabels(cluster string) map[string]string {
	return map[string]string{
		EndpointClusterLabel: SubsetName(cluster),
		tlsModeLabel:         tlsModeMutual,
	}
}

// backendServiceEntry gives the east-west gateway of a backend cluster a
// service for the hostname whose only endpoint is the local Service, so its
// AUTO_PASSTHROUGH listener has a cluster for outbound_.<port>_._.<hostname>
// that ends at the local backend.
//
// It lives in the backend's namespace and is exported to the gateway's
// namespace only: no application sidecar sees it, and the gateway prefers
// a service exported to its namespace by name over a public one, so in a
// cluster that is also a client it wins over the client ServiceEntry (which
// lists remote backends too). Istio keeps one service per hostname and
// namespace, hence two namespaces.
func backendServiceEntry(p *plan, b *Backend) *networking.ServiceEntry {
	se := hostnameServiceEntry(p, b.Namespace, BackendObjectName(p.in.Name))
	se.Spec.Endpoints = []*networkingapi.WorkloadEntry{{
		Address: serviceFQDN(b.Service, b.Namespace),
		Labels:  endpointLabels(b.Cluster),
	}}
	se.Spec.ExportTo = []string{p.namespace}
	return se
}

// hostnameServiceEntry is the part every ServiceEntry of the hostname
// shares: its host and VIP, its ports, mesh-internal, DNS resolution.
func hostnameServiceEntry(p *plan, namespace, name string) *networking.ServiceEntry {
	return &networking.ServiceEntry{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "ServiceEntry"),
		ObjectMeta: translate.ObjectMeta(namespace, name),
		Spec: networkingapi.ServiceEntry{
			Hosts:      []string{p.in.Hostname},
			Addresses:  []string{p.vip},
			Ports:      servicePorts(p.in.Ports),
			Location:   networkingapi.ServiceEntry_MESH_INTERNAL,
			Resolution: networkingapi.ServiceEntry_DNS,
		},
	}
}

// backendClusterHostsServiceEntry does the same for every backend
// cluster's own host (ClusterHost), HTTP ports only (see
// clusterHostsServiceEntry). Every cluster's host, not only this
// cluster's: a request for another cluster's host fails over here with that
// host in its SNI, and a gateway without a filter chain for an SNI resets
// the connection. nil when the hostname has no HTTP port.
func backendClusterHostsServiceEntry(p *plan, b *Backend) *networking.ServiceEntry {
	ports := routablePorts(p.in.Ports)
	if len(ports) == 0 {
		return nil
	}
	se := backendServiceEntry(p, b)
	se.ObjectMeta = translate.ObjectMeta(b.Namespace, ClusterObjectName(p.in.Name+virtualDestinationBackendSuffix, "clusters"))
	se.Spec.Addresses = nil
	se.Spec.Ports = servicePorts(ports)
	se.Spec.Hosts = nil
	seen := map[string]bool{}
	for _, other := range p.in.Backends {
		if h := ClusterHost(p.in.Hostname, other.Cluster); !seen[h] {
			seen[h] = true
			se.Spec.Hosts = append(se.Spec.Hosts, h)
		}
	}
	return se
}

// routablePorts are the ports Istio routes by HTTP route: the ones
// traffic shifts and mirrors apply to.
func routablePorts(ports []Port) []Port {
	var out []Port
	for _, p := range ports {
		switch strings.ToUpper(p.Protocol) {
		case "HTTP", "HTTP2", "GRPC":
			out = append(out, p)
		}
	}
	return out
}

// servicePorts are the hostname's ports; target_port becomes the
// ServiceEntry targetPort, the port used on endpoints that do not override
// it (the local Service).
func servicePorts(ports []Port) []*networkingapi.ServicePort {
	out := make([]*networkingapi.ServicePort, 0, len(ports))
	for _, p := range ports {
		sp := &networkingapi.ServicePort{Number: uint32(p.Number), Protocol: p.Protocol, Name: portName(p)}
		if p.TargetPort != nil {
			sp.TargetPort = uint32(*p.TargetPort)
		}
		out = append(out, sp)
	}
	return out
}
