package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"
)

var testOwner = Owner{Kind: "virtual-destination", Name: "user", ID: "id-1"}

func keysOf(es []Entry) string {
	var out []string
	for _, e := range es {
		out = append(out, e.Cluster+"/"+e.Name+"="+e.Digest)
	}
	return strings.Join(out, ",")
}

// failWrites makes every server-side apply to cluster fail with err.
func failWrites(d k8stesting.FakeClient, err error) {
	d.PrependReactor("patch", "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, err })
}

// An apply that moves an object (old gone from the desired set, new in)
// writes the new one and then deletes the old one.
func TestApplyPrunesWhatIsNoLongerDesired(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	old := serviceEntry(testOwner, "east", "old")
	seed(t, fc["east"], old.Entry, testOwner.Labels())
	entries, err := e.Apply(context.Background(), testOwner, []Desired{serviceEntry(testOwner, "east", "new")}, []Entry{old.Entry})
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(entries); got != "east/new=d-new" {
		t.Fatalf("inventory %s, want only east/new", got)
	}
	if live(t, fc["east"], old.Entry) != nil {
		t.Fatal("the object no longer desired was not deleted")
	}
	if live(t, fc["east"], serviceEntry(testOwner, "east", "new").Entry) == nil {
		t.Fatal("the desired object was not written")
	}
}

// A write that fails in one cluster stops every prune, in every cluster:
// what would be pruned may be what traffic still relies on. The stale
// object stays, and stays in the inventory, until an apply succeeds.
func TestApplyPrunesNothingAfterAFailedWrite(t *testing.T) {
	e, fc := newFakeEngine(t, "east", "west")
	old := serviceEntry(testOwner, "east", "old")
	seed(t, fc["east"], old.Entry, testOwner.Labels())
	failWrites(fc["west"], apierrors.NewInternalError(fmt.Errorf("etcd is down")))
	desired := []Desired{serviceEntry(testOwner, "east", "new"), serviceEntry(testOwner, "west", "new")}
	entries, err := e.Apply(context.Background(), testOwner, desired, []Entry{old.Entry})
	if err == nil || !strings.Contains(err.Error(), "west") {
		t.Fatalf("want an error naming west, got %v", err)
	}
	if live(t, fc["east"], old.Entry) == nil {
		t.Fatal("east/old was pruned although the write to west failed")
	}
	if got := keysOf(entries); got != "east/new=d-new,east/old=d-old" {
		t.Fatalf("inventory %s, want east/new and the unpruned east/old (west/new failed and never existed)", got)
	}
}

// The provider never writes over an object it did not create: an object
// of the same name without our labels is left as it is, reported, and
// kept out of the inventory.
func TestApplyRefusesAnObjectThatIsNotOurs(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	want := serviceEntry(testOwner, "east", "taken")
	seed(t, fc["east"], want.Entry, map[string]string{"app": "someone-else"})
	entries, err := e.Apply(context.Background(), testOwner, []Desired{want}, nil)
	if !errors.Is(err, errNotOurs) || !strings.Contains(err.Error(), "was not created by terraform-provider-mesh") {
		t.Fatalf("want the not-ours refusal, got %v", err)
	}
	if len(entries) != 0 {
		t.Fatalf("inventory %s, want nothing", keysOf(entries))
	}
	if got := live(t, fc["east"], want.Entry).GetLabels(); got["app"] != "someone-else" || got[LabelManagedBy] != "" {
		t.Fatalf("the other object was written: labels %v", got)
	}
	if n := len(applies(fc["east"])); n != 0 {
		t.Fatalf("%d applies sent to someone else's object", n)
	}
}

// An object of the same intent name from another Terraform state (another
// instance ID) is not ours either.
func TestApplyRefusesAnotherInstancesObject(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	want := serviceEntry(testOwner, "east", "user")
	other := testOwner
	other.ID = "id-other"
	seed(t, fc["east"], want.Entry, other.Labels())
	_, err := e.Apply(context.Background(), testOwner, []Desired{want}, nil)
	if !errors.Is(err, errNotOurs) || !strings.Contains(err.Error(), "instance id-other") {
		t.Fatalf("want the other-instance refusal naming id-other, got %v", err)
	}
	if got := live(t, fc["east"], want.Entry).GetLabels()[LabelOwnerID]; got != "id-other" {
		t.Fatalf("the other instance's object was taken over: owner id %q", got)
	}
}

func TestOwnsComparesTheInstanceID(t *testing.T) {
	other := testOwner
	other.ID = "id-2"
	if testOwner.owns(other.Labels()) {
		t.Fatal("an object of another instance counts as ours")
	}
	if !testOwner.owns(testOwner.Labels()) {
		t.Fatal("our own object does not count as ours")
	}
	importing := testOwner
	importing.ID = ""
	if !importing.owns(other.Labels()) {
		t.Fatal("without an ID (import) every instance's object should match")
	}
}

// Conflicts with other field managers are forced only when the provider
// is configured with force_conflicts.
func TestApplyForcesConflictsOnlyWhenAsked(t *testing.T) {
	for _, force := range []bool{false, true} {
		t.Run(fmt.Sprint("force=", force), func(t *testing.T) {
			e, fc := newFakeEngine(t, "east")
			e.ForceConflicts = force
			if _, err := e.Apply(context.Background(), testOwner, []Desired{serviceEntry(testOwner, "east", "a")}, nil); err != nil {
				t.Fatal(err)
			}
			as := applies(fc["east"])
			if len(as) == 0 {
				t.Fatal("nothing applied")
			}
			for _, a := range as {
				if got := a.PatchOptions.Force != nil && *a.PatchOptions.Force; got != force {
					t.Fatalf("apply with force=%v, provider configured with force_conflicts=%v", got, force)
				}
				if a.PatchOptions.FieldManager != "test/virtual-destination.user" {
					t.Fatalf("field manager %q", a.PatchOptions.FieldManager)
				}
			}
		})
	}
}

// A conflict with another tool's server-side apply is an error naming the
// object, the field and the other manager; nothing is forced.
func TestApplyConflictNamesTheManager(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	want := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], want.Entry, testOwner.Labels())
	gvr := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}
	u := live(t, fc["east"], want.Entry)
	u.SetManagedFields(applyManaged("argocd-controller"))
	if err := fc["east"].Tracker().Update(gvr, u, "istio-system"); err != nil {
		t.Fatal(err)
	}
	fc["east"].PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchActionImpl)
		if pa.PatchOptions.Force != nil && *pa.PatchOptions.Force {
			return false, nil, nil
		}
		return true, nil, fieldConflict("argocd-controller", ".spec.hosts")
	})
	_, err := e.Apply(context.Background(), testOwner, []Desired{want}, []Entry{want.Entry})
	if err == nil {
		t.Fatal("a conflict with another tool's apply was overwritten")
	}
	for _, s := range []string{`"argocd-controller"`, ".spec.hosts", "ServiceEntry", "force_conflicts"} {
		if !strings.Contains(err.Error(), s) {
			t.Fatalf("conflict error lacks %q: %v", s, err)
		}
	}
	for _, a := range applies(fc["east"]) {
		if a.PatchOptions.Force != nil && *a.PatchOptions.Force {
			t.Fatal("the conflict was forced")
		}
	}
}

