package discovery

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// ListIntents finds the names of the intents of kind that have objects in
// clusters, with the clusters holding them: an intent by the owner-name
// label of its objects, a composed one by the contribution labels on the
// objects it shares. unreachable names the clusters that could not be
// searched, with the error.
func ListIntents(ctx context.Context, eng *engine.Engine, clusters []string, kind intentkind.Kind) (found map[string]map[string]bool, unreachable []string) {
	found = map[string]map[string]bool{}
	add := func(name, cluster string) {
		if found[name] == nil {
			found[name] = map[string]bool{}
		}
		found[name][cluster] = true
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
						add(name, cluster)
					}
					continue
				}
				for key := range labels {
					if name, ok := strings.CutPrefix(key, prefix); ok && name != "" {
						add(name, cluster)
					}
				}
			}
		}
	}
	return found, unreachable
}
