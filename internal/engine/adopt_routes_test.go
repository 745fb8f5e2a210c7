package engine

import (
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
)

var gvrVirtualServices = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}
var gvrDestinationRules = schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "destinationrules"}

// putRoute writes a hand-written VirtualService or DestinationRule with
// spec into the fake cluster's namespace users.
func putRoute(t *testing.T, fc fakeClusters, cluster, kind, name string, spec map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": kind, "spec": spec}}
	obj.SetNamespace("users")
	obj.SetName(name)
	obj.SetUID(types.UID("uid-" + name))
	obj.SetResourceVersion("7")
	gvr := gvrVirtualServices
	if kind == "DestinationRule" {
		gvr = gvrDestinationRules
	}
	if err := fc[cluster].Tracker().Create(gvr, obj, "users"); err != nil {
		t.Fatal(err)
	}
}

// routeDesired are an intent's objects in east: a ServiceEntry for
// user.global (endpoint user.users.svc.cluster.local), a DestinationRule
// on user.global and a VirtualService on user.global routing to the
// subset host east.cluster.user.global.
func routeDesired() []Desired {
	se := serviceEntry(testOwner, "east", "vd-user")
	se.Manifest["spec"] = map[string]any{"hosts": []any{"user.global"}, "endpoints": []any{map[string]any{"address": "user.users.svc.cluster.local"}}}
	dr := serviceEntry(testOwner, "east", "vd-user")
	dr.Kind = "DestinationRule"
	dr.Manifest["kind"] = "DestinationRule"
	dr.Manifest["spec"] = map[string]any{"host": "user.global", "subsets": []any{map[string]any{"name": "east"}}}
	vs := serviceEntry(testOwner, "east", "tp-user.global")
	vs.Kind = "VirtualService"
	vs.Manifest = map[string]any{} // composed: the part's hosts stand for it
	vs.Hosts, vs.Declares = []string{"user.global"}, []string{"user.global", "east.cluster.user.global"}
	return []Desired{se, dr, vs}
}