// A create cut off before the cluster answered may or may not have taken
// effect: the object is listed as unconfirmed, never forgotten.
func TestApplyListsACutOffCreateAsUnconfirmed(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	failWrites(fc["east"], &url.Error{Op: "Patch", URL: "https://east.example:6443/apis", Err: context.DeadlineExceeded})
	entries, err := e.Apply(context.Background(), testOwner, []Desired{serviceEntry(testOwner, "east", "a")}, nil)
	if err == nil {
		t.Fatal("want the cut-off error")
	}
	if got := keysOf(entries); got != "east/a="+DigestUnconfirmed {
		t.Fatalf("inventory %q, want east/a listed as unconfirmed", got)
	}
}

// A refused create (the cluster answered) did not happen: nothing listed.
func TestApplyDoesNotListARefusedCreate(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	failWrites(fc["east"], apierrors.NewForbidden(schema.GroupResource{Resource: "serviceentries"}, "a", fmt.Errorf("no")))
	entries, err := e.Apply(context.Background(), testOwner, []Desired{serviceEntry(testOwner, "east", "a")}, nil)
	if err == nil || !strings.Contains(err.Error(), "403 Forbidden") {
		t.Fatalf("want the 403 explained, got %v", err)
	}
	if len(entries) != 0 {
		t.Fatalf("inventory %s, want nothing", keysOf(entries))
	}
}

