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

// WithVirtualDestinationRecords adds to a virtual destination's objects its
// record: a ConfigMap, named like its other objects, in every cluster where
// it has objects, holding the intent. Traffic and access policies planned
// when the virtual destination is not (Terraform re-plans only changed
// resources during apply, and another state may own it) read it there.
func WithRecords(in Intent, objs []translate.Object) ([]translate.Object, error) {
	raw, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	ns := in.Namespace
	if ns == "" {
		ns = translate.DefaultIstioNS
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
