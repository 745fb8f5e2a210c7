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
	vs.Part = map[string]any{"kind": "VirtualService", "spec": map[string]any{"hosts": []any{"user.global"}, "http": []any{
		map[string]any{"name": "user-timeout", "timeout": "1s", "route": []any{map[string]any{"destination": map[string]any{"host": "east.cluster.user.global"}}}}}}}
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
	timed := route("east.cluster.user.global")
	timed["timeout"] = "1000ms" // the intent's 1s
	putRoute(t, fc, "east", "VirtualService", "user-routes", map[string]any{"hosts": []any{"user.global"}, "http": []any{timed}})
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

// A hand-written object that says what the intent's objects on its host
// would not (retries, a weighted split, a route of its own match, a
// connection pool, subset labels) is refused, naming each field, its
// value, what the intent says and the fix; the same meaning written
// otherwise (1s and 1000ms, 5 and 5.0, retryOn in another order) is not
// a difference.
func TestRoutesToAdoptRefusesWhatTheIntentWouldLose(t *testing.T) {
	desired := routeDesired()
	desired[1].Manifest["spec"] = map[string]any{"host": "user.global", "subsets": []any{map[string]any{"name": "east"}},
		"trafficPolicy": map[string]any{"tls": map[string]any{"mode": "ISTIO_MUTUAL"}, "outlierDetection": map[string]any{"interval": "10s", "consecutive5xxErrors": float64(5)}}}
	desired[2].Part["spec"].(map[string]any)["http"] = []any{
		map[string]any{"name": "user-v2", "timeout": "3s", "match": []any{map[string]any{"uri": map[string]any{"prefix": "/v2"}}},
			"route": []any{map[string]any{"destination": map[string]any{"host": "east.cluster.user.global"}}}},
		map[string]any{"name": "user-timeout", "timeout": "1s", "retries": map[string]any{"attempts": float64(3), "retryOn": "5xx,connect-failure"},
			"route": []any{map[string]any{"destination": map[string]any{"host": "east.cluster.user.global"}}}}}
	to := func(hosts ...string) []any {
		var out []any
		for _, h := range hosts {
			out = append(out, map[string]any{"destination": map[string]any{"host": h}, "weight": int64(100 / len(hosts))})
		}
		return out
	}
	for _, c := range []struct {
		kind string
		spec map[string]any
		lost []string // empty: adopted
	}{
		{"VirtualService", map[string]any{"hosts": []any{"user.global"}, "http": []any{map[string]any{"timeout": "1000ms", "retries": map[string]any{"attempts": int64(3), "retryOn": "connect-failure,5xx"}, "route": to("east.cluster.user.global")}}}, nil},
		// the same match, its condition named (a name is no part of it)
		{"VirtualService", map[string]any{"hosts": []any{"user.global"}, "http": []any{map[string]any{"match": []any{map[string]any{"name": "v2", "uri": map[string]any{"prefix": "/v2"}}}, "timeout": "3s", "route": to("east.cluster.user.global")}}}, nil},
		{"VirtualService", map[string]any{"hosts": []any{"user.global"}, "http": []any{map[string]any{"timeout": "1s", "retries": map[string]any{"attempts": int64(5), "retryOn": "5xx,connect-failure"}, "fault": map[string]any{"abort": map[string]any{"httpStatus": int64(503)}}, "route": to("east.cluster.user.global")}}},
			[]string{"http[0].retries.attempts = 5 (the intent's: 3; set mesh_traffic_policy retries", "http[0].fault.abort.httpStatus = 503 (the intent's: not set; set mesh_traffic_policy fault"}},
		{"VirtualService", map[string]any{"hosts": []any{"user.global"}, "http": []any{map[string]any{"timeout": "1s", "retries": map[string]any{"attempts": int64(3), "retryOn": "5xx,connect-failure"}, "route": to("east.cluster.user.global", "user.users.svc.cluster.local")}}},
			[]string{"http[0].route = [east.cluster.user.global 50%, user.users.svc.cluster.local 50%] (the intent's: [east.cluster.user.global 100%]; set mesh_traffic_policy traffic_shift"}},
		{"VirtualService", map[string]any{"hosts": []any{"user.global"}, "http": []any{map[string]any{"match": []any{map[string]any{"uri": map[string]any{"prefix": "/v3"}}}, "route": to("east.cluster.user.global")}}},
			[]string{`http[0], the route of requests matching [{"uri":{"prefix":"/v3"}}] (no route of the intent's matches them alike; set mesh_traffic_policy match and sources`}},
		{"DestinationRule", map[string]any{"host": "user.global", "trafficPolicy": map[string]any{"tls": map[string]any{"mode": "ISTIO_MUTUAL"}, "outlierDetection": map[string]any{"interval": "10000ms", "consecutive5xxErrors": int64(5)}}}, nil},
		{"DestinationRule", map[string]any{"host": "user.global", "trafficPolicy": map[string]any{"connectionPool": map[string]any{"tcp": map[string]any{"maxConnections": int64(100)}}, "outlierDetection": map[string]any{"interval": "30s"}},
			"subsets": []any{map[string]any{"name": "east", "labels": map[string]any{"version": "v1"}}}},
			[]string{"trafficPolicy.connectionPool.tcp.maxConnections = 100 (the intent's: not set; set mesh_traffic_policy connection_pool (a virtual destination's DestinationRule: after the adoption, with a policy on it), or remove it from the hand-written object first)",
				`trafficPolicy.outlierDetection.interval = "30s" (the intent's: "10s"; set mesh_virtual_destination failover.outlier_detection`,
				`subsets[east].labels.version = "v1" (the intent's: not set; no attribute of the intent writes it: remove it from the hand-written object first`}},
	} {
		e, fc := newFakeEngine(t, "east")
		putRoute(t, fc, "east", c.kind, "hand", c.spec)
		adopt, refuse, _ := e.RoutesToAdopt(context.Background(), desired, false)
		if len(c.lost) == 0 {
			if len(adopt) != 1 || len(refuse) > 0 {
				t.Errorf("%s %v: adopted %v, refused %v; want it adopted: the intent says the same", c.kind, c.spec, adopt, HandWrittenList(refuse))
			}
			continue
		}
		if len(refuse) != 1 {
			t.Errorf("%s %v: refused %v, adopted %v; want it refused", c.kind, c.spec, refuse, adopt)
			continue
		}
		for _, want := range c.lost {
			if !strings.Contains(refuse[0].Why, want) {
				t.Errorf("%s: the reason does not say %q:\n%s", c.kind, want, refuse[0].Why)
			}
		}
	}
}
