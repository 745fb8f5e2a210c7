package shareddata

import (
	"cmp"
	"context"
	"slices"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// Records looks virtual destinations' records up through an engine: its
// listing of the records namespace, its pull clusters' artifacts.
type Records struct{ *engine.Engine }

// Keys of a virtual destination's record (virtualdestination.RecordHostnameKey
// RecordIntentKey and RecordFormatKey).
const (
	recordHostnameKey = "hostname"
	recordIntentKey   = "intent"
	recordFormatKey   = "format"
)

// Record is a virtual destination's record as one cluster holds it, with
// its provenance: the instance (owner name and ID) that wrote it.
type Record struct {
	Cluster   string
	Namespace string
	Name      string
	// OwnerName and OwnerID are its owner labels. OwnerID is empty when
	// the record names no instance: then nothing ties it to a state.
	OwnerName string
	OwnerID   string
	Hostname  string
	// Intent is the virtual destination's intent, as JSON, in format
	// version Format ("" for records of builds before record formats);
	// virtualdestination.DecodeRecord reads it.
	Intent string
	Format string
	// Extra are the data keys besides hostname, intent and format,
	// sorted: none in a record this build (or an earlier one) wrote, so
	// a newer build's; the lookup refuses the record naming them.
	Extra []string
}

// Where names the record for messages.
func (r Record) Where() string {
	return "ConfigMap " + r.Namespace + "/" + r.Name + " in cluster " + r.Cluster
}

// Lookup lists, in the records namespace of every cluster given, the
// records of hostname: ConfigMaps this provider wrote for a virtual
// destination (managed-by and owner labels). Records are read there and
// nowhere else, from the engine's listing of that namespace's ConfigMaps
// (listcache.go): one LIST per cluster however many policies look a
// hostname up, again only after this process wrote a ConfigMap there.
// With withElsewhere, ConfigMaps that look like records of hostname in
// other namespaces are returned in elsewhere, for a warning; that search
// is tried once per cluster and process (the documented Role does not
// allow it, and a refusal is not an error). A cluster that cannot be
// searched is an error in errs; the records of the others are returned
// all the same.
func (e Records) Lookup(ctx context.Context, clusters []string, hostname string, withElsewhere bool) (records []Record, elsewhere []Record, errs engine.Errors) {
	ns := e.RecordsNamespaceName()
	for _, cluster := range clusters {
		if objs, pull, err := e.PulledObjects(ctx, cluster, "Reading virtual destination records from the artifact"); pull {
			// A pull cluster's records are those the state publishes in
			// its artifact, read back from the registry: records another
			// state publishes for the cluster are in its own artifact.
			if err != nil {
				errs = append(errs, err)
			}
			for _, m := range objs {
				if r, ok := recordOf(cluster, &unstructured.Unstructured{Object: m}); ok && r.Namespace == ns && r.Hostname == hostname {
					records = append(records, r)
				}
			}
			continue
		}
		c, err := e.Clients.Get(cluster)
		if err != nil {
			errs = append(errs, engine.ClusterError(cluster, "Reading virtual destination records", err))
			continue
		}
		if withElsewhere {
			for _, r := range e.recordsElsewhere(ctx, c.Dynamic, cluster) {
				if r.Namespace != ns && r.Hostname == hostname {
					elsewhere = append(elsewhere, r)
				}
			}
		}
		listed, lerr := e.ListedConfigMaps(ctx, cluster, "Reading virtual destination records")
		if lerr != nil {
			errs = append(errs, lerr)
			continue
		}
		for _, item := range listed {
			if r, ok := recordOf(cluster, item); ok && r.Namespace == ns && r.Hostname == hostname {
				records = append(records, r)
			}
		}
	}
	sortRecords(records)
	sortRecords(elsewhere)
	errs.Sort()
	return records, elsewhere, errs
}

// elsewhereScan is the one search of a cluster for records outside the
// records namespace in this process.
type elsewhereScan struct {
	ready   chan struct{}
	records []Record
}

// elsewhereScans are an engine's elsewhereScan by cluster (its Memo under
// elsewhereKey).
type elsewhereScans struct {
	mu sync.Mutex
	m  map[string]*elsewhereScan
}

type elsewhereKey struct{}

// recordsElsewhere lists the ConfigMaps with record labels in every
// namespace of cluster, once per process: where this identity may list
// them (a least-privileged one may not, and that is fine: nothing).
func (e Records) recordsElsewhere(ctx context.Context, dyn dynamic.Interface, cluster string) []Record {
	scans := e.Memo(elsewhereKey{}, func() any { return &elsewhereScans{m: map[string]*elsewhereScan{}} }).(*elsewhereScans)
	scans.mu.Lock()
	s := scans.m[cluster]
	first := s == nil
	if first {
		s = &elsewhereScan{ready: make(chan struct{})}
		scans.m[cluster] = s
	}
	scans.mu.Unlock()
	if first {
		sel := engine.Owner{Kind: intentkind.VirtualDestination.Owner}.KindSelector()
		if all, err := dyn.Resource(configMaps).List(ctx, metav1.ListOptions{LabelSelector: sel}); err == nil {
			for i := range all.Items {
				if r, ok := recordOf(cluster, &all.Items[i]); ok {
					s.records = append(s.records, r)
				}
			}
		}
		close(s.ready)
	}
	select {
	case <-s.ready:
		return s.records
	case <-ctx.Done():
		return nil
	}
}

func recordOf(cluster string, item *unstructured.Unstructured) (Record, bool) {
	labels := item.GetLabels()
	if labels[engine.LabelManagedBy] != engine.ManagedByValue || labels[engine.LabelOwnerKind] != intentkind.VirtualDestination.Owner {
		return Record{}, false
	}
	data, _, err := unstructured.NestedStringMap(item.Object, "data")
	if err != nil {
		return Record{}, false // not a record's shape: no record
	}
	var extra []string
	for k := range data {
		if k != recordHostnameKey && k != recordIntentKey && k != recordFormatKey {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	return Record{
		Cluster: cluster, Namespace: item.GetNamespace(), Name: item.GetName(),
		OwnerName: labels[engine.LabelOwnerName], OwnerID: labels[engine.LabelOwnerID],
		Hostname: data[recordHostnameKey], Intent: data[recordIntentKey], Format: data[recordFormatKey],
		Extra: extra,
	}, true
}

func sortRecords(rs []Record) {
	slices.SortFunc(rs, func(a, b Record) int {
		return cmp.Or(cmp.Compare(a.Cluster, b.Cluster), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
}
