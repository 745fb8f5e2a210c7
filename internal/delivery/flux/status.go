package flux

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Condition is one of a Flux object's status conditions.
type Condition struct {
	// Status is "True", "False" or "Unknown"; empty when the condition is
	// absent (Flux has not reconciled the object yet).
	Status  string
	Reason  string
	Message string
}

// Status is what a Kustomization reports about the artifact it applies.
type Status struct {
	// LastAppliedRevision is the revision last applied successfully,
	// "<tag>@sha256:<hex>" for an OCIRepository source.
	LastAppliedRevision string
	// LastAttemptedRevision is the revision last tried, applied or not.
	LastAttemptedRevision string
	// Current is false while Flux has not yet reconciled the object's
	// latest spec (status.observedGeneration behind metadata.generation).
	Current bool
	// Ready is the Ready condition.
	Ready Condition
	// Inventory holds the keys of the objects Flux applied and will prune,
	// in the cluster given to ParseStatus, sorted.
	Inventory []translate.Key
}

// IsReady says whether Flux reports the current spec applied and Ready.
func (s Status) IsReady() bool { return s.Current && s.Ready.Status == "True" }

// AppliedAt says whether the Kustomization is Ready with revision applied.
func (s Status) AppliedAt(revision string) bool {
	return s.IsReady() && s.LastAppliedRevision == revision
}

// Revision is how Flux names an OCI artifact's revision: the tag and the
// manifest digest, "<tag>@sha256:<hex>".
func Revision(tag, digest string) string { return tag + "@" + digest }

// ParseStatus reads a Kustomization's status. cluster is set on every
// inventory key. A Kustomization without a status yet parses to a Status
// with no revision and an empty Ready condition.
func ParseStatus(obj *unstructured.Unstructured, cluster string) (Status, error) {
	if obj == nil {
		return Status{}, fmt.Errorf("no Kustomization")
	}
	if gv, kind := obj.GetAPIVersion(), obj.GetKind(); kind != KustomizationKind || !strings.HasPrefix(gv, "kustomize.toolkit.fluxcd.io/") {
		return Status{}, fmt.Errorf("%s %s is not a Flux Kustomization", gv, kind)
	}
	where := fmt.Sprintf("Kustomization %s/%s", obj.GetNamespace(), obj.GetName())
	var s Status
	var err error
	if s.LastAppliedRevision, err = str(obj, "status", "lastAppliedRevision"); err != nil {
		return Status{}, fmt.Errorf("%s: %w", where, err)
	}
	if s.LastAttemptedRevision, err = str(obj, "status", "lastAttemptedRevision"); err != nil {
		return Status{}, fmt.Errorf("%s: %w", where, err)
	}
	observed, _, err := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if err != nil {
		return Status{}, fmt.Errorf("%s: %w", where, err)
	}
	s.Current = observed >= obj.GetGeneration() && observed > 0
	conds, _, err := unstructured.NestedSlice(obj.Object, "status", "conditions")
	if err != nil {
		return Status{}, fmt.Errorf("%s: %w", where, err)
	}
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			return Status{}, fmt.Errorf("%s: status.conditions holds %T, not an object", where, c)
		}
		if m["type"] != "Ready" {
			continue
		}
		s.Ready = Condition{Status: field(m, "status"), Reason: field(m, "reason"), Message: field(m, "message")}
	}
	entries, _, err := unstructured.NestedSlice(obj.Object, "status", "inventory", "entries")
	if err != nil {
		return Status{}, fmt.Errorf("%s: %w", where, err)
	}
	for _, e := range entries {
		m, ok := e.(map[string]any)
		if !ok {
			return Status{}, fmt.Errorf("%s: status.inventory.entries holds %T, not an object", where, e)
		}
		k, err := InventoryKey(cluster, field(m, "id"), field(m, "v"))
		if err != nil {
			return Status{}, fmt.Errorf("%s: %w", where, err)
		}
		s.Inventory = append(s.Inventory, k)
	}
	slices.SortFunc(s.Inventory, translate.Key.Compare)
	return s, nil
}

// InventoryKey turns one entry of a Kustomization's inventory, its id
// "<namespace>_<name>_<group>_<kind>" and version, into the object's key in
// cluster. Kubernetes names, namespaces, groups and kinds hold no "_", so
// the id splits unambiguously; a cluster-scoped object has an empty
// namespace and a core object an empty group.
func InventoryKey(cluster, id, version string) (translate.Key, error) {
	parts := strings.Split(id, "_")
	if len(parts) != 4 || parts[1] == "" || parts[3] == "" {
		return translate.Key{}, fmt.Errorf("inventory id %q is not <namespace>_<name>_<group>_<kind>", id)
	}
	if version == "" {
		return translate.Key{}, fmt.Errorf("inventory entry %q has no version", id)
	}
	gv := schema.GroupVersion{Group: parts[2], Version: version}
	return translate.Key{Cluster: cluster, APIVersion: gv.String(), Kind: parts[3], Namespace: parts[0], Name: parts[1]}, nil
}

// InventoryID is the id Flux gives an object in its inventory, the inverse
// of InventoryKey (without the version).
func InventoryID(k translate.Key) (string, error) {
	gv, err := schema.ParseGroupVersion(k.APIVersion)
	if err != nil {
		return "", fmt.Errorf("%s: %w", k, err)
	}
	return k.Namespace + "_" + k.Name + "_" + gv.Group + "_" + k.Kind, nil
}

func str(obj *unstructured.Unstructured, fields ...string) (string, error) {
	s, _, err := unstructured.NestedString(obj.Object, fields...)
	return s, err
}

// field is a condition's string field, empty when absent.
func field(m map[string]any, name string) string {
	s, _ := m[name].(string)
	return s
}
