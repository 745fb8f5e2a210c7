package simulation

import (
	"fmt"
	"strings"
	"testing"

	"istio.io/istio/pilot/pkg/model"
	"istio.io/istio/pkg/cluster"
	"istio.io/istio/pkg/network"
)

// ingressGateway is a public entry point as Istio's default install has
// it: the ingress gateway serving HTTP for every host.
const ingressGateway = `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: public, namespace: istio-system}
spec:
  selector: {istio: ingressgateway}
  servers:
  - port: {number: 8080, name: http, protocol: HTTP}
    hosts: ["*"]`

// TestClusterDefaultDeny asks Istio's generated RBAC, for every
// mesh_cluster golden case that writes default_deny, whether a request
// without an identity (a browser on the internet) passes the ingress
// gateway, and whether any caller reaches an in-mesh workload no access
// policy opens. The ingress gateway stays open unless the case removes it
// from default_deny_exempt; in-mesh workloads are closed.
func TestClusterDefaultDeny(t *testing.T) {
	forEachCase(t, "cluster", func(_ *goldenCase, in clusterCase) bool { return in.DefaultDeny }, simulateDefaultDeny)
}

// clusterCase is what the test needs of a mesh_cluster case.
type clusterCase struct {
	Name              string              `json:"name"`
	DefaultDeny       bool                `json:"defaultDeny"`
	DefaultDenyExempt []map[string]string `json:"defaultDenyExempt"`
}

func simulateDefaultDeny(t *testing.T, g *goldenCase, in clusterCase) string {
	c := in.Name
	s := newIstiod(t, g, c, g.objects[c], ingressGateway)
	// nil: the default list, Istio's ingress gateway
	ingressOpen := in.DefaultDenyExempt == nil
	for _, sel := range in.DefaultDenyExempt {
		if len(sel) == 1 && sel["istio"] == "ingressgateway" {
			ingressOpen = true
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# What Istio's RBAC filters (generated from %s.golden.yaml) decide under\n", g.name)
	b.WriteString("# default_deny. `make simulation UPDATE=1` rewrites it.\n")
	anon := request{method: "GET", path: "/", port: 8080}
	open := decide(t, s.rbacFilters(t, s.ingressGateway()), anon)
	fmt.Fprintf(&b, "%s ingress gateway <- %s | %s\n", c, anon, verdict(open))
	if open != ingressOpen {
		t.Errorf("%s: ingress gateway open = %v, want %v (default_deny_exempt %v)", c, open, ingressOpen, in.DefaultDenyExempt)
	}
	// Every exempt selector keeps its workloads open to anyone, and only
	// those: a workload whose labels miss one of the selector's is closed.
	for _, sel := range in.DefaultDenyExempt {
		if len(sel) == 1 && sel["istio"] == "ingressgateway" {
			continue // the ingress gateway, asked above
		}
		for _, ns := range []string{"shop", "istio-system"} {
			open := decide(t, s.rbacFilters(t, s.workload(ns, sel)), anon)
			fmt.Fprintf(&b, "%s %s/%s <- %s | %s\n", c, ns, labelString(sel), anon, verdict(open))
			if !open {
				t.Errorf("%s: a workload in %s with the labels %v, which default_deny_exempt lists, denies %s: the intent keeps it open", c, ns, sel, anon)
			}
			near := map[string]string{}
			for k, v := range sel {
				near[k] = v
			}
			k := sortedKeys(sel)[0]
			near[k] += "-other"
			if decide(t, s.rbacFilters(t, s.workload(ns, near)), anon) {
				t.Errorf("%s: a workload in %s with the labels %v, which no default_deny_exempt selector selects, allows %s", c, ns, near, anon)
			}
		}
	}
	w := s.workload("shop", map[string]string{"app": "catalog"})
	for _, who := range []string{"spiffe://cluster.local/ns/web/sa/frontend", ""} {
		r := anon
		r.principal = who
		ok := decide(t, s.rbacFilters(t, w), r)
		fmt.Fprintf(&b, "%s shop/app=catalog <- %s | %s\n", c, r, verdict(ok))
		if ok {
			t.Errorf("%s: default_deny lets %s reach a workload no access policy opens", c, r)
		}
	}
	return b.String()
}

func verdict(ok bool) string {
	if ok {
		return "ALLOW"
	}
	return "DENY"
}

// ingressGateway is the cluster's ingress gateway proxy.
func (s *istiod) ingressGateway() *model.Proxy {
	labels := map[string]string{"istio": "ingressgateway", "app": "istio-ingressgateway"}
	return s.SetupProxy(&model.Proxy{
		ID: "istio-ingressgateway-0.istio-system", Type: model.Router, ConfigNamespace: "istio-system",
		Labels: labels, IPAddresses: []string{"10.1.0.8"},
		Metadata: &model.NodeMetadata{Namespace: "istio-system", Labels: labels, Network: network.ID(s.self.Network), ClusterID: cluster.ID(s.self.Name)},
	})
}
