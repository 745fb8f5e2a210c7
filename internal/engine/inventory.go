package engine

import (
	"fmt"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// DefaultRecordsNamespace is the namespace of virtual destination records
// when none is configured (virtualdestination.DefaultRecordsNamespace).
const DefaultRecordsNamespace = "mesh-intent-records"

// Labels every object we write carries. The owner labels name the intent;
// an object without them (or with another intent's) is never touched.
const (
	LabelManagedBy = "app.kubernetes.io/managed-by"
	ManagedByValue = "terraform-provider-mesh"
	LabelOwnerKind = "mesh-intent.io/owner-kind"
	LabelOwnerName = "mesh-intent.io/owner-name"
	// LabelOwnerID tells apart same-named intents of different Terraform
	// states (or the old and new instance of a replaced one): an object is
	// ours only when it carries our instance's ID.
	LabelOwnerID = "mesh-intent.io/owner-id"
	// AnnotationConfig keeps an intent's Terraform configuration on its
	// objects, for import; a composed intent keeps it in its contribution
	// (its composer leaves it out of the digest: Composer.Canonical).
	// Neither is part of a digest.
	AnnotationConfig = "mesh-intent.io/config"
)

// Owner identifies the intent (one Terraform resource) that owns objects.
type Owner struct {
	Kind string // cluster, virtual-destination, traffic-policy, access-policy
	Name string
	// ID identifies the Terraform resource instance; empty while planning
	// a create (and while importing), when it is not known yet.
	ID string
	// Composition is set for intents whose objects are shared with other
	// intents of the same kind (see compose.go).
	Composition *Composition
	// Adopt lets an apply take over objects of the same names that this
	// provider did not write (no managed-by label): the user's explicit
	// choice, when bringing hand-written Istio objects under management.
	// Objects another intent owns are never taken.
	Adopt bool
}

func (o Owner) String() string { return o.Kind + " " + o.Name }

// Labels are the ownership labels of o's objects.
func (o Owner) Labels() map[string]string {
	if o.Composition != nil {
		return map[string]string{LabelManagedBy: ManagedByValue, o.ContributionKey(): o.idValue()}
	}
	l := map[string]string{LabelManagedBy: ManagedByValue, LabelOwnerKind: o.Kind, LabelOwnerName: o.Name}
	if o.ID != "" {
		l[LabelOwnerID] = o.ID
	}
	return l
}

// idValue is the value of a contribution label: the instance ID.
func (o Owner) idValue() string {
	if o.ID == "" {
		return "true"
	}
	return o.ID
}

// Selector is the label selector that lists o's objects. Without an ID
// (an import) it matches every instance of that kind and name.
func (o Owner) Selector() string {
	if o.Composition != nil {
		if o.ID == "" {
			// Any value: the label's presence marks a contribution.
			return labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue}).String() + "," + o.ContributionKey()
		}
		return labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue, o.ContributionKey(): o.ID}).String()
	}
	set := labels.Set{LabelManagedBy: ManagedByValue, LabelOwnerKind: o.Kind, LabelOwnerName: o.Name}
	if o.ID != "" {
		set[LabelOwnerID] = o.ID
	}
	return labels.SelectorFromSet(set).String()
}

// owns reports whether labels mark an object as o's.
func (o Owner) owns(labels map[string]string) bool {
	if labels[LabelManagedBy] != ManagedByValue {
		return false
	}
	if o.Composition != nil {
		v, ok := labels[o.ContributionKey()]
		return ok && (o.ID == "" || v == o.ID)
	}
	return labels[LabelOwnerKind] == o.Kind && labels[LabelOwnerName] == o.Name && (o.ID == "" || labels[LabelOwnerID] == o.ID)
}

// FieldManager is the server-side-apply field manager of o: one per intent,
// so two intents writing the same field of one object conflict instead of
// overwriting each other.
func (o Owner) FieldManager(base string) string {
	return managerBase(base) + "/" + o.Kind + "." + o.Name
}

// managerBase is the field_manager base, the default when none is set.
func managerBase(base string) string {
	if base == "" {
		return ManagedByValue
	}
	return base
}

// managerBase is the engine's field_manager base.
func (e *Engine) managerBase() string { return managerBase(e.FieldManager) }

// Entry is one owned object as Terraform state records it: where it is and
// a digest of the fields we own, nothing more.
type Entry struct {
	Cluster    string
	APIVersion string
	Kind       string
	Namespace  string
	Name       string
	// Digest is empty when the object's content is known only after apply.
	Digest string
}

// Key is the identity of the entry.
func (e Entry) Key() translate.Key {
	return translate.Key{Cluster: e.Cluster, APIVersion: e.APIVersion, Kind: e.Kind, Namespace: e.Namespace, Name: e.Name}
}

func (e Entry) String() string { return e.Key().String() }

// SortEntries orders entries the way plans show them.
func SortEntries(es []Entry) {
	sort.Slice(es, func(i, j int) bool { return es[i].Key().Less(es[j].Key()) })
}

