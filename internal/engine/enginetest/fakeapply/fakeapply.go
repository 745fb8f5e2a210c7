// Package fakeapply stands in for the API server's writes on client-go's
// fake dynamic client, which has no server-side apply of its own for
// objects that do not exist yet: Apply creates or replaces the object by
// the applied configuration, with a UID and a resourceVersion, and
// refuses an apply that names the object by another UID (invalid) or an
// older resourceVersion (conflict); Create gives the created object a UID
// and a resourceVersion. Both record the writer's field manager for the
// labels and annotations they set (MetadataFields): the fake does no
// field management of its own.
//
// It depends only on client-go and apimachinery, so that the engine's own
// tests (internal/engine) and the tests of the packages above it
// (internal/shareddata, through enginetest) share one fake.
package fakeapply

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
	"k8s.io/apimachinery/pkg/util/validation/field"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"
)

var uids struct {
	sync.Mutex
	n int
}

// NextUID is a UID no other object of the process has.
func NextUID() types.UID {
	uids.Lock()
	defer uids.Unlock()
	uids.n++
	return types.UID(fmt.Sprintf("uid-%d", uids.n))
}

// Install prepends the Apply and Create reactors to d: failures a test
// injects are reactors prepended after Install, which run first.
func Install(d *dynamicfake.FakeDynamicClient) {
	d.PrependReactor("patch", "*", Apply(d))
	d.PrependReactor("create", "*", Create(d))
}

// Create gives created objects a UID and a resourceVersion.
func Create(d *dynamicfake.FakeDynamicClient) k8stesting.ReactionFunc {
	return func(a k8stesting.Action) (bool, runtime.Object, error) {
		ca := a.(k8stesting.CreateActionImpl)
		obj := ca.GetObject().(*unstructured.Unstructured).DeepCopy()
		obj.SetManagedFields(MetadataFields(obj, ca.CreateOptions.FieldManager, metav1.ManagedFieldsOperationUpdate))
		obj.SetUID(NextUID())
		obj.SetResourceVersion("1")
		if err := d.Tracker().Create(ca.GetResource(), obj, ca.GetNamespace()); err != nil {
			return true, nil, err
		}
		return true, obj, nil
	}
}

// Apply emulates server-side apply on the tracker: the object is created
// or replaced by the applied configuration. Patches of other types are
// left to the reactors after it.
func Apply(d *dynamicfake.FakeDynamicClient) k8stesting.ReactionFunc {
	return func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa, ok := a.(k8stesting.PatchActionImpl)
		if !ok || pa.GetPatchType() != types.ApplyPatchType {
			return false, nil, nil
		}
		obj := &unstructured.Unstructured{}
		if err := json.Unmarshal(pa.GetPatch(), &obj.Object); err != nil {
			return true, nil, err
		}
		gvr, ns, name := pa.GetResource(), pa.GetNamespace(), pa.GetName()
		obj.SetManagedFields(MetadataFields(obj, pa.PatchOptions.FieldManager, metav1.ManagedFieldsOperationApply))
		if len(pa.PatchOptions.DryRun) > 0 {
			return true, obj, nil // dryRun=All: answered, nothing stored
		}
		live, err := d.Tracker().Get(gvr, ns, name)
		switch {
		case apierrors.IsNotFound(err):
			if obj.GetUID() != "" {
				return true, nil, apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("uid precondition: object was deleted"))
			}
			obj.SetUID(NextUID())
			obj.SetResourceVersion("1")
			return true, obj, d.Tracker().Create(gvr, obj, ns)
		case err != nil:
			return true, nil, err
		}
		l := live.(*unstructured.Unstructured)
		if obj.GetUID() != "" && obj.GetUID() != l.GetUID() {
			return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: gvr.Group, Kind: l.GetKind()}, name,
				field.ErrorList{field.Invalid(field.NewPath("metadata", "uid"), obj.GetUID(), "field is immutable")})
		}
		if rv := obj.GetResourceVersion(); rv != "" && rv != l.GetResourceVersion() {
			return true, nil, apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("the object has been modified"))
		}
		obj.SetUID(l.GetUID())
		n, _ := strconv.Atoi(l.GetResourceVersion())
		obj.SetResourceVersion(strconv.Itoa(n + 1))
		return true, obj, d.Tracker().Update(gvr, obj, ns)
	}
}

// MetadataFields is the managed-fields entry of manager for the labels
// and annotations of obj.
func MetadataFields(obj *unstructured.Unstructured, manager string, op metav1.ManagedFieldsOperationType) []metav1.ManagedFieldsEntry {
	fields := map[string]any{}
	for what, keys := range map[string]map[string]string{"f:labels": obj.GetLabels(), "f:annotations": obj.GetAnnotations()} {
		set := map[string]any{}
		for k := range keys {
			set["f:"+k] = map[string]any{}
		}
		fields[what] = set
	}
	raw, _ := json.Marshal(map[string]any{"f:metadata": fields})
	return []metav1.ManagedFieldsEntry{{Manager: manager, Operation: op, APIVersion: obj.GetAPIVersion(), FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(string(raw))}}
}
