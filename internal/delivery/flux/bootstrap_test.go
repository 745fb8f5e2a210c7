package flux

import (
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

func TestBootstrapYAML(t *testing.T) {
	cases := []struct {
		name string
		in   Bootstrap
		want string
	}{
		{
			name: "defaults",
			in:   Bootstrap{Name: "mesh-prod", Repository: "registry.example.com/mesh/east", Tag: "prod"},
			want: `apiVersion: v1
kind: ServiceAccount
metadata:
  name: mesh-prod
  namespace: flux-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: mesh-prod-flux-system-istio
rules:
- apiGroups:
  - networking.istio.io
  resources:
  - destinationrules
  - gateways
  - serviceentries
  - virtualservices
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
- apiGroups:
  - security.istio.io
  resources:
  - authorizationpolicies
  - peerauthentications
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: mesh-prod-flux-system-istio
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: mesh-prod-flux-system-istio
subjects:
- kind: ServiceAccount
  name: mesh-prod
  namespace: flux-system
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: mesh-prod
  namespace: flux-system
spec:
  interval: 1m0s
  ref:
    tag: prod
  url: oci://registry.example.com/mesh/east
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: mesh-prod
  namespace: flux-system
spec:
  interval: 1m0s
  path: ./
  prune: true
  serviceAccountName: mesh-prod
  sourceRef:
    kind: OCIRepository
    name: mesh-prod
    namespace: flux-system
  wait: false
`,
		},
		{
			name: "insecure, credentials, records namespace, Istio namespaces, own namespace and interval",
			in: Bootstrap{Name: "mesh", Namespace: "delivery", Repository: "oci://localhost:5000/mesh/west", Tag: "v1",
				Interval: 30 * time.Second, Insecure: true, SecretName: "registry-creds", RecordsNamespace: "mesh-intent-records", Namespaces: []string{"users"}},
			want: `apiVersion: v1
kind: Namespace
metadata:
  name: mesh-intent-records
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: mesh
  namespace: delivery
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: mesh-delivery-istio
  namespace: users
rules:
- apiGroups:
  - networking.istio.io
  resources:
  - destinationrules
  - gateways
  - serviceentries
  - virtualservices
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
- apiGroups:
  - security.istio.io
  resources:
  - authorizationpolicies
  - peerauthentications
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: mesh-delivery-istio
  namespace: users
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: mesh-delivery-istio
subjects:
- kind: ServiceAccount
  name: mesh
  namespace: delivery
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: mesh-delivery-records
  namespace: mesh-intent-records
rules:
- apiGroups:
  - ""
  resources:
  - configmaps
  verbs:
  - get
  - list
  - watch
  - create
  - update
  - patch
  - delete
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: mesh-delivery-records
  namespace: mesh-intent-records
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: mesh-delivery-records
subjects:
- kind: ServiceAccount
  name: mesh
  namespace: delivery
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: OCIRepository
metadata:
  name: mesh
  namespace: delivery
spec:
  insecure: true
  interval: 30s
  ref:
    tag: v1
  secretRef:
    name: registry-creds
  url: oci://localhost:5000/mesh/west
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: mesh
  namespace: delivery
spec:
  interval: 30s
  path: ./
  prune: true
  serviceAccountName: mesh
  sourceRef:
    kind: OCIRepository
    name: mesh
    namespace: delivery
  wait: false
`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.in.YAML()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Errorf("YAML:\n%s\nwant:\n%s", got, c.want)
			}
			// Every document parses back (what kubectl apply reads).
			for i, doc := range strings.Split(string(got), "---\n") {
				var m map[string]any
				if err := yaml.Unmarshal([]byte(doc), &m); err != nil || m["kind"] == nil {
					t.Errorf("document %d does not parse as an object (%v):\n%s", i, err, doc)
				}
			}
		})
	}
}

func TestBootstrapRejects(t *testing.T) {
	ok := Bootstrap{Name: "mesh", Repository: "registry.example.com/mesh", Tag: "prod"}
	cases := []struct {
		name   string
		change func(*Bootstrap)
		want   string
	}{
		{"empty name", func(b *Bootstrap) { b.Name = "" }, "bootstrap name"},
		{"name with capitals", func(b *Bootstrap) { b.Name = "Mesh" }, "bootstrap name \"Mesh\""},
		{"bad namespace", func(b *Bootstrap) { b.Namespace = "flux_system" }, "bootstrap namespace"},
		{"bad records namespace", func(b *Bootstrap) { b.RecordsNamespace = "Records" }, "records namespace"},
		{"bad secret", func(b *Bootstrap) { b.SecretName = "creds!" }, "secret name"},
		{"no repository", func(b *Bootstrap) { b.Repository = "" }, "want <registry>/<path>"},
		{"repository with tag digest", func(b *Bootstrap) { b.Repository = "r.example.com/m@sha256:00" }, "without a tag or digest"},
		{"other scheme", func(b *Bootstrap) { b.Repository = "https://r.example.com/m" }, "want <registry>/<path>"},
		{"no tag", func(b *Bootstrap) { b.Tag = "" }, "tag is empty"},
		{"negative interval", func(b *Bootstrap) { b.Interval = -time.Second }, "negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := ok
			c.change(&b)
			_, err := b.YAML()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := ok.Objects(); err != nil {
		t.Errorf("the valid bootstrap fails: %v", err)
	}
}
