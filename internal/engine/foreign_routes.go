package engine

import (
	"context"
	"fmt"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Hand-written VirtualServices and DestinationRules on an intent's host
// (issue 38): Istio's sidecars follow one VirtualService per host and
// merge DestinationRules unpredictably, so one that this provider did not
// write, on a host an intent serves, decides routing next to the
// intent's. The plan warns about each (ForeignRoutes), from one LIST per
// cluster and kind per process of the objects without our managed-by
// label.

var routeKinds = []schema.GroupVersionKind{
	{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"},
	{Group: "networking.istio.io", Version: "v1", Kind: "DestinationRule"},
}

// foreignRoutes caches, per cluster, the VirtualServices and
// DestinationRules this provider did not write.
type foreignRoutes struct {
	mu sync.Mutex
	m  map[string]*foreignList
}

type foreignList struct {
	once  sync.Once
	items []unstructured.Unstructured
	err   error
}

func (e *Engine) foreignIn(ctx context.Context, cluster string) ([]unstructured.Unstructured, error) {
	e.foreign.mu.Lock()
	if e.foreign.m == nil {
		e.foreign.m = map[string]*foreignList{}
	}
	l := e.foreign.m[cluster]
	if l == nil {
		l = &foreignList{}
		e.foreign.m[cluster] = l
	}
	e.foreign.mu.Unlock()
	l.once.Do(func() {
		for _, gvk := range routeKinds {
			items, _, err := e.Search(ctx, cluster, gvk, metav1.ListOptions{LabelSelector: LabelManagedBy + "!=" + ManagedByValue})
			if err != nil {
				l.err = err
				return
			}
			l.items = append(l.items, items...)
		}
	})
	return l.items, l.err
}

// hostsOf returns the hosts an Istio object names (spec.hosts, spec.host).
func hostsOf(obj map[string]any) []string {
	spec, _ := obj["spec"].(map[string]any)
	var out []string
	if h, ok := spec["host"].(string); ok && h != "" {
		out = append(out, h)
	}
	if hs, ok := spec["hosts"].([]any); ok {
		for _, h := range hs {
			if s, ok := h.(string); ok && s != "" {
				out = append(out, s)
			}
		}
	}
	return out
}

// ForeignRoutes lists, as "<Kind> <namespace>/<name> in cluster <c>
// (host <h>)", the VirtualServices and DestinationRules this provider did
// not write that name a host the desired objects name, in their cluster.
// Clusters that cannot be listed are skipped: the check is a warning.
func (e *Engine) ForeignRoutes(ctx context.Context, desired []Desired) []string {
	found, _ := e.handWritten(ctx, desired, false)
	out := make([]string, len(found))
	for i, h := range found {
		out[i] = h.String()
	}
	return out
}

// ForeignRoutesHint is the fix the plan's warning gives.
func ForeignRoutesHint(found []string) string {
	return fmt.Sprintf("These objects were not written by terraform-provider-mesh and name a host this intent serves: %s. "+
		"Istio's sidecars follow one VirtualService per host, so routing depends on which one they pick. "+
		"Adopt them: set adopt_existing = true on the intent that writes that kind for the host (a mesh_traffic_policy on it writes its VirtualService, its mesh_virtual_destination its DestinationRules), or import that intent with adopt:<name>; "+
		"its apply then replaces them with its own (see the migrating guide). Or delete them once this intent is applied.",
		strings.Join(found, ", "))
}
