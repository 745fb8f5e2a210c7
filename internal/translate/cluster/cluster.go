package cluster

import (
	"maps"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"

	"fmt"
	"hash/fnv"
	"sort"
	"strings"

	networkingapi "istio.io/api/networking/v1alpha3"
	securityapi "istio.io/api/security/v1beta1"
	typev1beta1 "istio.io/api/type/v1beta1"
	networking "istio.io/client-go/pkg/apis/networking/v1"
	security "istio.io/client-go/pkg/apis/security/v1"
)

// Intent is mesh_cluster: one cluster joining the mesh. Its objects
// go to that cluster only, in its Istio root namespace.
type Intent struct {
	// Name is the cluster's key in the provider's registry.
	Name           string `json:"name"`
	IstioNamespace string `json:"istioNamespace"`
	// MTLSMode is the mesh-wide PeerAuthentication mode; empty emits none.
	MTLSMode    string `json:"mtlsMode,omitempty"`
	DefaultDeny bool   `json:"defaultDeny,omitempty"`
	// DefaultDenyExempt selects, by labels, the workloads DefaultDeny
	// leaves open to every caller (the ingress gateways); nil means
	// DefaultDenyExempt, an empty list none.
	DefaultDenyExempt []map[string]string `json:"defaultDenyExempt,omitempty"`
	// ExposeEastWest emits the Gateway that lets other networks reach this
	// cluster's services through its east-west gateway.
	ExposeEastWest bool `json:"exposeEastWest,omitempty"`
	// EastWestHosts are the hosts the east-west Gateway passes through.
	EastWestHosts []string `json:"eastWestHosts,omitempty"`
	// EastWestSelector selects the east-west gateway pods.
	EastWestSelector map[string]string `json:"eastWestSelector,omitempty"`
}

// Names of the objects mesh_cluster owns in the Istio root namespace.
const (
	EastWestGatewayName  = "mesh-cross-network"
	MeshPeerAuthName     = "default"
	MeshDefaultDenyName  = "mesh-default-deny"
	eastWestPortName     = "tls"
	defaultEastWestLabel = "eastwestgateway"
)

// DefaultDenyExempt are the workloads default_deny leaves open unless the
// intent says otherwise: the ingress gateway of Istio's default install.
// A mesh-wide deny-all applies to gateway workloads too, so without it
// every public entry point would be closed along with in-mesh calls.
var DefaultDenyExempt = []map[string]string{{"istio": "ingressgateway"}}

// DefaultDenyExemptPrefix starts the name of the AuthorizationPolicy that
// keeps one exempt workload selector open.
const DefaultDenyExemptPrefix = "mesh-default-deny-exempt-"

// DefaultEastWestSelector matches the gateway Istio's multi-network install
// guide deploys (istio: eastwestgateway).
var DefaultEastWestSelector = map[string]string{"istio": defaultEastWestLabel}

// MTLSModes are the PeerAuthentication modes mesh_cluster accepts.
var MTLSModes = []string{"STRICT", "PERMISSIVE", "DISABLE"}

// Translate returns the bootstrap objects of one cluster.
func Translate(in Intent, reg *translate.Registry) ([]translate.Object, error) {
	c := reg.Cluster(in.Name)
	if c == nil {
		return nil, translate.Errorf(translate.Root("name"), "Unknown cluster",
			"%s Add it to the provider block or fix the name.", reg.UnknownCluster(in.Name))
	}
	if in.ExposeEastWest && in.MTLSMode == "DISABLE" {
		return nil, translate.Errorf(translate.Root("mtls_mode"), "Plaintext behind the east-west gateway",
			"mtls_mode = \"DISABLE\" with expose_east_west = true: the east-west gateway passes other clusters' Istio mTLS through (AUTO_PASSTHROUGH) to sidecars that would accept only plaintext, so no cross-cluster call could succeed. Use STRICT or PERMISSIVE, or stop exposing the cluster.")
	}
	if gw := c.EastWestGateway; in.ExposeEastWest && gw != nil && !gw.HostsUnknown && len(in.EastWestHosts) > 0 {
		for _, h := range gw.PassedHosts() {
			if !translate.HostCovered(h, in.EastWestHosts) {
				return nil, translate.Errorf(translate.Root("east_west_hosts"), "East-west hosts narrower than the registry",
					"The provider block says cluster %q's east-west gateway passes %s (east_west_gateway.hosts), but east_west_hosts (%s) does not cover %s: virtual destinations planned against the registry would be reset at the gateway. Make the two lists agree.",
					c.Name, strings.Join(gw.PassedHosts(), ", "), strings.Join(in.EastWestHosts, ", "), h)
			}
		}
	}
	ns := in.IstioNamespace
	if ns == "" {
		ns = translate.DefaultIstioNS
	}
	var out []translate.Object
	if in.ExposeEastWest {
		out = append(out, translate.Object{Cluster: c.Name, Resource: clusterEastWestGateway(c, ns, in)})
	}
	if in.MTLSMode != "" {
		out = append(out, translate.Object{Cluster: c.Name, Resource: clusterPeerAuthentication(ns, in.MTLSMode)})
	}
	if in.DefaultDeny {
		out = append(out, translate.Object{Cluster: c.Name, Resource: clusterDefaultDeny(ns)})
		exempt := in.DefaultDenyExempt
		if exempt == nil {
			exempt = DefaultDenyExempt
		}
		seen := map[string]bool{}
		for i, sel := range exempt {
			if len(sel) == 0 {
				return nil, translate.Errorf(translate.Root("default_deny_exempt").Index(i), "Empty selector",
					"An exempt workload selector needs at least one label; an empty one would select every workload and undo default_deny.")
			}
			ap := clusterDefaultDenyExempt(ns, sel)
			if seen[ap.Name] {
				continue
			}
			seen[ap.Name] = true
			out = append(out, translate.Object{Cluster: c.Name, Resource: ap})
		}
	}
	translate.Sort(out)
	return out, nil
}

