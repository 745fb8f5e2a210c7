// Package intentkind describes each kind of intent once: the owner kind its
// objects are labelled with, the Terraform resource that declares it, the
// Kubernetes kinds it writes and where it keeps its configuration for
// import. The engine, the provider (lifecycle, import), internal/discovery,
// internal/runstate and cmd/mesh-objects read these facts from here;
// docs/design/layout.md (3, "Intent kinds") lists where each one lives.
//
// The lifecycle hooks of a kind (what it does when its configuration is
// partly known, the names hand-written objects would have) are functions
// of the provider's models and live beside them, in the provider's
// importTarget and intentLifecycle.
package intentkind

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// Kind is the description of one intent kind.
type Kind struct {
	// Owner is the value of the owner-kind label (mesh-intent.io/owner-kind)
	// on the kind's objects, the middle of its field manager name
	// (<base>/<Owner>.<name>) and the first part of a rendered file name.
	Owner string
	// Resource is the Terraform resource type that declares the intent.
	Resource string
	// Writes are the Kubernetes kinds of the objects the intent writes,
	// which import searches.
	Writes []schema.GroupVersionKind
	// ConfigKind is the kind of the objects that keep the configuration
	// for import (ConfigAnnotation); empty for a composed kind, which
	// keeps it in its contribution annotation, and for kinds not imported
	// by name.
	ConfigKind string
	// Composed is set when intents of the kind share objects, each
	// contributing a part (docs/design.md, "Traffic policies compose").
	Composed bool
}

func gvk(apiVersion, kind string) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(apiVersion, kind)
}

// The intent kinds.
var (
	// VirtualDestination is mesh_virtual_destination: a global hostname
	// (ServiceEntry, DestinationRule) and its record (a ConfigMap in the
	// records namespace), which keeps the configuration.
	VirtualDestination = Kind{
		Owner:      "virtual-destination",
		Resource:   "mesh_virtual_destination",
		Writes:     []schema.GroupVersionKind{gvk(translate.NetworkingV1, "ServiceEntry"), gvk(translate.NetworkingV1, "DestinationRule"), gvk("v1", "ConfigMap")},
		ConfigKind: "ConfigMap",
	}
	// TrafficPolicy is mesh_traffic_policy: contributions to the
	// VirtualService and DestinationRule of a destination, shared with
	// the other traffic policies on it.
	TrafficPolicy = Kind{
		Owner:    "traffic-policy",
		Resource: "mesh_traffic_policy",
		Writes:   []schema.GroupVersionKind{gvk(translate.NetworkingV1, "VirtualService"), gvk(translate.NetworkingV1, "DestinationRule")},
		Composed: true,
	}
	// AccessPolicy is mesh_access_policy: AuthorizationPolicies, which keep
	// the configuration.
	AccessPolicy = Kind{
		Owner:      "access-policy",
		Resource:   "mesh_access_policy",
		Writes:     []schema.GroupVersionKind{gvk(translate.SecurityV1, "AuthorizationPolicy")},
		ConfigKind: "AuthorizationPolicy",
	}
	// Cluster is mesh_cluster: the east-west Gateway and the mesh-wide
	// PeerAuthentication and AuthorizationPolicies of one cluster.
	Cluster = Kind{
		Owner:    "cluster",
		Resource: "mesh_cluster",
		Writes:   []schema.GroupVersionKind{gvk(translate.NetworkingV1, "Gateway"), gvk(translate.SecurityV1, "PeerAuthentication"), gvk(translate.SecurityV1, "AuthorizationPolicy")},
	}
	// Workspace is mesh_workspace: its claims, ConfigMaps in the records
	// namespace.
	Workspace = Kind{
		Owner:    "workspace",
		Resource: "mesh_workspace",
		Writes:   []schema.GroupVersionKind{gvk("v1", "ConfigMap")},
	}
)

// All lists every intent kind.
var All = []Kind{VirtualDestination, TrafficPolicy, AccessPolicy, Cluster, Workspace}

// ByOwner returns the kind whose owner-kind label value is owner.
func ByOwner(owner string) (Kind, bool) {
	for _, k := range All {
		if k.Owner == owner {
			return k, true
		}
	}
	return Kind{}, false
}

// ResourceOf names the intent of owner kind owner called name as its
// resource, for messages: mesh_<kind> "<name>".
func ResourceOf(owner, name string) string {
	if k, ok := ByOwner(owner); ok {
		return fmt.Sprintf("%s %q", k.Resource, name)
	}
	return fmt.Sprintf("mesh_%s %q", strings.ReplaceAll(owner, "-", "_"), name)
}

// WritesKind reports whether the kind writes objects of the Kubernetes
// kind named kind (any group).
func (k Kind) WritesKind(kind string) bool {
	for _, w := range k.Writes {
		if w.Kind == kind {
			return true
		}
	}
	return false
}

// Written lists every Kubernetes kind some intent writes, once each,
// sorted.
func Written() []schema.GroupVersionKind {
	seen := map[schema.GroupVersionKind]bool{}
	var out []schema.GroupVersionKind
	for _, k := range All {
		for _, w := range k.Writes {
			if !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}
