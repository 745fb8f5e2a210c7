package engine

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// A hand-written VirtualService on a host an intent's objects name, in
// the same cluster, is reported; ours, other hosts, and other clusters
// are not.
func TestForeignRoutesNameHandWrittenObjectsOnTheHost(t *testing.T) {
	e, fc := newFakeEngine(t, "east", "west")
	vs := func(cluster, name, host string, labels map[string]string) {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
			"spec": map[string]any{"hosts": []any{host}}}}
		obj.SetNamespace("users")
		obj.SetName(name)
		obj.SetLabels(labels)
		if err := fc[cluster].Tracker().Create(schema.GroupVersionResource{Group: "networking.istio.io", Version: "v1", Resource: "virtualservices"}, obj, "users"); err != nil {
			t.Fatal(err)
		}
	}
	vs("east", "user-routes", "user.global", nil)
	vs("east", "other-routes", "other.global", nil)
	vs("east", "ours", "user.global", testOwner.Labels())
	vs("west", "user-routes", "user.global", nil)
	d := serviceEntry(testOwner, "east", "vd-user")
	d.Manifest["spec"] = map[string]any{"hosts": []any{"user.global"}}
	got := e.ForeignRoutes(context.Background(), []Desired{d})
	if strings.Join(got, ";") != "VirtualService users/user-routes in cluster east (host user.global)" {
		t.Fatalf("found %q, want east's hand-written user-routes alone", got)
	}
	if hint := ForeignRoutesHint(got); !strings.Contains(hint, "user-routes") || !strings.Contains(hint, "adopt:") {
		t.Errorf("the hint does not name the object and the fix: %s", hint)
	}
}
