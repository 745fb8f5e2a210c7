package provider

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
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
// clusters' records namespace, and nowhere else: a ConfigMap with record
// labels elsewhere is anyone's, and could redirect a policy. Such records,
// where the provider may see them, are returned in ignored, for a warning.
//
// errPendingDestination means the virtual destination is planned in this
// run but its configuration is known only after apply.
func lookupVirtualDestination(ctx context.Context, data *providerData, hostname string) (in virtualdestination.Intent, found bool, ignored []string, err error) {
	if data == nil {
		return virtualdestination.Intent{}, false, nil, nil
	}
	if in, pending, ok := data.Destinations.lookup(hostname); ok {
		if pending {
			return in, false, nil, errPendingDestination
		}
		return in, true, nil, nil
	}
	sel := engine.Owner{Kind: "virtual-destination"}.KindSelector()
	recordsNS := data.recordsNamespace()
	configmaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	var errs []string
	for _, cluster := range data.Registry.Names() {
		c, err := data.Clients.Get(cluster)
		if err != nil {
			errs = append(errs, fmt.Sprintf("%s: %v", cluster, err))
			continue
		}
		// Records planted elsewhere, if this identity may see them (a
		// least-privileged one may not, and that is fine).
		if all, err := c.Dynamic.Resource(configmaps).List(ctx, metav1.ListOptions{LabelSelector: sel}); err == nil {
			for _, item := range all.Items {
				d, _, _ := unstructuredStringMap(item.Object, "data")
				if item.GetNamespace() != recordsNS && d[virtualdestination.RecordHostnameKey] == hostname {
					ignored = append(ignored, fmt.Sprintf("%s/%s in cluster %s", item.GetNamespace(), item.GetName(), cluster))
				}
			}
		}
		list, err := c.Dynamic.Resource(configmaps).Namespace(recordsNS).List(ctx, metav1.ListOptions{LabelSelector: sel})
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
				return in, false, ignored, fmt.Errorf("the record of %s in cluster %s cannot be read: %v", hostname, cluster, err)
			}
			return in, true, ignored, nil
		}
	}
	if len(errs) > 0 {
		sort.Strings(errs)
		return virtualdestination.Intent{}, false, ignored, fmt.Errorf("some clusters could not be searched: %v", errs)
	}
	return virtualdestination.Intent{}, false, ignored, nil
}

// warnIgnoredRecords warns about records of hostname found outside the
// records namespace.
func warnIgnoredRecords(diags *diag.Diagnostics, at path.Path, hostname, recordsNS string, ignored []string) {
	if len(ignored) == 0 {
		return
	}
	sort.Strings(ignored)
	diags.AddAttributeWarning(at, "Record outside the records namespace ignored",
		fmt.Sprintf("ConfigMaps that look like the record of virtual destination %q were found outside the records namespace %q and were ignored: %s. "+
			"Records are read only from %q; whoever created these may have meant to redirect this policy. Delete them, or find out who wrote them.",
			hostname, recordsNS, strings.Join(ignored, ", "), recordsNS))
}

var errPendingDestination = errors.New("the virtual destination's configuration is known only after apply")
