package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/virtualdestination"
)

// A virtual destination leaves a record of its intent (a ConfigMap named
// like its other objects) in every cluster where it has objects. Traffic
// and access policies need a virtual destination's backends. While
// planning they find them among the virtual destinations planned in the
// same run, without contacting a cluster; but when Terraform applies a new
// policy it plans that policy once more, and an unchanged virtual
// destination is not planned again then. The record answers that case (and
// a virtual destination managed in another Terraform state).

// lookupVirtualDestination finds the virtual destination with a hostname:
// first among those planned in this run, then in the records in the
// clusters.
//
// errPendingDestination means the virtual destination is planned in this
// run but its configuration is known only after apply.
func lookupVirtualDestination(ctx context.Context, data *providerData, hostname string) (virtualdestination.Intent, bool, error) {
	if data == nil {
		return virtualdestination.Intent{}, false, nil
	}
	if in, pending, ok := data.Destinations.lookup(hostname); ok {
		if pending {
			return in, false, errPendingDestination
		}
		return in, true, nil
	}
	sel := engine.Owner{Kind: "virtual-destination"}.KindSelector()
	var errs []string
	for _, cluster := range data.Registry.Names() {
		c, err := data.Clients.Get(cluster)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", cluster, err))
			continue
		}
		list, err := c.Dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}).
			List(ctx, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", cluster, err))
			continue
		}
		for _, item := range list.Items {
			d, _, _ := unstructuredStringMap(item.Object, "data")
			if d[virtualdestination.RecordHostnameKey] != hostname {
				continue
			}
			var in virtualdestination.Intent
			if err := json.Unmarshal([]byte(d[virtualdestination.RecordIntentKey]), &in); err != nil {
				return in, false, fmt.Errorf("the record of %s in cluster %s cannot be read: %v", hostname, cluster, err)
			}
			return in, true, nil
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return virtualdestination.Intent{}, false, fmt.Errorf("some clusters could not be searched: %v", errs)
	}
	return virtualdestination.Intent{}, false, nil
}

var errPendingDestination = errors.New("the virtual destination's configuration is known only after apply")
