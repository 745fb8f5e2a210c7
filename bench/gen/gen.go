// Package gen generates the benchmark's configurations: M intents over a
// set of clusters, as HCL for Terraform and as the translator's intents for
// the floor program and the translator benchmarks. Both come from one
// description, so the provider and the floor write the same objects (the
// bench driver checks that they do).
//
// The mix, per "service" s (a global hostname svc-NNNN.global):
//
//   - one mesh_virtual_destination: a primary backend in cluster s mod N and
//     a failover backend in the next cluster; every 5th service excludes the
//     failover backend for clients on the primary's cloud; every 3rd
//     restricts its clients to env=prod callers in one namespace; every 4th
//     has a second port and explicit failover settings;
//   - one mesh_access_policy on that hostname: callers from a neighbouring
//     namespace everywhere, and every 2nd service a second caller confined
//     to one cluster and one destination cluster;
//   - every 3rd service a mesh_traffic_policy on that hostname: timeout and
//     retries (its VirtualService), and every 6th also a connection pool
//     (the virtual destination's DestinationRule).
//
// plus one mesh_cluster per cluster. M counts every resource, mesh_cluster
// included; services are added until M is reached.
package gen

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/accesspolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/cluster"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/trafficpolicy"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// Cluster is one registered cluster with its topology facts.
type Cluster struct {
	Name        string
	Network     string
	Region      string
	Zone        string
	TrustDomain string
	Cloud       string
	GatewayIP   string
}

// Clusters gives the named clusters a topology: one network each, clouds
// aws, gcp and onprem in turn, regions in pairs.
func Clusters(names []string) []Cluster {
	clouds := []string{"aws", "gcp", "onprem"}
	out := make([]Cluster, len(names))
	for i, n := range names {
		out[i] = Cluster{
			Name:        n,
			Network:     "net-" + n,
			Region:      fmt.Sprintf("region-%d", i/2),
			Zone:        fmt.Sprintf("region-%d%c", i/2, 'a'+rune(i%2)),
			TrustDomain: n + ".mesh",
			Cloud:       clouds[i%len(clouds)],
			GatewayIP:   fmt.Sprintf("203.0.113.%d", 10+i),
		}
	}
	return out
}

// Spec is one generated configuration.
type Spec struct {
	Clusters   []Cluster
	Namespaces []string
	// Mesh are the mesh_cluster intents (schema defaults filled in, as the
	// provider sees them).
	Mesh         []cluster.Intent
	Destinations []virtualdestination.Intent
	Access       []Access
	Traffic      []Traffic
}

// Access is one mesh_access_policy on a virtual destination.
type Access struct {
	Intent      accesspolicy.Intent
	Destination string // hostname of the virtual destination
}

// Traffic is one mesh_traffic_policy on a virtual destination.
type Traffic struct {
	Intent      trafficpolicy.Intent
	Destination string // hostname of the virtual destination
}

// Intents is how many Terraform resources the spec has.
func (s *Spec) Intents() int {
	return len(s.Mesh) + len(s.Destinations) + len(s.Access) + len(s.Traffic)
}

// NamespaceCount is how many backend namespaces services are spread over.
const NamespaceCount = 8

func i64(v int64) *int64 { return &v }