// resources maps the Istio kinds we emit to their API resources, so no
// discovery round trip is needed to write them.
var resources = map[schema.GroupVersionKind]string{
	{Group: "networking.istio.io", Version: "v1", Kind: "Gateway"}:             "gateways",
	{Group: "networking.istio.io", Version: "v1", Kind: "VirtualService"}:      "virtualservices",
	{Group: "networking.istio.io", Version: "v1", Kind: "DestinationRule"}:     "destinationrules",
	{Group: "networking.istio.io", Version: "v1", Kind: "ServiceEntry"}:        "serviceentries",
	{Group: "networking.istio.io", Version: "v1", Kind: "Sidecar"}:             "sidecars",
	{Group: "networking.istio.io", Version: "v1", Kind: "WorkloadEntry"}:       "workloadentries",
	{Group: "security.istio.io", Version: "v1", Kind: "AuthorizationPolicy"}:   "authorizationpolicies",
	{Group: "security.istio.io", Version: "v1", Kind: "PeerAuthentication"}:    "peerauthentications",
	{Group: "security.istio.io", Version: "v1", Kind: "RequestAuthentication"}: "requestauthentications",
	// A virtual destination\'s record, read by policies applied later.
	{Version: "v1", Kind: "ConfigMap"}: "configmaps",
}

// resourceFor returns the API resource of an entry's kind.
func resourceFor(apiVersion, kind string) (schema.GroupVersionResource, error) {
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		return schema.GroupVersionResource{}, err
	}
	r, ok := resources[gv.WithKind(kind)]
	if !ok {
		return schema.GroupVersionResource{}, fmt.Errorf("kind %s %s is not one the provider manages", apiVersion, kind)
	}
	return gv.WithResource(r), nil
}

// ResourceOf returns the API resource of a kind the engine can own.
func ResourceOf(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool) {
	r, ok := resources[gvk]
	return gvk.GroupVersion().WithResource(r), ok
}

// Kinds lists every kind the engine can own, for refresh to list.
func Kinds() []schema.GroupVersionKind {
	out := make([]schema.GroupVersionKind, 0, len(resources))
	for gvk := range resources {
		out = append(out, gvk)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// KindSelector selects the objects of every intent of o's kind.
func (o Owner) KindSelector() string {
	return labels.SelectorFromSet(labels.Set{LabelManagedBy: ManagedByValue, LabelOwnerKind: o.Kind}).String()
}

// StateKey is how the objects attribute names an entry in state:
// "<cluster>/<Kind>.<group>/<namespace>/<name>" ("<Kind>" alone for the
// core group), e.g. "east/VirtualService.networking.istio.io/istio-system/vd-user".
// The version is left out: the engine writes one version of each kind.
func (e Entry) StateKey() string {
	gv, _ := schema.ParseGroupVersion(e.APIVersion)
	kind := e.Kind
	if gv.Group != "" {
		kind += "." + gv.Group
	}
	return e.Cluster + "/" + kind + "/" + e.Namespace + "/" + e.Name
}

// EntryFromStateKey reads a StateKey back, with its digest.
func EntryFromStateKey(key, digest string) (Entry, error) {
	parts := strings.SplitN(key, "/", 4)
	if len(parts) != 4 || parts[0] == "" || parts[1] == "" || parts[3] == "" {
		return Entry{}, fmt.Errorf("%q is not <cluster>/<Kind>.<group>/<namespace>/<name>", key)
	}
	kind, group, _ := strings.Cut(parts[1], ".")
	for gvk := range resources {
		if gvk.Kind == kind && gvk.Group == group {
			return Entry{Cluster: parts[0], APIVersion: gvk.GroupVersion().String(), Kind: kind, Namespace: parts[2], Name: parts[3], Digest: digest}, nil
		}
	}
	return Entry{}, fmt.Errorf("%q: kind %s is not one the provider manages", key, parts[1])
}

// Composition makes an owner's objects composed.
type Composition struct {
	// Composer decodes, composes and digests the contributions of the
	// owner's kind.
	Composer composition.Composer
	// Contribution is what this intent adds to the objects of each
	// cluster, typed and encoded (the annotation value stored there).
	Contribution composition.Part
	// Own says whether an instance ID is one this Terraform state holds:
	// a contribution of the same name from such an instance (this
	// resource's previous instance, being replaced) is replaced; from any
	// other instance it is a conflict, whatever workspace it names, since
	// two states may carry one workspace name.
	Own func(id string) bool
	// Orphan, set by a roster, says whether a contribution is an orphan of
	// its state (verdict.go): by its instance label, and by what its
	// content says (its name, the workspace it names), so that a label
	// changed by hand does not make another state's contribution one.
	Orphan func(c LiveContribution) bool
	// Owned says whether an object is another intent's own, which this
	// contribution only joins (a virtual destination's DestinationRule):
	// a composer never creates it. Nil: none is.
	Owned func(key translate.Key) bool
}

// ContributionKey is the annotation (and label) key of an intent's
// contribution: <kind>.mesh-intent.io/<name>.
func (o Owner) ContributionKey() string { return o.Kind + ".mesh-intent.io/" + o.Name }

// LiveContribution is one contribution found on a composed object.
type LiveContribution struct {
	Entry Entry
	// Name is the intent's name, ID its instance ("" when not recorded).
	Name, ID string
	// Raw is the contribution as stored; Workspace the workspace it says
	// it comes from.
	Raw, Workspace string
	// Contribution is what the composer decoded of it (nil without a
	// composer); it may be composed only when Untrusted is empty.
	Contribution composition.Contribution
	// Untrusted says why it is not composed (refused by the composer's
	// Decode, or a label without its annotation); empty when it is.
	Untrusted string
	// Unreadable is set when it is in a format this build does not read
	// (a newer provider's): it is kept, and its object cannot be written.
	Unreadable bool
	// Kept is the size of the other annotations on its object (keys and
	// values: another tool's, a client-side apply's last-applied
	// configuration), which a write of the object keeps.
	Kept int
}

// Annotation is the annotation key that holds it.
func (c LiveContribution) Annotation(kind string) string { return kind + contributionInfix + c.Name }
