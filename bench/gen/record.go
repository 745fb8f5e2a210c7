package gen

import (
	"encoding/json"
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// recorder is a set of in-memory clusters (client-go's fake dynamic
// client) in front of which the provider's engine applies the planned
// objects: every server-side apply request it sends is recorded, body,
// field manager and force as sent, and the floor replays exactly those.
// The fake stores an applied object by merging it into what is there
// (maps merged key by key, anything else replaced), which is what server-
// side apply does for managers that own disjoint fields, as the engine's
// managers do here; each manager's labels and annotations are recorded in
// managedFields, which the engine reads to trust contributions.
type recorder struct {
	mu       sync.Mutex
	clusters map[string]*dynamicfake.FakeDynamicClient
	writes   []Write
	wave     int
	uid      int
	// allFields records every field an apply sets as its manager's, not
	// only its labels and annotations: what a refresh needs to digest an
	// object's content from its managed fields (MeasureFleet).
	allFields bool
	// unrecorded keeps no writes (a floor replaying them).
	unrecorded bool
}

func newRecorder(clusters []string) *recorder {
	listKinds := map[schema.GroupVersionResource]string{}
	for _, k := range engine.Kinds() {
		gvr, _ := engine.ResourceOf(k)
		listKinds[gvr] = k.Kind + "List"
	}
	r := &recorder{clusters: map[string]*dynamicfake.FakeDynamicClient{}}
	for _, c := range clusters {
		d := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), listKinds)
		d.PrependReactor("patch", "*", r.applyReactor(c, d))
		r.clusters[c] = d
	}
	return r
}

func (r *recorder) setWave(w int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wave = w
}

// Get serves the engine (engine.ClientSource).
func (r *recorder) Get(cluster string) (*kubeclient.Clients, error) {
	d, ok := r.clusters[cluster]
	if !ok {
		return nil, fmt.Errorf("cluster %s is not in the generated configuration", cluster)
	}
	return &kubeclient.Clients{Dynamic: d}, nil
}

func (r *recorder) applyReactor(cluster string, d *dynamicfake.FakeDynamicClient) k8stesting.ReactionFunc {
	return func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa, ok := a.(k8stesting.PatchActionImpl)
		if !ok || pa.GetPatchType() != types.ApplyPatchType {
			return false, nil, nil
		}
		applied := &unstructured.Unstructured{}
		if err := json.Unmarshal(pa.GetPatch(), &applied.Object); err != nil {
			return true, nil, err
		}
		gvr, ns, name := pa.GetResource(), pa.GetNamespace(), pa.GetName()
		manager := pa.PatchOptions.FieldManager
		force := pa.PatchOptions.Force != nil && *pa.PatchOptions.Force
		body, err := replayable(pa.GetPatch(), applied)
		if err != nil {
			return true, nil, err
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		if !r.unrecorded {
			r.writes = append(r.writes, Write{
				Key:     translate.Key{Cluster: cluster, APIVersion: applied.GetAPIVersion(), Kind: applied.GetKind(), Namespace: ns, Name: name},
				Manager: manager, Force: force, Body: body, Wave: r.wave,
			})
		}
		live, err := d.Tracker().Get(gvr, ns, name)
		switch {
		case apierrors.IsNotFound(err):
			if applied.GetUID() != "" {
				return true, nil, apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("uid precondition: object was deleted"))
			}
			obj := applied.DeepCopy()
			fields, err := r.managerFields(nil, obj, manager)
			if err != nil {
				return true, nil, err
			}
			obj.SetManagedFields(fields)
			r.uid++
			obj.SetUID(types.UID(fmt.Sprintf("recorded-%d", r.uid)))
			obj.SetResourceVersion("1")
			return true, obj, d.Tracker().Create(gvr, obj, ns)
		case err != nil:
			return true, nil, err
		}
		l := live.(*unstructured.Unstructured)
		if uid := applied.GetUID(); uid != "" && uid != l.GetUID() {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("uid precondition failed"))
		}
		if rv := applied.GetResourceVersion(); rv != "" && rv != l.GetResourceVersion() {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("the object has been modified"))
		}
		fields, err := r.managerFields(l.GetManagedFields(), applied, manager)
		if err != nil {
			return true, nil, err
		}
		obj := l.DeepCopy()
		merge(obj.Object, applied.Object)
		obj.SetManagedFields(fields)
		n, _ := strconv.Atoi(l.GetResourceVersion())
		obj.SetResourceVersion(strconv.Itoa(n + 1))
		return true, obj, d.Tracker().Update(gvr, obj, ns)
	}
}

// replayable is the body as sent, less the preconditions that name this
// in-memory cluster's instance (its UID and resourceVersion), which a
// real cluster would refuse; the content is untouched.
func replayable(raw []byte, applied *unstructured.Unstructured) (json.RawMessage, error) {
	if applied.GetUID() == "" && applied.GetResourceVersion() == "" {
		return append(json.RawMessage(nil), raw...), nil
	}
	o := applied.DeepCopy()
	unstructured.RemoveNestedField(o.Object, "metadata", "uid")
	unstructured.RemoveNestedField(o.Object, "metadata", "resourceVersion")
	return json.Marshal(o.Object)
}

// merge applies src onto dst: maps key by key, everything else replaced.
func merge(dst, src map[string]any) {
	for k, v := range src {
		if sm, ok := v.(map[string]any); ok {
			if dm, ok := dst[k].(map[string]any); ok {
				merge(dm, sm)
				continue
			}
		}
		dst[k] = v
	}
}

// managerFields replaces manager's entry in fields with one for the
// labels and annotations of applied (what the engine reads of managed
// fields when it applies), and with allFields for every other field it
// sets too (lists whole, as Istio's CRDs declare them atomic).
func (r *recorder) managerFields(fields []metav1.ManagedFieldsEntry, applied *unstructured.Unstructured, manager string) ([]metav1.ManagedFieldsEntry, error) {
	set := map[string]any{}
	if r.allFields {
		for k, v := range applied.Object {
			if k != "apiVersion" && k != "kind" && k != "metadata" && k != "status" {
				set["f:"+k] = fieldSet(v)
			}
		}
	}
	meta := map[string]any{}
	for what, keys := range map[string]map[string]string{"f:labels": applied.GetLabels(), "f:annotations": applied.GetAnnotations()} {
		s := map[string]any{}
		for k := range keys {
			s["f:"+k] = map[string]any{}
		}
		meta[what] = s
	}
	set["f:metadata"] = meta
	raw, err := json.Marshal(set)
	if err != nil {
		return nil, err
	}
	var out []metav1.ManagedFieldsEntry
	for _, f := range fields {
		if f.Manager != manager {
			out = append(out, f)
		}
	}
	return append(out, metav1.ManagedFieldsEntry{Manager: manager, Operation: metav1.ManagedFieldsOperationApply,
		APIVersion: applied.GetAPIVersion(), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw))}), nil
}

// fieldSet is the FieldsV1 set of a value: a map's keys, each with its
// own set; anything else (lists included) is a leaf.
func fieldSet(v any) map[string]any {
	out := map[string]any{}
	if m, ok := v.(map[string]any); ok {
		for k, x := range m {
			out["f:"+k] = fieldSet(x)
		}
	}
	return out
}
