package analyze

import (
	"fmt"
	"sort"
	"strings"

	"github.com/mesh-intent/terraform-provider-mesh/tools/istio/internal/oracle"
)

// proxyImage is the sidecar image the injected pods name; the analyzers
// compare it with the control plane's version only when one is running.
const proxyImage = "docker.io/istio/proxyv2:1.31.1"

// fixture is what a real cluster of the case holds besides our objects:
// Istio's gateways (the ingress gateway, the east-west gateway and the
// cross-network-gateway Gateway of Istio's multi-network install), and the
// workloads the intent names, in namespaces with sidecar injection, as
// injected pods (the istio-proxy container and the sidecar.istio.io/status
// annotation the injector adds), with their Services.
func fixture(in caseInput, cluster string) []string {
	var docs []string
	namespaces := map[string]bool{"istio-system": true}
	services := map[string]bool{} // namespace/name
	pods := map[string]bool{}
	// versionedPod adds an injected pod of app in ns, with version v1 or
	// the extra labels (a canary's version).
	versionedPod := func(ns, app string, extra map[string]string) {
		namespaces[ns] = true
		labels := map[string]string{"app": app, "version": "v1", "security.istio.io/tlsMode": "istio"}
		for k, v := range extra {
			labels[k] = v
		}
		var parts []string
		for k, v := range labels {
			parts = append(parts, fmt.Sprintf("%s: %q", k, v))
		}
		sort.Strings(parts)
		id := ns + "/" + strings.Join(parts, ",")
		if pods[id] {
			return
		}
		pods[id] = true
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata:
  name: %[2]s-%[4]d
  namespace: %[1]s
  labels: {%[5]s}
  annotations:
    sidecar.istio.io/status: '{"initContainers":["istio-init"],"containers":["istio-proxy"],"volumes":["istio-envoy"],"imagePullSecrets":null}'
spec:
  serviceAccountName: %[2]s
  containers:
  - {name: %[2]s, image: example.com/%[2]s:1}
  - {name: istio-proxy, image: %[3]s}`, ns, app, proxyImage, len(pods), strings.Join(parts, ", ")))
	}
	pod := func(ns, app string) { versionedPod(ns, app, nil) }
	service := func(ns, name string, ports []string) {
		if services[ns+"/"+name] {
			return
		}
		services[ns+"/"+name] = true
		pod(ns, name)
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: %[2]s, namespace: %[1]s, labels: {app: %[2]s}}
spec:
  selector: {app: %[2]s}
  ports:
%[3]s`, ns, name, strings.Join(ports, "\n")))
	}

	// The virtual destination's backends running here, and its clients.
	var vdPorts []string
	for _, p := range in.Intent.Ports {
		port := p.Number
		if p.TargetPort != nil {
			port = *p.TargetPort
		}
		vdPorts = append(vdPorts, fmt.Sprintf("  - {name: %s-%d, port: %d, protocol: TCP}", strings.ToLower(p.Protocol), port, port))
	}
	for _, b := range in.Intent.Backends {
		if b.Cluster == cluster {
			service(b.Namespace, b.Service, vdPorts)
		}
	}
	clients := append([]string(nil), in.Intent.Clients.Namespaces...)
	for _, p := range in.policies() {
		clients = append(clients, p.sourceNamespaces()...)
	}
	for _, ns := range clients {
		if ns != "*" {
			pod(ns, "client")
		}
	}
	// A policy's destination: a Service runs in every cluster of the
	// case; a virtual destination is declared by its own objects, for
	// which a ServiceEntry of the same hosts stands in here.
	standIns := map[string]bool{}
	for _, p := range in.policies() {
		d := p.Destination
		// An access policy's destination pods carry its workload labels;
		// a virtual destination's backends run in their clusters.
		for _, b := range d.Backends {
			if b.Cluster == cluster {
				service(b.Namespace, b.Service, []string{"  - {name: http-8080, port: 8080, protocol: TCP}"})
			}
		}
		if d.Service != "" && len(d.WorkloadLabels) > 0 {
			versionedPod(d.Namespace, d.Service, d.WorkloadLabels)
		}
		if d.Service != "" {
			service(d.Namespace, d.Service, []string{"  - {name: http-8080, port: 8080, protocol: TCP}"})
			// The versions a canary shifts or mirrors to run too.
			for _, e := range p.Policy.TrafficShift {
				if len(e.Labels) > 0 {
					versionedPod(d.Namespace, d.Service, e.Labels)
				}
			}
			if m := p.Policy.Mirror; m != nil && len(m.Labels) > 0 {
				versionedPod(d.Namespace, d.Service, m.Labels)
			}
			continue
		}
		if d.VirtualDestination == "" || standIns[d.VirtualDestination] {
			continue
		}
		standIns[d.VirtualDestination] = true
		var clusters []string
		for _, c := range in.Registry {
			clusters = append(clusters, c.Name)
		}
		docs = append(docs, oracle.VirtualDestinationStandIn(d.VirtualDestination, clusters, d.ClientNamespaces)...)
	}
	if len(docs) == 0 {
		pod("default", "client")
	}

	// Istio's gateways; the east-west gateway where mesh_cluster says it
	// runs, with the labels it selects.
	ewNS, ewLabels := "istio-system", map[string]string{"istio": "eastwestgateway"}
	if in.Intent.IstioNamespace != "" {
		ewNS = in.Intent.IstioNamespace
	}
	if len(in.Intent.EastWestSelector) > 0 {
		ewLabels = in.Intent.EastWestSelector
	}
	if ewNS != "istio-system" || ewLabels["istio"] != "eastwestgateway" {
		namespaces[ewNS] = true
		var parts []string
		for k, v := range ewLabels {
			parts = append(parts, fmt.Sprintf("%s: %q", k, v))
		}
		sort.Strings(parts)
		docs = append(docs, fmt.Sprintf(`apiVersion: v1
kind: Pod
metadata: {name: custom-eastwestgateway-0, namespace: %s, labels: {%s}}
spec:
  serviceAccountName: custom-eastwestgateway
  containers: [{name: istio-proxy, image: %s, ports: [{containerPort: 15443, name: tls}]}]`, ewNS, strings.Join(parts, ", "), proxyImage), fmt.Sprintf(`apiVersion: v1
kind: Service
metadata: {name: custom-eastwestgateway, namespace: %s}
spec:
  type: LoadBalancer
  selector: {%s}
  ports: [{name: tls, port: 15443, targetPort: 15443, protocol: TCP}]`, ewNS, strings.Join(parts, ", ")))
	}
	docs = append(docs, `apiVersion: v1
kind: Pod
metadata:
  name: istio-ingressgateway-0
  namespace: istio-system
  labels: {app: istio-ingressgateway, istio: ingressgateway}
spec:
  serviceAccountName: istio-ingressgateway
  containers: [{name: istio-proxy, image: `+proxyImage+`}]`, `apiVersion: v1
kind: Pod
metadata:
  name: istio-eastwestgateway-0
  namespace: istio-system
  labels: {app: istio-eastwestgateway, istio: eastwestgateway, topology.istio.io/network: net-`+cluster+`}
spec:
  serviceAccountName: istio-eastwestgateway
  containers: [{name: istio-proxy, image: `+proxyImage+`, ports: [{containerPort: 15443, name: tls}]}]`, `apiVersion: v1
kind: Service
metadata: {name: istio-eastwestgateway, namespace: istio-system, labels: {istio: eastwestgateway, topology.istio.io/network: net-`+cluster+`}}
spec:
  type: LoadBalancer
  selector: {istio: eastwestgateway}
  ports: [{name: tls, port: 15443, targetPort: 15443, protocol: TCP}]`, `apiVersion: networking.istio.io/v1
kind: Gateway
metadata: {name: cross-network-gateway, namespace: istio-system}
spec:
  selector: {istio: eastwestgateway}
  servers:
  - port: {number: 15443, name: tls, protocol: TLS}
    tls: {mode: AUTO_PASSTHROUGH}
    hosts: ["*.local"]`)

	names := make([]string, 0, len(namespaces))
	for ns := range namespaces {
		names = append(names, ns)
	}
	sort.Strings(names)
	for _, ns := range names {
		label := "istio-injection: enabled"
		if ns == "istio-system" {
			label = "kubernetes.io/metadata.name: istio-system"
		}
		docs = append(docs, fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {%s}}", ns, label))
	}
	return docs
}
