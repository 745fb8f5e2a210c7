package translate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Resource is a typed Istio object from istio.io/client-go with its
// TypeMeta (apiVersion, kind) set.
type Resource interface {
	runtime.Object
	metav1.Object
}

// Object is one desired Istio object in one cluster.
type Object struct {
	Cluster  string
	Resource Resource
}

// Key identifies an object across clusters: cluster, apiVersion, kind,
// namespace and name.
type Key struct {
	Cluster    string
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
}

func (k Key) String() string {
	ns := k.Namespace
	if ns != "" {
		ns += "/"
	}
	return fmt.Sprintf("%s %s%s in cluster %s", k.Kind, ns, k.Name, k.Cluster)
}

// Less orders keys by cluster, kind, apiVersion, namespace, name.
func (k Key) Less(o Key) bool { return k.Compare(o) < 0 }

// Compare orders keys by cluster, kind, API version, namespace and name.
func (k Key) Compare(o Key) int {
	switch {
	case k.Cluster != o.Cluster:
		return strings.Compare(k.Cluster, o.Cluster)
	case k.Kind != o.Kind:
		return strings.Compare(k.Kind, o.Kind)
	case k.APIVersion != o.APIVersion:
		return strings.Compare(k.APIVersion, o.APIVersion)
	case k.Namespace != o.Namespace:
		return strings.Compare(k.Namespace, o.Namespace)
	default:
		return strings.Compare(k.Name, o.Name)
	}
}

// Key returns the identity of o.
func (o Object) Key() Key {
	if tm, ok := o.Resource.GetObjectKind().(*metav1.TypeMeta); ok && strings.Contains(tm.APIVersion, "/") {
		// Typed objects: their API version is already group/version.
		return Key{Cluster: o.Cluster, APIVersion: tm.APIVersion, Kind: tm.Kind, Namespace: o.Resource.GetNamespace(), Name: o.Resource.GetName()}
	}
	gvk := o.Resource.GetObjectKind().GroupVersionKind()
	return Key{
		Cluster:    o.Cluster,
		APIVersion: gvk.GroupVersion().String(),
		Kind:       gvk.Kind,
		Namespace:  o.Resource.GetNamespace(),
		Name:       o.Resource.GetName(),
	}
}

// Sort orders objects by Key, the order every translator returns.
func Sort(objs []Object) {
	if len(objs) < 2 {
		return
	}
	// Each key is made once: while the objects are in order (translators
	// mostly make them so) only the previous one is kept.
	var keys []Key
	prev := objs[0].Key()
	for i := 1; i < len(objs); i++ {
		k := objs[i].Key()
		if keys == nil && prev.Compare(k) <= 0 {
			prev = k
			continue
		}
		if keys == nil {
			keys = make([]Key, len(objs))
			for j := range i {
				keys[j] = objs[j].Key()
			}
		}
		keys[i] = k
	}
	if keys == nil {
		return
	}
	order := make([]int, len(objs))
	for i := range order {
		order[i] = i
	}
	// Sorting indices moves ints, not objects and keys.
	slices.SortStableFunc(order, func(a, b int) int { return keys[a].Compare(keys[b]) })
	sorted := make([]Object, len(objs))
	for i, k := range order {
		sorted[i] = objs[k]
	}
	copy(objs, sorted)
}

// Manifest renders o as the plain JSON object a server-side apply sends:
// apiVersion, kind, metadata (name, namespace, labels, annotations) and
// spec. Server-owned fields (status, creationTimestamp) are dropped.
func (o Object) Manifest() (map[string]any, error) {
	raw, err := json.Marshal(o.Resource)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", o.Key(), err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("rendering %s: %w", o.Key(), err)
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		for k := range meta {
			switch k {
			case "name", "namespace", "labels", "annotations":
			default:
				delete(meta, k)
			}
		}
	}
	apiVersion, _ := m["apiVersion"].(string)
	if !strings.Contains(apiVersion, "istio.io/") {
		return m, nil // a core object (a record), without spec
	}
	spec, ok := m["spec"].(map[string]any)
	if !ok {
		// An empty spec is meaningful (a deny-all AuthorizationPolicy), and
		// the server must see it to record that we own it.
		spec = map[string]any{}
		m["spec"] = spec
	}
	if m["kind"] == "AuthorizationPolicy" {
		if _, set := spec["action"]; !set {
			// JSON of protobuf drops zero enums, and ALLOW is zero. Send it
			// anyway so we own the field: another manager switching it to
			// DENY must conflict, not slip by.
			spec["action"] = "ALLOW"
		}
	}
	return m, nil
}

// HasUnknown reports whether the rendered object depends on a value known
// only after apply.
func (o Object) HasUnknown() (bool, error) {
	raw, err := json.Marshal(o.Resource)
	if err != nil {
		return false, err
	}
	// json.Marshal escapes the NUL that starts every placeholder.
	return strings.Contains(string(raw), `\u0000unknown:`), nil
}

func TypeMeta(apiVersion, kind string) metav1.TypeMeta {
	return metav1.TypeMeta{APIVersion: apiVersion, Kind: kind}
}

func ObjectMeta(namespace, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Namespace: namespace, Name: name}
}

// API versions of the Istio kinds the translator emits.
const (
	NetworkingV1 = "networking.istio.io/v1"
	SecurityV1   = "security.istio.io/v1"
)