// Hand-written VirtualServices and DestinationRules on an intent's host, of
// a kind it writes there, are adopted when the intent declares everything
// they name, and refused with the reason otherwise; those in other
// clusters or on other hosts are neither.
func TestRoutesToAdoptSortsWhatTheIntentCanCarry(t *testing.T) {
	e, fc := newFakeEngine(t, "east", "west")
	route := func(dest string) map[string]any {
		return map[string]any{"route": []any{map[string]any{"destination": map[string]any{"host": dest}}}}
	}
	putRoute(t, fc, "east", "VirtualService", "user-routes", map[string]any{"hosts": []any{"user.global"}, "http": []any{route("user.users.svc.cluster.local"), route("east.cluster.user.global")}})
	putRoute(t, fc, "east", "DestinationRule", "user-dr", map[string]any{"host": "user.global"})
	putRoute(t, fc, "east", "VirtualService", "wide-routes", map[string]any{"hosts": []any{"user.global", "other.global"}, "http": []any{route("billing.global")}})
	putRoute(t, fc, "east", "VirtualService", "edge-routes", map[string]any{"hosts": []any{"user.global"}, "gateways": []any{"istio-system/edge"}, "http": []any{route("user.global")}})
	putRoute(t, fc, "east", "VirtualService", "delegating", map[string]any{"hosts": []any{"user.global"}, "http": []any{map[string]any{"delegate": map[string]any{"name": "d", "namespace": "users"}}}})
	putRoute(t, fc, "east", "DestinationRule", "picky-dr", map[string]any{"host": "user.global", "workloadSelector": map[string]any{"matchLabels": map[string]any{"app": "a"}}})
	putRoute(t, fc, "east", "DestinationRule", "versions-dr", map[string]any{"host": "user.global", "subsets": []any{map[string]any{"name": "east"}, map[string]any{"name": "v1"}}})
	putRoute(t, fc, "east", "VirtualService", "elsewhere", map[string]any{"hosts": []any{"other.global"}})
	putRoute(t, fc, "west", "VirtualService", "user-routes", map[string]any{"hosts": []any{"user.global"}})

	adopt, refuse, unreadable := e.RoutesToAdopt(context.Background(), routeDesired(), true)
	if len(unreadable) > 0 {
		t.Fatalf("unreadable: %v", unreadable)
	}
	var got []string
	for _, h := range adopt {
		got = append(got, h.String())
	}
	if want := "DestinationRule users/user-dr in cluster east (host user.global);VirtualService users/user-routes in cluster east (host user.global)"; strings.Join(got, ";") != want {
		t.Fatalf("adopted %q, want %q", got, want)
	}
	if adopt[1].UID != "uid-user-routes" || adopt[1].ResourceVersion != "7" {
		t.Errorf("the adopted VirtualService does not carry the UID and resourceVersion read: %+v", adopt[1])
	}
	whys := map[string]string{}
	for _, h := range refuse {
		whys[h.Name] = h.Why
	}
	for name, want := range map[string][]string{
		"wide-routes": {"also serves other.global", "routes to billing.global", "does not declare"},
		"edge-routes": {"gateways istio-system/edge"},
		"delegating":  {"delegates to the VirtualServices users/d"},
		"picky-dr":    {"workloadSelector"},
		"versions-dr": {"defines the subsets v1, which the intent's DestinationRule does not"},
	} {
		for _, w := range want {
			if !strings.Contains(whys[name], w) {
				t.Errorf("%s: the reason %q does not say %q", name, whys[name], w)
			}
		}
	}
	if len(refuse) != 5 {
		t.Errorf("refused %d objects, want the five that say what the intent does not: %v", len(refuse), whys)
	}
	if list := HandWrittenList(refuse); !strings.Contains(list, "- VirtualService users/wide-routes in cluster east (host user.global): it also serves") {
		t.Errorf("the list does not name the object with its reason:\n%s", list)
	}

	// An intent that writes no VirtualService there takes none over: the
	// hand-written ones stay the plan's warning.
	adopt, refuse, _ = e.RoutesToAdopt(context.Background(), routeDesired()[:2], true)
	for _, h := range append(adopt, refuse...) {
		if h.Kind == "VirtualService" {
			t.Errorf("an intent without a VirtualService on the host adopts or refuses %s (%s)", h, h.Why)
		}
	}
	if len(adopt) != 1 || adopt[0].Name != "user-dr" {
		t.Errorf("an intent with a DestinationRule on the host adopts %v, want user-dr", adopt)
	}
}

// DeleteAdopted deletes each adopted object with the UID and
// resourceVersion read as preconditions; one already gone is no error,
// and a conflict (the object changed since) is named.
func TestDeleteAdoptedDeletesOnlyTheObjectRead(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	putRoute(t, fc, "east", "VirtualService", "user-routes", map[string]any{"hosts": []any{"user.global"}})
	putRoute(t, fc, "east", "DestinationRule", "user-dr", map[string]any{"host": "user.global"})
	adopt, _, _ := e.RoutesToAdopt(context.Background(), routeDesired(), true)
	gone := HandWritten{Cluster: "east", Kind: "VirtualService", Namespace: "users", Name: "gone", Host: "user.global", UID: "u", ResourceVersion: "1"}
	if errs := e.DeleteAdopted(context.Background(), testOwner, append(adopt, gone)); len(errs) > 0 {
		t.Fatalf("delete: %v", errs)
	}
	var preconditions []string
	for _, a := range fc["east"].Actions() {
		if d, ok := a.(k8stesting.DeleteActionImpl); ok {
			p := d.GetDeleteOptions().Preconditions
			if p == nil || p.UID == nil || p.ResourceVersion == nil {
				t.Fatalf("delete of %s without UID and resourceVersion preconditions", d.GetName())
			}
			preconditions = append(preconditions, d.GetName()+"="+string(*p.UID)+"@"+*p.ResourceVersion)
		}
	}
	if strings.Join(preconditions, ",") != "user-dr=uid-user-dr@7,user-routes=uid-user-routes@7,gone=u@1" {
		t.Fatalf("deletes: %v", preconditions)
	}
	for _, gvr := range []schema.GroupVersionResource{gvrVirtualServices, gvrDestinationRules} {
		if l, err := fc["east"].Resource(gvr).Namespace("users").List(context.Background(), metav1.ListOptions{}); err != nil || len(l.Items) > 0 {
			t.Fatalf("left after the delete: %v (err %v)", l, err)
		}
	}

	e, fc = newFakeEngine(t, "east")
	putRoute(t, fc, "east", "VirtualService", "user-routes", map[string]any{"hosts": []any{"user.global"}})
	adopt, _, _ = e.RoutesToAdopt(context.Background(), routeDesired(), true)
	fc["east"].PrependReactor("delete", "virtualservices", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewConflict(gvrVirtualServices.GroupResource(), "user-routes", errors.New("the UID in the precondition does not match"))
	})
	errs := e.DeleteAdopted(context.Background(), testOwner, adopt)
	if len(errs) != 1 || !strings.Contains(errs[0].Detail, "changed after it was read") || !strings.Contains(errs[0].Detail, "terraform plan again") {
		t.Fatalf("a conflicting delete: want one error saying the object changed and what to do, got %v", errs)
	}
}

