package simulation

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"

	clusterv3 "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"sigs.k8s.io/yaml"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/cluster"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/routing"
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
	tpFeatures
	tpRoute
	tpConnections
	Name    string `json:"name"`
	Sources struct {
		placement
		Namespaces     []string          `json:"namespaces"`
		WorkloadLabels map[string]string `json:"workloadLabels"`
	} `json:"sources"`
	TrafficShift []tpTarget `json:"trafficShift"`
	Mirror       *tpTarget  `json:"mirror"`
}

// routeless reports whether the statement gives the policy no route of
// its own: it only configures the destination's connections (a pool,
// load balancing), which Istio applies to the Envoy cluster.
func routeless(st routing.Route) bool {
	return st.Shift == nil && st.Mirror == nil && st.Timeout == "" && st.Retries == "" && st.Fault == ""
}

// routeOf reports whether Envoy route name carries policy: its own route,
// or an overlap of several composed policies ("a+b").
func routeOf(name, policy string) bool {
	return slices.Contains(strings.Split(name, "+"), policy)
}

// tpTarget is a shift or mirror target: a cluster, the source's own
// cluster (local), or a subset of pods by labels.
type tpTarget struct {
	Cluster string            `json:"cluster"`
	Local   bool              `json:"local"`
	Subset  string            `json:"subset"`
	Labels  map[string]string `json:"labels"`
	Weight  int               `json:"weight"`
	Percent *float64          `json:"percent"`
}

type tpDestination struct {
	VirtualDestination     string              `json:"virtualDestination"`
	VirtualDestinationName string              `json:"virtualDestinationName"`
	BackendClusters        []string            `json:"backendClusters"`
	ClientBackends         map[string][]string `json:"clientBackends"`
	ClientNamespaces       []string            `json:"clientNamespaces"`
	Service                string              `json:"service"`
	Namespace              string              `json:"namespace"`
}

// sourceClusters are the clusters whose sidecars the intent's policy
// routes: its sources (none: every cluster), among the destination's
// clients when the destination names them.
func (p tpPolicy) sourceClusters(g *goldenCase, d tpDestination) map[string]bool {
	out := map[string]bool{}
	for _, c := range g.registry {
		if !p.Sources.placement.selects(c) {
			continue
		}
		if d.ClientBackends != nil {
			if _, ok := d.ClientBackends[c.Name]; !ok {
				continue
			}
		}
		out[c.Name] = true
	}
	return out
}

// envoyCluster is the Envoy cluster the intent sends a target to, from a
// sidecar of cluster source: a virtual destination's per-cluster host, or
// a subset of the service (named after the cluster, or the intent's).
func (d tpDestination) envoyCluster(source string, x tpTarget) string {
	c := x.Cluster
	if x.Local {
		c = source
	}
	if d.VirtualDestination != "" && x.Subset == "" {
		return fmt.Sprintf("outbound|8080||%s.cluster.%s", c, d.VirtualDestination)
	}
	if x.Subset != "" {
		return fmt.Sprintf("outbound|8080|%s|%s", x.Subset, d.host())
	}
	return fmt.Sprintf("outbound|8080|%s|%s", c, d.host())
}

// expectedWeights is what the intent says a source cluster's requests
// get: "<weight>% <Envoy cluster>" by cluster, in Istio's order (the
// intent's, targets merged); "" when the policy shifts nothing.
func (p tpPolicy) expectedWeights(source string, d tpDestination) string {
	if len(p.TrafficShift) == 0 {
		return ""
	}
	weight := map[string]int{}
	var order []string
	for _, x := range p.TrafficShift {
		c := d.envoyCluster(source, x)
		if _, ok := weight[c]; !ok {
			order = append(order, c)
		}
		weight[c] += x.Weight
	}
	var parts []string
	for _, c := range order {
		if weight[c] > 0 {
			parts = append(parts, fmt.Sprintf("%d%% %s", weight[c], c))
		}
	}
	return strings.Join(parts, ", ")
}

