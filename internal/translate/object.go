package translate

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
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
//
// An Istio object's spec, a protobuf message, is rendered by its own
// MarshalJSON alone; the rest is taken from the object's fields. Going
// through encoding/json for the whole object gave the same map (the
// translator's golden files and engine's TestPlanIsStable pin it) at about
// twice the cost: reflection over the object, and the spec's JSON
// validated and compacted once more before being parsed.
func (o Object) Manifest() (map[string]any, error) {
	m, err := o.manifest()
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", o.Key(), err)
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

// manifest is the object as JSON decodes it, status and metadata other
// than name, namespace, labels and annotations left out.
func (o Object) manifest() (map[string]any, error) {
	spec, ok := specOf(o.Resource)
	tm, typed := o.Resource.GetObjectKind().(*metav1.TypeMeta)
	if !ok || !typed {
		return manifestByJSON(o.Resource)
	}
	m := map[string]any{}
	if tm.APIVersion != "" {
		m["apiVersion"] = tm.APIVersion
	}
	if tm.Kind != "" {
		m["kind"] = tm.Kind
	}
	meta := map[string]any{}
	if n := o.Resource.GetName(); n != "" {
		meta["name"] = n
	}
	if ns := o.Resource.GetNamespace(); ns != "" {
		meta["namespace"] = ns
	}
	for key, values := range map[string]map[string]string{"labels": o.Resource.GetLabels(), "annotations": o.Resource.GetAnnotations()} {
		if len(values) == 0 {
			continue
		}
		out := make(map[string]any, len(values))
		for k, v := range values {
			out[k] = v
		}
		meta[key] = out
	}
	m["metadata"] = meta
	if pm, ok := spec.(proto.Message); ok {
		sv, err := protoMap(pm.ProtoReflect())
		if err == nil {
			m["spec"] = sv
			return m, nil
		}
		if !errors.Is(err, errProtoFallback) {
			return nil, err
		}
	}
	sv, err := specByJSON(spec)
	if err != nil {
		return nil, err
	}
	if sv != nil {
		m["spec"] = sv
	}
	return m, nil
}

// specByJSON is a spec through its JSON (protojson's for a protobuf
// message), decoded by encoding/json.
func specByJSON(spec json.Marshaler) (any, error) {
	var raw []byte
	var err error
	if pm, ok := spec.(proto.Message); ok {
		raw, err = protojson.Marshal(pm)
	} else {
		raw, err = spec.MarshalJSON()
	}
	if err != nil {
		return nil, err
	}
	var sv any
	if err := json.Unmarshal(raw, &sv); err != nil {
		return nil, err
	}
	return sv, nil
}

// manifestByJSON is the object through encoding/json: what manifest
// gives, for any object.
func manifestByJSON(r Resource) (map[string]any, error) {
	raw, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
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
	return m, nil
}

// specFields holds, per object type, the index of its Spec field when
// that field renders itself (a protobuf message's MarshalJSON), or -1.
var specFields sync.Map // reflect.Type -> int

// specOf returns the spec of a typed Istio object as its JSON marshaler.
func specOf(r Resource) (json.Marshaler, bool) {
	v := reflect.ValueOf(r)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return nil, false
	}
	t := v.Elem().Type()
	i, ok := specFields.Load(t)
	if !ok {
		i = -1
		if f, found := t.FieldByName("Spec"); found && len(f.Index) == 1 && strings.Split(f.Tag.Get("json"), ",")[0] == "spec" &&
			reflect.PointerTo(f.Type).Implements(reflect.TypeFor[json.Marshaler]()) {
			i = f.Index[0]
		}
		specFields.Store(t, i)
	}
	if i.(int) < 0 {
		return nil, false
	}
	return v.Elem().Field(i.(int)).Addr().Interface().(json.Marshaler), true
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