// clusterEastWestGateway exposes the cluster's services to other networks:
// TLS with AUTO_PASSTHROUGH on the east-west gateway routes mTLS traffic by
// its SNI without terminating it.
func clusterEastWestGateway(c *translate.Cluster, ns string, in Intent) *networking.Gateway {
	port, portName := uint32(translate.DefaultEastWestPort), eastWestPortName
	if gw := c.EastWestGateway; gw != nil {
		if gw.Port != 0 {
			port = gw.Port
		}
		// The Gateway server binds the pods' port; clients in other
		// clusters dial the Service (load balancer) port, gw.Port.
		if gw.TargetPort != 0 {
			port = gw.TargetPort
		}
		if gw.PortUnknown {
			portName = translate.Unknown("east_west_gateway.port")
		}
	}
	hosts := in.EastWestHosts
	if len(hosts) == 0 {
		hosts = c.EastWestGateway.PassedHosts()
	}
	selector := in.EastWestSelector
	if len(selector) == 0 {
		selector = DefaultEastWestSelector
	}
	return &networking.Gateway{
		TypeMeta:   translate.TypeMeta(translate.NetworkingV1, "Gateway"),
		ObjectMeta: translate.ObjectMeta(ns, EastWestGatewayName),
		Spec: networkingapi.Gateway{
			Selector: maps.Clone(selector),
			Servers: []*networkingapi.Server{{
				Port:  &networkingapi.Port{Number: port, Name: portName, Protocol: "TLS"},
				Tls:   &networkingapi.ServerTLSSettings{Mode: networkingapi.ServerTLSSettings_AUTO_PASSTHROUGH},
				Hosts: append([]string(nil), hosts...),
			}},
		},
	}
}

// clusterPeerAuthentication is the mesh-wide mTLS mode: a PeerAuthentication
// without selector in the root namespace.
func clusterPeerAuthentication(ns, mode string) *security.PeerAuthentication {
	return &security.PeerAuthentication{
		TypeMeta:   translate.TypeMeta(translate.SecurityV1, "PeerAuthentication"),
		ObjectMeta: translate.ObjectMeta(ns, MeshPeerAuthName),
		Spec: securityapi.PeerAuthentication{
			Mtls: &securityapi.PeerAuthentication_MutualTLS{
				Mode: securityapi.PeerAuthentication_MutualTLS_Mode(securityapi.PeerAuthentication_MutualTLS_Mode_value[mode]),
			},
		},
	}
}

// clusterDefaultDeny is an ALLOW policy with no rules in the root namespace:
// it matches nothing, so every workload denies what no other policy allows.
func clusterDefaultDeny(ns string) *security.AuthorizationPolicy {
	return &security.AuthorizationPolicy{
		TypeMeta:   translate.TypeMeta(translate.SecurityV1, "AuthorizationPolicy"),
		ObjectMeta: translate.ObjectMeta(ns, MeshDefaultDenyName),
	}
}

// clusterDefaultDenyExempt allows every request to the workloads selected
// by sel: an ALLOW policy with one empty rule, in the root namespace, where
// a selector applies to matching workloads of every namespace. ALLOW
// policies add up, so it opens exactly those workloads. East-west gateways
// need none: Istio builds AUTO_PASSTHROUGH filter chains without
// authorization (pilot/pkg/networking/core/gateway.go).
func clusterDefaultDenyExempt(ns string, sel map[string]string) *security.AuthorizationPolicy {
	keys := make([]string, 0, len(sel))
	for k := range sel {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := fnv.New32a()
	for _, k := range keys {
		h.Write([]byte(k + "=" + sel[k] + "\n"))
	}
	return &security.AuthorizationPolicy{
		TypeMeta:   translate.TypeMeta(translate.SecurityV1, "AuthorizationPolicy"),
		ObjectMeta: translate.ObjectMeta(ns, fmt.Sprintf("%s%08x", DefaultDenyExemptPrefix, h.Sum32())),
		Spec: securityapi.AuthorizationPolicy{
			Selector: &typev1beta1.WorkloadSelector{MatchLabels: maps.Clone(sel)},
			Action:   securityapi.AuthorizationPolicy_ALLOW,
			Rules:    []*securityapi.Rule{{}},
		},
	}
}