// withBackends gives a virtual destination whose backend clusters the
// case leaves unknown (known only after apply) a backend in every cluster.
func (d tpDestination) withBackends(g *goldenCase) tpDestination {
	if d.VirtualDestination != "" && len(d.BackendClusters) == 0 {
		for _, c := range g.registry {
			d.BackendClusters = append(d.BackendClusters, c.Name)
		}
	}
	return d
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

type pd struct {
	p tpPolicy
	d tpDestination
}

func simulateTrafficPolicy(t *testing.T, g *goldenCase, tc tpCase) string {
	pds := []pd{{tc.Policy, tc.Destination.withBackends(g)}}
	if len(tc.Compose) > 0 {
		pds = nil
		for _, c := range tc.Compose {
			pds = append(pds, pd{c.Policy, c.Destination.withBackends(g)})
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# What Istio's xDS generation makes of %s.golden.yaml: per source cluster, the\n", g.name)
	b.WriteString("# routes a sidecar in the policy's source namespace gets for the destination, each with\n")
	b.WriteString("# its weighted Envoy clusters and mirror; for a cluster subset of a service, its\n")
	b.WriteString("# endpoints by Envoy priority. `make simulation UPDATE=1` rewrites it.\n")
	stated := g.tpRoutings(t, pds)
	if g.planned != nil && len(pds) == 1 {
		// An example's case: Istio judges the words its plan showed.
		stated = []routing.Traffic{plannedTraffic(t, g.planned)}
		// ... and the requests it says the policy takes.
		pds[0].p = withPlannedConditions(t, pds[0].p, g.planned)
	}
	clusters := map[string]bool{}
	for _, st := range stated {
		for c := range st.Sources {
			clusters[c] = true
		}
	}
	for c := range g.objects {
		clusters[c] = true
	}
	for _, x := range pds {
		for c := range x.p.sourceClusters(g, x.d) {
			clusters[c] = true
		}
	}
	for _, c := range sortedKeys(clusters) {
		s := newPolicyIstiod(t, g, c, pds[0].d, policyLabels(pds))
		printed := map[string]bool{} // rows, once each when policies compose
		for k, x := range pds {
			isSource := x.p.sourceClusters(g, x.d)[c]
			st, isStated := stated[k].Sources[c]
			ns := "default"
			switch {
			case len(x.p.Sources.Namespaces) > 0:
				ns = x.p.Sources.Namespaces[0]
			case len(x.d.ClientNamespaces) > 0:
				ns = x.d.ClientNamespaces[0] // where the destination exists
			}
			proxy := s.sidecar(ns)
			host := x.d.host()
			if len(x.p.Sources.WorkloadLabels) > 0 {
				// A sidecar without the workload labels is no source.
				if vh := findVirtualHost(s.Routes(proxy), host); vh != nil {
					for _, r := range vh.Routes {
						if routeOf(r.Name, x.p.Name) {
							t.Errorf("%s: Istio routes requests of a sidecar in %s without the workload labels %v by policy %s (%s); the intent applies it only to workloads with those labels", c, ns, x.p.Sources.WorkloadLabels, x.p.Name, describeRoute(t, "", r, nil))
						}
					}
				}
				for k, v := range x.p.Sources.WorkloadLabels {
					proxy.Labels[k] = v
					proxy.Metadata.Labels[k] = v
				}
				proxy = s.SetupProxy(proxy)
			}
			if len(x.p.Sources.Namespaces) > 0 {
				if vh := findVirtualHost(s.Routes(s.sidecar("not-a-source")), host); vh != nil {
					for _, r := range vh.Routes {
						if routeOf(r.Name, x.p.Name) {
							t.Errorf("%s: Istio routes requests from namespace not-a-source by policy %s; the intent's sources are namespaces %v", c, x.p.Name, x.p.Sources.Namespaces)
						}
					}
				}
			}
			clusters := map[string]bool{}
			for _, cl := range s.Clusters(proxy) {
				clusters[cl.Name] = true
			}
			vh := findVirtualHost(s.Routes(proxy), host)
			if vh == nil {
				if isSource {
					t.Errorf("%s: a sidecar in %s has no routes for %s; the intent makes %s a source of %s", c, ns, host, c, x.p.Name)
				}
				if isStated {
					t.Errorf("%s: a sidecar in %s has no routes for %s; the routing statement (the plan) makes %s a source of %s", c, ns, host, c, x.p.Name)
				}
				continue
			}
			envoyClusters := map[string]bool{}
			for _, cl := range s.Clusters(proxy) {
				envoyClusters[cl.Name] = true
			}
			applied := false
			var own []*route.Route // the routes named after the policy alone
			var cl *clusterv3.Cluster
			for _, x := range s.Clusters(proxy) {
				if x.Name == fmt.Sprintf("outbound|8080||%s", host) {
					cl = x
				}
			}
			if want := loadBalancerOf(pds); isStated && cl != nil && cl.GetLbPolicy().String() != want {
				// A policy that sets no load_balancer leaves Istio's
				// default, unless another policy on the destination sets one.
				t.Errorf("%s (%s) -> %s: Envoy balances with %s; the policies on the destination ask for %s", c, ns, host, cl.GetLbPolicy(), want)
			}
			if isStated && x.p.setsConnections() {
				// The policy acts through the DestinationRule: the
				// sidecar's Envoy cluster for the host carries its pool
				// and load balancing.
				row := fmt.Sprintf("%s (%s) -> %s connections", c, ns, host)
				described, ok := x.p.checkConnections(t, row+" of policy "+x.p.Name, cl)
				fmt.Fprintf(&b, "%-70s | %s\n", row, described)
				if routeless(st) {
					applied = ok
				}
			}
			for _, r := range vh.Routes {
				if !routeOf(r.Name, x.p.Name) && !(len(pds) > 1 || r.Name == "default") {
					continue
				}
				row := fmt.Sprintf("%s (%s) -> %s route %s%s", c, ns, host, orNone(r.Name), matchString(r))
				described := describeRoute(t, row, r, envoyClusters)
				if f := describeFeatures(t, r); f != "" {
					described += ", " + f
				}
				if line := fmt.Sprintf("%-70s | %s\n", row, described); !printed[line] {
					printed[line] = true
					b.WriteString(line)
				}
				if !routeOf(r.Name, x.p.Name) {
					continue
				}
				applied = true
				if !isSource {
					t.Errorf("%s: Istio routes this cluster's requests for %s by policy %s; the intent's sources do not include %s", c, host, x.p.Name, c)
					continue
				}
				x.p.checkFeatures(t, row, r)
				a := r.GetRoute()
				if r.Name == x.p.Name {
					// Its own route (an overlap of composed policies
					// takes several policies' settings).
					x.p.checkRoute(t, row, a)
					own = append(own, r)
					if isStated {
						checkStatedSettings(t, c, host, st, r)
					}
				}
				if isStated {
					checkStatedRoute(t, g, c, host, x.d, st, a)
				}
				if want := x.p.expectedWeights(c, x.d); want != "" && weightsOf(a) != want {
					t.Errorf("source %s: Istio sends requests for %s to %s; the intent says %s", c, host, weightsOf(a), want)
				}
				if m := x.p.Mirror; m != nil {
					want := x.d.envoyCluster(c, *m)
					got, pct := "", 0.0
					for _, mp := range a.GetRequestMirrorPolicies() {
						got, pct = mp.Cluster, mirrorPercent(mp)
					}
					if got != want {
						t.Errorf("source %s: Istio mirrors requests for %s to %q; the intent mirrors them to %s", c, host, got, want)
					}
					wantPct := 100.0
					if m.Percent != nil {
						wantPct = *m.Percent
					}
					if math.Abs(pct-wantPct) > 1e-9 {
						t.Errorf("source %s: Istio mirrors %g%% of the requests for %s; the intent mirrors %g%%", c, pct, host, wantPct)
					}
				}
			}
			if len(own) > 0 {
				x.p.checkMatches(t, fmt.Sprintf("%s (%s) -> %s policy %s", c, ns, host, x.p.Name), own, len(pds) == 1)
			}
			if applied != isStated {
				t.Errorf("source %s: Istio applies policy %s to a sidecar in %s = %v; the routing statement (the plan) states it there = %v", c, x.p.Name, ns, applied, isStated)
			}
			if isSource && !applied {
				t.Errorf("source %s: a sidecar in %s gets no route of policy %s for %s; the intent makes it a source", c, ns, x.p.Name, host)
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
					res, where := s.passThrough(t, "istio-system", sni, 15443) // Istio's cross-network-gateway
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

// newPolicyIstiod is a fake istiod for cluster self with the case's
// objects and the destination as the mesh has it, in a mesh with a network
// per cluster (withNetworks):
//   - a service: its Kubernetes Service in every cluster of the registry,
//     with a pod of version v1 and one with each label set the policies'
//     subsets select (a canary's v2, a mirror's v3), which istiod sees
//     through its multi-cluster registries, each endpoint labelled by its
//     cluster;
//   - a virtual destination: its own objects, translated by the provider
//     from the virtual destination the case names (vdOf), and in each
//     backend cluster the backend's Service and pods.
func newPolicyIstiod(t *testing.T, g *goldenCase, self string, d tpDestination, versions []map[string]string) *istiod {
	t.Helper()
	docs := []string{crossNetworkGateway}
	kube := map[cluster.ID]string{}
	service, namespace := d.Service, d.Namespace
	backends := map[string]bool{}
	if d.VirtualDestination != "" {
		vd := vdOf(d)
		out := oracle.TranslateIntent(t, "virtual-destination", vd, g.oracleRegistry())
		if out.Failed != "" {
			t.Fatalf("the virtual destination %s the case names does not translate: %v\n%s", d.VirtualDestination, out.Failed, vd)
		}
		docs = append(docs, istioDocs(out.Objects[self])...)
		service, namespace = vdBackend(d)
		for _, c := range d.BackendClusters {
			backends[c] = true
		}
	} else {
		for _, c := range g.registry {
			backends[c.Name] = true
		}
	}
	for i, c := range g.registry {
		if !backends[c.Name] {
			continue
		}
		objs := []string{fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[1]s, namespace: %[2]s, labels: {app: %[1]s}}
spec:
  clusterIP: 10.96.0.%[3]d
  selector: {app: %[1]s}
  ports: [{name: http, port: 8080, protocol: TCP}]`, service, namespace, i+1)}
		var eps []string
		for j, extra := range append([]map[string]string{{"version": "v1"}}, versions...) {
			labels := map[string]string{"app": service, "version": "v1", "security.istio.io/tlsMode": "istio"}
			for k, v := range extra {
				labels[k] = v
			}
			ip := fmt.Sprintf("10.%d.%d.1", i+1, j)
			objs = append(objs, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: %[1]s-%[3]d, namespace: %[2]s, labels: {%[4]s}}
spec: {nodeName: node-%[5]s}
status: {podIP: %[6]s, phase: Running, conditions: [{type: Ready, status: "True"}]}`, service, namespace, j, yamlLabels(labels), c.Name, ip))
			eps = append(eps, fmt.Sprintf(`- addresses: [%[1]s]
  conditions: {ready: true}
  targetRef: {kind: Pod, name: %[2]s-%[3]d, namespace: %[4]s}`, ip, service, j, namespace))
		}
		objs = append(objs, fmt.Sprintf(`apiVersion: discovery.k8s.io/v1
kind: EndpointSlice
metadata: {name: %[1]s-%[3]s, namespace: %[2]s, labels: {kubernetes.io/service-name: %[1]s}}
addressType: IPv4
endpoints:
%[4]s
ports: [{name: http, port: 8080, protocol: TCP}]`, service, namespace, c.Name, strings.Join(eps, "\n")))
		kube[cluster.ID(c.Name)] = strings.Join(objs, "\n---\n")
	}
	return newIstiodWith(t, g, self, mergeApplied(t, append(docs, istioDocs(g.objects[self])...)), kube)
}

// mergeApplied is the objects as the cluster holds them: a policy that
// writes into the virtual destination's own object (a connection pool in
// its DestinationRule) applies its fields to that object by server-side
// apply, so a later document with the same kind, namespace and name is
// merged into the first (maps deeply, anything else replaced).
func mergeApplied(t *testing.T, docs []string) []string {
	t.Helper()
	type id struct{ kind, ns, name string }
	var order []id
	objs := map[id]map[string]any{}
	var out []string
	for _, d := range docs {
		var o map[string]any
		if err := yaml.Unmarshal([]byte(d), &o); err != nil || o == nil {
			out = append(out, d)
			continue
		}
		md, _ := o["metadata"].(map[string]any)
		k := id{fmt.Sprint(o["kind"]), fmt.Sprint(md["namespace"]), fmt.Sprint(md["name"])}
		if prev, ok := objs[k]; ok {
			mergeMaps(prev, o)
			continue
		}
		objs[k] = o
		order = append(order, k)
	}
	for _, k := range order {
		b, err := yaml.Marshal(objs[k])
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

func mergeMaps(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				mergeMaps(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// vdOf is the virtual destination a policy case names, as a
// mesh_virtual_destination intent: its hostname on HTTP 8080, a backend
// in each backend cluster (vdBackend), the clients and client namespaces
// the case gives, each client excluded from the backends it does not use.
func vdOf(d tpDestination) []byte {
	name := d.VirtualDestinationName
	if name == "" {
		name = strings.Split(d.VirtualDestination, ".")[0]
	}
	svc, ns := vdBackend(d)
	var backends []map[string]any
	for i, c := range d.BackendClusters {
		b := map[string]any{"cluster": c, "namespace": ns, "service": svc, "priority": i}
		var excluded []string
		for _, client := range oracle.SortedKeys(d.ClientBackends) {
			uses := false
			for _, x := range d.ClientBackends[client] {
				uses = uses || x == c
			}
			if !uses {
				excluded = append(excluded, client)
			}
		}
		if len(excluded) > 0 {
			b["excludeFor"] = map[string]any{"clusters": excluded}
		}
		backends = append(backends, b)
	}
	in := map[string]any{
		"name": name, "hostname": d.VirtualDestination,
		"ports":    []any{map[string]any{"number": 8080, "protocol": "HTTP"}},
		"backends": backends,
	}
	clients := map[string]any{}
	if len(d.ClientBackends) > 0 {
		clients["clusters"] = oracle.SortedKeys(d.ClientBackends)
	}
	if len(d.ClientNamespaces) > 0 {
		clients["namespaces"] = d.ClientNamespaces
	}
	if len(clients) > 0 {
		in["clients"] = clients
	}
	raw, err := json.Marshal(in)
	if err != nil {
		panic(err)
	}
	return raw
}

// vdBackend is the Service behind a virtual destination in each backend
// cluster: the virtual destination's name, in namespace backends.
func vdBackend(d tpDestination) (string, string) {
	name := d.VirtualDestinationName
	if name == "" {
		name = strings.Split(d.VirtualDestination, ".")[0]
	}
	return name, "backends"
}

func yamlLabels(m map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		parts = append(parts, fmt.Sprintf("%s: %q", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// weightsOf is a route's weighted clusters as expectedWeights writes them.
func weightsOf(a *route.RouteAction) string {
	if wc := a.GetWeightedClusters(); wc != nil {
		var parts []string
		for _, c := range wc.Clusters {
			parts = append(parts, fmt.Sprintf("%d%% %s", c.GetWeight().GetValue(), c.Name))
		}
		return strings.Join(parts, ", ")
	}
	return "100% " + a.GetCluster()
}

// matchString is a route's match, as the table shows it.
func matchString(r *route.Route) string {
	m := r.GetMatch()
	var parts []string
	switch {
	case m.GetPrefix() != "" && m.GetPrefix() != "/":
		parts = append(parts, "prefix "+m.GetPrefix())
	case m.GetPath() != "":
		parts = append(parts, "path "+m.GetPath())
	case m.GetSafeRegex() != nil:
		parts = append(parts, "regex "+m.GetSafeRegex().GetRegex())
	}
	for _, h := range m.GetHeaders() {
		v := h.GetStringMatch().GetExact() + h.GetStringMatch().GetPrefix() + h.GetStringMatch().GetSafeRegex().GetRegex()
		parts = append(parts, h.Name+"="+v)
	}
	if len(parts) == 0 {
		return ""
	}
	return " [" + strings.Join(parts, " ") + "]"
}

// policyLabels are the pod labels the policies' subsets select (a
// version canary's v2, a mirror's v3): the service gets a pod with each.
func policyLabels(pds []pd) []map[string]string {
	var out []map[string]string
	for _, x := range pds {
		ts := append([]tpTarget(nil), x.p.TrafficShift...)
		if x.p.Mirror != nil {
			ts = append(ts, *x.p.Mirror)
		}
		for _, t := range ts {
			if len(t.Labels) > 0 {
				out = append(out, t.Labels)
			}
		}
	}
	return out
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
		if clusters != nil && !clusters[name] {
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
		seen := map[uint32]map[string]bool{}
		var prios []uint32
		for _, lle := range cla.Endpoints {
			if _, ok := byPrio[lle.Priority]; !ok {
				prios = append(prios, lle.Priority)
			}
			for _, e := range lle.LbEndpoints {
				addr := e.GetEndpoint().GetAddress().GetSocketAddress().GetAddress()
				name := g.addressCluster(addr)
				if seen[lle.Priority][name] {
					continue // another pod of that cluster
				}
				if seen[lle.Priority] == nil {
					seen[lle.Priority] = map[string]bool{}
				}
				seen[lle.Priority][name] = true
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

// addressCluster names the cluster of an endpoint address: a pod address
// 10.<registry index+1>.x.x, or a cluster's east-west gateway.
func (g *goldenCase) addressCluster(addr string) string {
	for i, c := range g.registry {
		if strings.HasPrefix(addr, fmt.Sprintf("10.%d.", i+1)) || (c.EastWestGateway != nil && (c.EastWestGateway.Address == addr || c.gatewayAddr() == addr)) {
			return c.Name
		}
	}
	return "?" + addr
}
