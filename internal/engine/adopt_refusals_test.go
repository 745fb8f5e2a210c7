package engine

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

func putRouteNS(t *testing.T, fc fakeClusters, ns, kind, name string, labels map[string]string, owners bool, spec map[string]any) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": kind, "spec": spec}}
	obj.SetNamespace(ns)
	obj.SetName(name)
	obj.SetUID(types.UID("uid-" + name))
	obj.SetResourceVersion("7")
	obj.SetLabels(labels)
	if owners {
		obj.Object["metadata"].(map[string]any)["ownerReferences"] = []any{map[string]any{"apiVersion": "flagger.app/v1beta1", "kind": "Canary", "name": "user", "uid": "c1", "controller": true}}
	}
	gvr := gvrVirtualServices
	if kind == "DestinationRule" {
		gvr = gvrDestinationRules
	}
	if err := fc["east"].Tracker().Create(gvr, obj, ns); err != nil {
		t.Fatal(err)
	}
}

// a VS also serving the backend's own Service host (declared only as
// a ServiceEntry endpoint address, no VS written for it) is adopted, so
// the apply deletes the routing of user.users.svc.cluster.local.
func TestAdoptRefusesAVirtualServiceServingAHostTheIntentWritesNoneFor(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	putRouteNS(t, fc, "users", "VirtualService", "both", nil, false, map[string]any{
		"hosts": []any{"user.global", "user.users.svc.cluster.local"},
		"http": []any{map[string]any{"retries": map[string]any{"attempts": int64(5)}, "timeout": "1s",
			"route": []any{map[string]any{"destination": map[string]any{"host": "user.users.svc.cluster.local"}}}}}})
	adopt, refuse, _ := e.RoutesToAdopt(context.Background(), routeDesired(), true)
	t.Logf("adopt=%v refuse=%v", adopt, refuse)
	if len(adopt) == 1 {
		t.Errorf("adopted (will be deleted) though the intent writes no VirtualService for user.users.svc.cluster.local")
	}
}

// objects another controller owns (ownerReferences, another tool's
// managed-by) and another team's namespace-scoped DR (exportTo ".",
// TLS settings) are adopted.
func TestAdoptRefusesObjectsOfControllersAndNamespaceScopedOnes(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	putRouteNS(t, fc, "users", "VirtualService", "flagger-vs", map[string]string{LabelManagedBy: "Helm"}, true, map[string]any{
		"hosts": []any{"user.global"}, "http": []any{map[string]any{"route": []any{map[string]any{"destination": map[string]any{"host": "user.global"}}}}}})
	putRouteNS(t, fc, "users", "VirtualService", "rollout-vs", nil, true, map[string]any{ // owned, no label
		"hosts": []any{"user.global"}, "http": []any{map[string]any{"route": []any{map[string]any{"destination": map[string]any{"host": "user.global"}}}}}})
	putRouteNS(t, fc, "team-b", "DestinationRule", "team-b-dr", nil, false, map[string]any{
		"host": "user.global", "exportTo": []any{"."}, "trafficPolicy": map[string]any{"tls": map[string]any{"mode": "DISABLE"}, "connectionPool": map[string]any{"tcp": map[string]any{"maxConnections": int64(1)}}}})
	adopt, refuse, _ := e.RoutesToAdopt(context.Background(), routeDesired(), true)
	t.Logf("adopt=%v refuse=%v", adopt, refuse)
	if len(adopt) > 0 {
		t.Errorf("adopted (to delete): %v", adopt)
	}
	if len(refuse) != 3 {
		t.Errorf("refused %v, want the Helm-managed and the owned VirtualServices and the namespace-scoped DestinationRule, each named", refuse)
	}
	for _, h := range refuse {
		want := map[string]string{"flagger-vs": "managed by Helm", "rollout-vs": "owned by Canary user", "team-b-dr": "exportTo"}[h.Name]
		if !strings.Contains(h.Why, want) {
			t.Errorf("%s is refused for %q, want the reason %q", h.Name, h.Why, want)
		}
	}
}

// DeleteAdopted's cluster list dedupes only neighbours, but adopt is
// sorted by String() (kind first), so a cluster can run twice.
func TestDeleteAdoptedVisitsEachClusterOnce(t *testing.T) {
	e, fc := newFakeEngine(t, "east", "west")
	hs := []HandWritten{
		{Cluster: "east", Kind: "DestinationRule", Namespace: "users", Name: "a", UID: "ua", ResourceVersion: "1"},
		{Cluster: "west", Kind: "DestinationRule", Namespace: "users", Name: "b", UID: "ub", ResourceVersion: "1"},
		{Cluster: "east", Kind: "VirtualService", Namespace: "users", Name: "c", UID: "uc", ResourceVersion: "1"},
	}
	errs := e.DeleteAdopted(context.Background(), testOwner, hs)
	n := 0
	for _, a := range fc["east"].Actions() {
		if a.GetVerb() == "delete" {
			n++
		}
	}
	t.Logf("errs=%v east deletes=%d", errs, n)
	if n != 2 {
		t.Errorf("east got %d deletes for 2 objects", n)
	}
}

// the hand-written object of the intent's OWN name (adopted in place)
// is also listed for deletion.
func TestAdoptInPlaceNeverDeletesTheIntentsOwnName(t *testing.T) {
	e, fc := newFakeEngine(t, "east")
	putRouteNS(t, fc, "istio-system", "DestinationRule", "vd-user", nil, false, map[string]any{"host": "user.global", "subsets": []any{map[string]any{"name": "east"}}})
	adopt, refuse, _ := e.RoutesToAdopt(context.Background(), routeDesired(), true)
	t.Logf("adopt=%v refuse=%v", adopt, refuse)
	for _, h := range adopt {
		if h.Namespace == "istio-system" && h.Name == "vd-user" {
			t.Errorf("the object the apply rewrites in place is also to be deleted: %v", h)
		}
	}
}