// Generate builds a configuration of m intents over the clusters.
func Generate(m int, clusters []Cluster) *Spec {
	s := &Spec{Clusters: clusters}
	for i := 0; i < NamespaceCount; i++ {
		s.Namespaces = append(s.Namespaces, fmt.Sprintf("ns-%02d", i))
	}
	n := len(clusters)
	for i, c := range clusters {
		if s.Intents() >= m {
			return s
		}
		s.Mesh = append(s.Mesh, cluster.Intent{
			Name:             c.Name,
			IstioNamespace:   translate.DefaultIstioNS,
			MTLSMode:         "STRICT",
			DefaultDeny:      i%2 == 0,
			ExposeEastWest:   true,
			EastWestHosts:    append([]string(nil), translate.DefaultEastWestHosts...),
			EastWestSelector: map[string]string{"istio": "eastwestgateway"},
		})
	}
	for svc := 0; s.Intents() < m; svc++ {
		name := fmt.Sprintf("svc-%04d", svc)
		host := name + ".global"
		ns := s.Namespaces[svc%NamespaceCount]
		callerNS := s.Namespaces[(svc+1)%NamespaceCount]
		primary := clusters[svc%n]
		vd := virtualdestination.Intent{
			Name:      name,
			Hostname:  host,
			Namespace: translate.DefaultIstioNS,
			Ports:     []virtualdestination.Port{{Number: 8080, Protocol: "HTTP"}},
			// As the provider computes it when vip is not set.
			VIP: virtualdestination.VIP(host),
			Backends: []virtualdestination.Backend{
				{Cluster: primary.Name, Namespace: ns, Service: name, Priority: 0},
			},
		}
		if n > 1 {
			b := virtualdestination.Backend{Cluster: clusters[(svc+1)%n].Name, Namespace: ns, Service: name, Priority: 1}
			if svc%5 == 4 {
				b.ExcludeFor = translate.Placement{ClusterSelector: map[string]string{"cloud": primary.Cloud}}
			}
			vd.Backends = append(vd.Backends, b)
		}
		if svc%3 == 2 {
			vd.Clients = virtualdestination.Clients{
				Placement:  translate.Placement{ClusterSelector: map[string]string{"env": "prod"}},
				Namespaces: []string{callerNS},
			}
		}
		if svc%4 == 3 {
			vd.Ports = append(vd.Ports, virtualdestination.Port{Number: 9090, Protocol: "GRPC", TargetPort: i64(9091)})
			vd.Failover = &virtualdestination.Failover{
				Mode:             virtualdestination.FailoverModePriority,
				OutlierDetection: &virtualdestination.OutlierDetection{Consecutive5xxErrors: i64(3), Interval: "5s", BaseEjectionTime: "1m"},
			}
		}
		s.Destinations = append(s.Destinations, vd)
		if s.Intents() >= m {
			break
		}

		ap := accesspolicy.Intent{
			Name: name + "-callers",
			Sources: []accesspolicy.Source{{
				Placement:      translate.Placement{ClusterSelector: map[string]string{"env": "prod"}},
				Namespace:      callerNS,
				ServiceAccount: "client-" + name,
			}},
			Rules: []accesspolicy.Rule{{Methods: []string{"GET", "POST"}, Paths: []string{"/api/*"}, Ports: []int{8080}}},
		}
		if svc%2 == 1 {
			ap.Sources = append(ap.Sources, accesspolicy.Source{
				Placement:           translate.Placement{Clusters: []string{clusters[(svc+2)%n].Name}},
				Namespace:           "batch",
				ServiceAccount:      "reporter",
				DestinationClusters: translate.Placement{Clusters: []string{primary.Name}},
			})
		}
		s.Access = append(s.Access, Access{Intent: ap, Destination: host})
		if s.Intents() >= m || svc%3 != 0 {
			continue
		}

		tp := trafficpolicy.Intent{
			Name:    name + "-resilience",
			Timeout: "3s",
			Retries: &trafficpolicy.Retries{Attempts: 2, PerTryTimeout: "1s", RetryOn: []string{"5xx", "connect-failure"}},
		}
		if svc%6 == 0 {
			tp.ConnectionPool = &trafficpolicy.ConnectionPool{TCP: &trafficpolicy.TCPPool{MaxConnections: 200, ConnectTimeout: "2s"}}
		}
		s.Traffic = append(s.Traffic, Traffic{Intent: tp, Destination: host})
	}
	return s
}

// Registry is the translator's view of the clusters, as the provider
// builds it from the provider block HCL writes.
func (s *Spec) Registry() *translate.Registry {
	var cs []translate.Cluster
	for _, c := range s.Clusters {
		cs = append(cs, translate.Cluster{
			Name: c.Name, Network: c.Network, Region: c.Region, Zone: c.Zone, TrustDomain: c.TrustDomain,
			Labels:          map[string]string{"cloud": c.Cloud, "env": "prod"},
			EastWestGateway: &translate.Gateway{Address: c.GatewayIP, Port: translate.DefaultEastWestPort},
		})
	}
	return translate.NewRegistry(cs...)
}

// Destination returns the virtual destination with a hostname.
func (s *Spec) Destination(host string) virtualdestination.Intent {
	for _, vd := range s.Destinations {
		if vd.Hostname == host {
			return vd
		}
	}
	panic("gen: no virtual destination " + host)
}

// ResourceName is the Terraform resource name of an intent name.
func ResourceName(name string) string { return strings.ReplaceAll(name, "-", "_") }

