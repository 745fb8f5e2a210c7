package virtualdestination

import (
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"

	"encoding/json"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Keys of a virtual destination's record.
const (
	RecordHostnameKey = "hostname"
	RecordIntentKey   = "intent"
)

// DefaultRecordsNamespace is where records live unless the provider's
// records_namespace says otherwise: a namespace of their own, so that the
// provider needs ConfigMap access there only.
const DefaultRecordsNamespace = "mesh-intent-records"

// WithRecords adds to a virtual destination's objects its record: a
// ConfigMap named like its other objects, in the records namespace of every
// cluster where it has objects, holding the intent. Traffic and access
// policies planned when the virtual destination is not (Terraform re-plans
// only changed resources during apply, and another state may own it) read
// it there, and only there.
func WithRecords(in Intent, objs []translate.Object, recordsNamespace string) ([]translate.Object, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	ns := recordsNamespace
	if ns == "" {
		ns = DefaultRecordsNamespace
	}
	seen := map[string]bool{}
	out := append([]translate.Object(nil), objs...)
	for _, o := range objs {
		if seen[o.Cluster] {
			continue
		}
		seen[o.Cluster] = true
		out = append(out, translate.Object{Cluster: o.Cluster, Resource: &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Name: ObjectName(in.Name), Namespace: ns},
			Data:       map[string]string{RecordHostnameKey: in.Hostname, RecordIntentKey: string(raw)},
		}})
	}
	translate.Sort(out)
	return out, nil
}