// The apply takes over exactly what its plan recorded: an object still as
// the plan read it is deleted; one edited since (same UID, another
// resourceVersion) is Changed, not deleted; one written after the plan,
// or replaced under a recorded name (another UID), has Appeared and is
// left alone; a recorded object gone since is nothing to do.
func TestAdoptionAtApplyTakesOverOnlyWhatThePlanRecorded(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	putRoute(t, fc, "east", "VirtualService", "user-routes", map[string]any{"hosts": []any{"user.global"}})
	putRoute(t, fc, "east", "DestinationRule", "user-dr", map[string]any{"host": "user.global"})
	planned, _, _ := e.RoutesToAdopt(context.Background(), routeDesired(), false)
	if len(planned) != 2 {
		t.Fatalf("the plan found %v, want user-dr and user-routes", planned)
	}
	// Recorded and read back as the adopted attribute carries them.
	var recorded []HandWritten
	for _, h := range planned {
		back, err := HandWrittenFromRecord(h.Key(), h.Stamp())
		if err != nil {
			t.Fatal(err)
		}
		if back.String() != h.String() || back.UID != h.UID || back.ResourceVersion != h.ResourceVersion {
			t.Fatalf("the record of %s reads back as %+v", h, back)
		}
		recorded = append(recorded, back)
	}
	recorded = append(recorded, HandWritten{Cluster: "east", Kind: "VirtualService", Namespace: "users", Name: "gone", Host: "user.global", UID: "u", ResourceVersion: "1"},
		// late-routes of an earlier object of that name, deleted since
		HandWritten{Cluster: "east", Kind: "VirtualService", Namespace: "users", Name: "late-routes", Host: "user.global", UID: "uid-earlier", ResourceVersion: "7"})

	// Between plan and apply: user-dr is edited, a second VirtualService
	// is written, user-routes stays as it was.
	dr, err := fc["east"].Resource(gvrDestinationRules).Namespace("users").Get(context.Background(), "user-dr", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dr.SetResourceVersion("8")
	if err := fc["east"].Tracker().Update(gvrDestinationRules, dr, "users"); err != nil {
		t.Fatal(err)
	}
	putRoute(t, fc, "east", "VirtualService", "late-routes", map[string]any{"hosts": []any{"user.global"}})

	a := e.AdoptionAtApply(context.Background(), routeDesired(), recorded)
	names := func(hs []HandWritten) string {
		var out []string
		for _, h := range hs {
			out = append(out, h.Name+"@"+h.ResourceVersion)
		}
		return strings.Join(out, ",")
	}
	if got := names(a.Delete); got != "user-routes@7" {
		t.Errorf("deletes %q, want user-routes alone, as the plan read it", got)
	}
	if got := names(a.Changed); got != "user-dr@8" {
		t.Errorf("changed since the plan: %q, want user-dr as it is now", got)
	}
	if got := names(a.Appeared); got != "late-routes@7" {
		t.Errorf("not named by the plan: %q, want late-routes", got)
	}
	if _, err := HandWrittenFromRecord("east/VirtualService.networking.istio.io/users/x", "host=user.global"); err == nil {
		t.Error("a record without uid and resourceVersion reads back")
	}
}