// HCL renders the configuration, with the provider block reaching the
// clusters through kubeconfig contexts named like the clusters.
func (s *Spec) HCL(kubeconfig string) string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Generated by bench/gen: %d intents over %d clusters.\n", s.Intents(), len(s.Clusters))
	w("terraform {\n  required_providers {\n    mesh = { source = \"mesh-intent/mesh\" }\n  }\n}\n\n")
	w("provider \"mesh\" {\n  clusters = {\n")
	for _, c := range s.Clusters {
		w("    %s = {\n", c.Name)
		w("      kubernetes        = { config_path = %q, config_context = %q }\n", kubeconfig, c.Name)
		w("      network           = %q\n      region            = %q\n      zone              = %q\n", c.Network, c.Region, c.Zone)
		w("      trust_domain      = %q\n      labels            = { cloud = %q, env = \"prod\" }\n", c.TrustDomain, c.Cloud)
		w("      east_west_gateway = { address = %q, port = %d }\n    }\n", c.GatewayIP, translate.DefaultEastWestPort)
	}
	w("  }\n}\n")
	for _, c := range s.Mesh {
		w("\nresource \"mesh_cluster\" %q {\n  name             = %q\n  mtls_mode        = %q\n", ResourceName(c.Name), c.Name, c.MTLSMode)
		w("  default_deny     = %t\n  expose_east_west = %t\n}\n", c.DefaultDeny, c.ExposeEastWest)
	}
	for _, vd := range s.Destinations {
		w("\nresource \"mesh_virtual_destination\" %q {\n", ResourceName(vd.Name))
		w("  name     = %q\n  hostname = %q\n  ports = [\n", vd.Name, vd.Hostname)
		for _, p := range vd.Ports {
			w("    { number = %d, protocol = %q", p.Number, p.Protocol)
			if p.TargetPort != nil {
				w(", target_port = %d", *p.TargetPort)
			}
			w(" },\n")
		}
		w("  ]\n  backends = [\n")
		for _, be := range vd.Backends {
			w("    { cluster = %q, namespace = %q, service = %q, priority = %d", be.Cluster, be.Namespace, be.Service, be.Priority)
			if !be.ExcludeFor.IsZero() {
				w(", exclude_for = %s", placement(be.ExcludeFor, ""))
			}
			w(" },\n")
		}
		w("  ]\n")
		if f := vd.Failover; f != nil {
			o := f.OutlierDetection
			w("  failover = {\n    mode = %q\n    outlier_detection = { consecutive_5xx_errors = %d, interval = %q, base_ejection_time = %q }\n  }\n",
				f.Mode, *o.Consecutive5xxErrors, o.Interval, o.BaseEjectionTime)
		}
		if !vd.Clients.IsZero() || len(vd.Clients.Namespaces) > 0 {
			w("  clients = %s\n", placement(vd.Clients.Placement, "namespaces = "+list(vd.Clients.Namespaces)))
		}
		w("}\n")
	}
	for _, ap := range s.Access {
		vd := s.Destination(ap.Destination)
		w("\nresource \"mesh_access_policy\" %q {\n  name        = %q\n", ResourceName(ap.Intent.Name), ap.Intent.Name)
		w("  destination = { virtual_destination = mesh_virtual_destination.%s.hostname }\n  sources = [\n", ResourceName(vd.Name))
		for _, src := range ap.Intent.Sources {
			extra := fmt.Sprintf("namespace = %q, service_account = %q", src.Namespace, src.ServiceAccount)
			if !src.DestinationClusters.IsZero() {
				extra += ", destination_clusters = " + placement(src.DestinationClusters, "")
			}
			w("    %s,\n", placement(src.Placement, extra))
		}
		w("  ]\n  rules = [\n")
		for _, r := range ap.Intent.Rules {
			var ports []string
			for _, p := range r.Ports {
				ports = append(ports, fmt.Sprint(p))
			}
			w("    { methods = %s, paths = %s, ports = [%s] },\n", list(r.Methods), list(r.Paths), strings.Join(ports, ", "))
		}
		w("  ]\n}\n")
	}
	for _, tp := range s.Traffic {
		vd := s.Destination(tp.Destination)
		in := tp.Intent
		w("\nresource \"mesh_traffic_policy\" %q {\n  name        = %q\n", ResourceName(in.Name), in.Name)
		w("  destination = { virtual_destination = mesh_virtual_destination.%s.hostname }\n", ResourceName(vd.Name))
		if in.Timeout != "" {
			w("  timeout     = %q\n", in.Timeout)
		}
		if r := in.Retries; r != nil {
			w("  retries     = { attempts = %d, per_try_timeout = %q, retry_on = %s }\n", r.Attempts, r.PerTryTimeout, list(r.RetryOn))
		}
		if cp := in.ConnectionPool; cp != nil && cp.TCP != nil {
			w("  connection_pool = { tcp = { max_connections = %d, connect_timeout = %q } }\n", cp.TCP.MaxConnections, cp.TCP.ConnectTimeout)
		}
		w("}\n")
	}
	return b.String()
}

func list(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// placement renders a placement object, with extra attributes appended.
func placement(p translate.Placement, extra string) string {
	var parts []string
	if len(p.Clusters) > 0 {
		parts = append(parts, "clusters = "+list(p.Clusters))
	}
	if len(p.ClusterSelector) > 0 {
		keys := make([]string, 0, len(p.ClusterSelector))
		for k := range p.ClusterSelector {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var kv []string
		for _, k := range keys {
			kv = append(kv, fmt.Sprintf("%s = %q", k, p.ClusterSelector[k]))
		}
		parts = append(parts, "cluster_selector = { "+strings.Join(kv, ", ")+" }")
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	return "{ " + strings.Join(parts, ", ") + " }"
}