// A cluster that cannot be reached keeps the prior entries of the objects
// still desired there: they exist, as far as anyone knows.
func TestApplyKeepsEntriesOfAnUnreachableCluster(t *testing.T) {
	e, _ := newFakeEngine(t, "east")
	prior := serviceEntry(testOwner, "gone", "a")
	entries, err := e.Apply(context.Background(), testOwner, []Desired{prior}, []Entry{prior.Entry})
	if err == nil || !strings.Contains(err.Error(), "gone") {
		t.Fatalf("want an error naming cluster gone, got %v", err)
	}
	if got := keysOf(entries); got != "gone/a=d-a" {
		t.Fatalf("inventory %q, want gone/a kept", got)
	}
}

// An owner that adopts takes over an object this provider did not write,
// keeping its UID, and still refuses one that another instance owns.
func TestApplyAdoptsOnlyObjectsNobodyOwns(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	adopter := testOwner
	adopter.Adopt = true
	plain := serviceEntry(adopter, "east", "hand-written")
	seed(t, fc["east"], plain.Entry, map[string]string{"app": "someone-else"})
	uid := live(t, fc["east"], plain.Entry).GetUID()
	entries, err := e.Apply(context.Background(), adopter, []Desired{plain}, nil)
	if err != nil || len(entries) != 1 {
		t.Fatalf("adopting: %v, inventory %s", err, keysOf(entries))
	}
	got := live(t, fc["east"], plain.Entry)
	if got.GetLabels()[LabelOwnerName] != adopter.Name || got.GetUID() != uid {
		t.Fatalf("not adopted in place: labels %v, uid %s (was %s)", got.GetLabels(), got.GetUID(), uid)
	}

	owned := serviceEntry(adopter, "east", "theirs")
	other := testOwner
	other.ID = "id-other"
	seed(t, fc["east"], owned.Entry, other.Labels())
	if _, err := e.Apply(context.Background(), adopter, []Desired{owned}, nil); !errors.Is(err, errNotOurs) {
		t.Fatalf("adopting took another instance's object: %v", err)
	}
}

// An object in the inventory that another owner holds now (another state's
// instance took it over, by import or adopt_existing) is no longer ours to
// prune: apply leaves it in place and drops it from the inventory.
func TestApplyPrunesNothingAnotherOwnerNowHolds(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	old := serviceEntry(testOwner, "east", "old")
	other := Owner{Kind: "virtual-destination", Name: "user", ID: "id-of-another-state"}
	seed(t, fc["east"], old.Entry, other.Labels())
	entries, err := e.Apply(context.Background(), testOwner, []Desired{serviceEntry(testOwner, "east", "new")}, []Entry{old.Entry})
	if err != nil {
		t.Fatal(err)
	}
	if live(t, fc["east"], old.Entry) == nil {
		t.Fatal("east/old, which instance id-of-another-state holds now, was deleted by id-1's prune")
	}
	if got := keysOf(entries); got != "east/new=d-new" {
		t.Fatalf("inventory %s, want only east/new", got)
	}
}

// Drift from plain edits (kubectl edit, patch, replace) on fields the
// provider declares is restored by apply: the conflict the API server
// answers is forced, and the object holds the declared value again.
func TestApplyRestoresFieldsAPlainEditChanged(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	want := serviceEntry(testOwner, "east", "a")
	seed(t, fc["east"], want.Entry, testOwner.Labels())
	gvr := schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "serviceentries"}
	u := live(t, fc["east"], want.Entry)
	u.SetManagedFields([]metav1.ManagedFieldsEntry{{Manager: "kubectl-edit", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "networking.istio.io/v1",
		FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(`{"f:spec":{"f:hosts":{}}}`)}})
	if err := fc["east"].Tracker().Update(gvr, u, "istio-system"); err != nil {
		t.Fatal(err)
	}
	fc["east"].PrependReactor("patch", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pa := a.(k8stesting.PatchActionImpl)
		if pa.PatchOptions.Force != nil && *pa.PatchOptions.Force {
			return false, nil, nil
		}
		return true, nil, fieldConflict("kubectl-edit", ".spec.hosts")
	})
	if _, err := e.Apply(context.Background(), testOwner, []Desired{want}, []Entry{want.Entry}); err != nil {
		t.Fatalf("drift from a plain edit was not restored: %v", err)
	}
	hosts, _, err := unstructuredSlice(live(t, fc["east"], want.Entry).Object, "spec", "hosts")
	if err != nil {
		t.Fatal(err)
	}
	wantHosts, _, err := unstructuredSlice(want.Manifest, "spec", "hosts")
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(hosts) != fmt.Sprint(wantHosts) {
		t.Fatalf("after apply spec.hosts is %v (the plain edit's), want the declared %v", hosts, wantHosts)
	}
}
