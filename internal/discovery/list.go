package discovery

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// Listed is what a list found of one intent name: the clusters that hold
// its objects, and its instances as SearchInstances finds them (without
// the hand-written objects it looks for by name), so that an import of
// each listed name needs no second search.
type Listed struct {
	Clusters  map[string]bool
	Instances map[string]Instance
}

// ListIntents finds the intents of kind that have objects in clusters, by
// name: an intent by the owner-name label of its objects, a composed one
// by the contribution labels on the objects it shares. unreachable names
// the clusters that could not be searched, with the error.
func ListIntents(ctx context.Context, eng *engine.Engine, clusters []string, kind intentkind.Kind) (found map[string]Listed, unreachable []string) {
	found = map[string]Listed{}
	add := func(name, cluster string, k schema.GroupVersionKind, item unstructured.Unstructured) {
		l, ok := found[name]
		if !ok {
			l = Listed{Clusters: map[string]bool{}, Instances: map[string]Instance{}}
		}
		l.Clusters[cluster] = true
		addObject(l.Instances, kind, k, engine.Owner{Kind: kind.Owner, Name: name}.ContributionKey(), cluster, item)
		found[name] = l
	}
	selector := engine.Owner{Kind: kind.Owner}.KindSelector()
	prefix := engine.Owner{Kind: kind.Owner}.ContributionKey() // "<kind>.mesh-intent.io/"
	if kind.Composed {
		selector = engine.LabelManagedBy + "=" + engine.ManagedByValue
	}
	for _, cluster := range clusters {
		for _, k := range kind.Writes {
			items, _, err := eng.Search(ctx, cluster, k, metav1.ListOptions{LabelSelector: selector})
			if err != nil {
				unreachable = append(unreachable, fmt.Sprintf("%s: %v", cluster, err))
				break
			}
			for _, item := range items {
				labels := item.GetLabels()
				if !kind.Composed {
					if name := labels[engine.LabelOwnerName]; name != "" {
						add(name, cluster, k, item)
					}
					continue
				}
				for key := range labels {
					if name, ok := strings.CutPrefix(key, prefix); ok && name != "" {
						add(name, cluster, k, item)
					}
				}
			}
		}
	}
	return found, unreachable
}
