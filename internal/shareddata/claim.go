package shareddata

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/intentkind"
)

// A workspace claim says which Terraform state holds a workspace identity
// (the identity a roster, mesh_workspace, stands for). It is a ConfigMap
// in the records namespace of every cluster the state registers, named
// after the identity, and holds a token minted by that state (kept in the
// roster's state): an identifier that tells claims apart, not a secret
// (docs/security.md); messages never print another state's. A second state that names the same identity
// finds a claim with another token: a plan error, never a shared identity.
//
// The claim also lists the state's traffic policy instances (instance ID
// to name): what another state's messages name, and what an import of the
// roster, after the state was lost, recovers.

// Claims reads and writes workspace claims through an engine: its
// clients, its records namespace, its pull clusters' artifacts.
type Claims struct{ *engine.Engine }

var (
	configMaps    = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	configMapKind = schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"}
)

const (
	claimIdentityKey = "identity"
	claimTokenKey    = "token"
	claimMembersKey  = "members"
	claimFormatKey   = "format"
)

// ClaimFormat is the format version of the claims this build writes, and
// the newest it reads. Version 1 is identity, token and members (a JSON
// object of instance IDs to policy names), without claimFormatKey, as
// every earlier build wrote it: a claim without the key is version 1. A
// build that changes what a claim holds in a way older builds would
// misread (a field that shields more, or less) bumps it, so that older
// builds take such a claim as unreadable (it shields every orphan
// candidate; see Claim.Unreadable) instead of reading it without that
// field.
const ClaimFormat = 1

// ClaimFormatError is claimOf's error for a claim the provider wrote that
// this build does not read: a newer format version, or a data key it does
// not know (written by a newer build).
type ClaimFormatError struct {
	Version int
	// Unknown is the unknown data key found, if that is the reason.
	Unknown string
}

func (e *ClaimFormatError) Error() string {
	if e.Unknown != "" {
		return fmt.Sprintf("it is in claim format version %d and has a key this provider does not know (%q): it was written by a newer terraform-provider-mesh; upgrade this provider to read it", e.Version, e.Unknown)
	}
	return fmt.Sprintf("it is in claim format version %d, and this provider reads versions up to %d: it was written by a newer terraform-provider-mesh; upgrade this provider to read it", e.Version, ClaimFormat)
}

// Claim is one state's claim on an identity in one cluster.
type Claim struct {
	Cluster  string
	Identity string
	Token    string
	// Members are the state's traffic policy instances: ID to name.
	Members map[string]string
	// Replaces, when writing, is a token whose claim this one takes over
	// (a roster imported after a lost state, or replaced): a claim with
	// that token is overwritten, a claim with any other is refused.
	Replaces string
	// Unreadable, in a listing, is set for a claim the provider wrote in
	// a format this build does not read (a *ClaimFormatError, naming the
	// object): its Identity and Token are those its name and labels
	// give, its Members are unknown, so it shields every orphan
	// candidate of another token.
	Unreadable error
}

// ClaimName is the name of the claim ConfigMap of an identity: any string
// becomes a valid, short object name.
func ClaimName(identity string) string {
	sum := sha256.Sum256([]byte(identity))
	return "mesh-workspace-" + hex.EncodeToString(sum[:10])
}

// ClaimEntry is the inventory entry of identity's claim in a cluster.
func (e Claims) ClaimEntry(cluster, identity string) engine.Entry {
	return claimEntryIn(cluster, e.RecordsNamespaceName(), identity)
}

func claimEntryIn(cluster, namespace, identity string) engine.Entry {
	return engine.Entry{Cluster: cluster, APIVersion: "v1", Kind: "ConfigMap", Namespace: namespace, Name: ClaimName(identity)}
}

// ClaimsNamespace is the namespace claims are written in now (the
// records namespace).
func (e Claims) ClaimsNamespace() string { return e.RecordsNamespaceName() }

// ListClaims lists every workspace claim in the records namespace of each
// cluster, whatever its identity. A cluster that cannot be read is an
// error of its own.
func (e Claims) ListClaims(ctx context.Context, clusters []string) ([]Claim, engine.Errors) {
	var out []Claim
	var errs engine.Errors
	sel := labels.SelectorFromSet(labels.Set{engine.LabelManagedBy: engine.ManagedByValue, engine.LabelOwnerKind: intentkind.Workspace.Owner}).String()
	for _, cluster := range clusters {
		if got, err, pull := e.claimsInArtifact(ctx, cluster); pull {
			if err != nil {
				errs = append(errs, err)
			}
			out = append(out, got...)
			continue
		}
		items, _, err := e.Search(ctx, cluster, configMapKind, metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			errs = append(errs, engine.ClusterError(cluster, "Listing workspace claims", err))
			continue
		}
		for i := range items {
			if claim, ok := listedClaim(cluster, e.RecordsNamespaceName(), &items[i]); ok {
				out = append(out, claim)
			}
		}
	}
	return out, errs
}

// listedClaim is live as a listing holds it: a claim (ok), one in a
// format this build does not read (ok, with Unreadable), or not a claim
// (a hand-made ConfigMap with the claim labels: not listed, it vetoes
// nothing).
func listedClaim(cluster, namespace string, live *unstructured.Unstructured) (Claim, bool) {
	claim, err := claimOf(cluster, live)
	var newer *ClaimFormatError
	switch {
	case err == nil:
		return claim, true
	case errors.As(err, &newer):
		en := engine.Entry{Cluster: cluster, APIVersion: "v1", Kind: "ConfigMap", Namespace: namespace, Name: live.GetName()}
		return Claim{Cluster: cluster, Identity: claim.Identity, Token: claim.Token, Unreadable: engine.ObjectError(en, "Reading the workspace claim", err)}, true
	}
	return Claim{}, false
}

// ReadClaims reads identity's claim in each cluster. A cluster without one
// is left out; a cluster that cannot be read is an error of its own.
func (e Claims) ReadClaims(ctx context.Context, clusters []string, identity string) ([]Claim, engine.Errors) {
	var out []Claim
	var errs engine.Errors
	for _, cluster := range clusters {
		en := e.ClaimEntry(cluster, identity)
		live, rerr := e.readClaimObject(ctx, en)
		switch {
		case rerr != nil:
			errs = append(errs, rerr)
			continue
		case live == nil:
			continue
		}
		claim, err := claimOf(cluster, live)
		if err != nil {
			errs = append(errs, engine.ObjectError(en, "Reading the workspace claim", err))
			continue
		}
		if claim.Identity != identity {
			// A hash collision, or a hand-made object: not this identity's.
			errs = append(errs, engine.ObjectError(en, "Reading the workspace claim", fmt.Errorf("it claims identity %q, not %q", claim.Identity, identity)))
			continue
		}
		out = append(out, claim)
	}
	return out, errs
}

// readClaimObject is the claim object en names, nil if there is none: on
// a pull cluster, in its artifact (claimsInArtifact).
func (e Claims) readClaimObject(ctx context.Context, en engine.Entry) (*unstructured.Unstructured, *engine.Error) {
	if objs, pull, err := e.PulledObjects(ctx, en.Cluster, "Reading the workspace claim from the artifact"); err != nil {
		return nil, err
	} else if pull {
		if m := objs[engine.ArtifactKey(en)]; m != nil {
			return &unstructured.Unstructured{Object: m}, nil
		}
		return nil, nil
	}
	c, err := e.Clients.Get(en.Cluster)
	if err != nil {
		return nil, engine.ClusterError(en.Cluster, "Reading the workspace claim", err)
	}
	live, err := c.Dynamic.Resource(configMaps).Namespace(en.Namespace).Get(ctx, en.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, engine.ObjectError(en, "Reading the workspace claim", err)
	}
	return live, nil
}

// claimsInArtifact lists the workspace claims a pull cluster's artifact
// holds (pull true). A pull cluster's claim is published in its artifact,
// beside the state's objects, and Flux applies it in the records
// namespace as push writes it: a second state that names the identity
// finds it there at plan, and its roster's apply is refused there.
func (e Claims) claimsInArtifact(ctx context.Context, cluster string) ([]Claim, *engine.Error, bool) {
	objs, pull, err := e.PulledObjects(ctx, cluster, "Listing workspace claims in the artifact")
	if err != nil || !pull {
		return nil, err, pull
	}
	var out []Claim
	for _, m := range objs {
		if c, ok := listedClaim(cluster, e.RecordsNamespaceName(), &unstructured.Unstructured{Object: m}); ok {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Identity < out[j].Identity })
	return out, nil, true
}

// updateClaimInArtifact changes en's claim object in a pull cluster's
// artifact (pull true): change is given the object there (nil if none)
// and returns the one to publish (nil to remove it), or an error that
// leaves the artifact as it was.
func (e Claims) updateClaimInArtifact(ctx context.Context, en engine.Entry, doing string, change func(live *unstructured.Unstructured) (map[string]any, *engine.Error)) (*engine.Error, bool) {
	var refused *engine.Error
	key := engine.ArtifactKey(en)
	err, pull := e.UpdatePulled(ctx, en.Cluster, doing, func(objs oci.Objects) error {
		var live *unstructured.Unstructured
		if m := objs[key]; m != nil {
			live = &unstructured.Unstructured{Object: m}
		}
		next, rerr := change(live)
		if refused = rerr; rerr != nil {
			return rerr
		}
		if next == nil {
			delete(objs, key)
		} else {
			objs[key] = next
		}
		return nil
	})
	if !pull {
		return nil, false
	}
	if refused != nil {
		return refused, true
	}
	return err, true
}

// claimOf reads live as a claim. Only a claim as the provider writes it
// is one, judged by what the object says (issue 36: a hand-made
// ConfigMap with the claim labels vetoes nothing): the managed-by and
// owner-kind labels, the name ClaimName gives its identity, a token that
// its owner-id label repeats, and members that are instance IDs to
// policy names. Anyone who can write ConfigMaps in the records namespace
// can still write such an object: claims guard against accidents, not
// against that access (docs/security.md).
//
// It reads strictly, like contributions and records: known data keys
// only, members one JSON object of strings, a format version up to
// ClaimFormat. A claim with the provider's labels, name and owner-id
// label that fails only that is a *ClaimFormatError, returned with the
// Identity and Token its name and label give.
func claimOf(cluster string, live *unstructured.Unstructured) (Claim, error) {
	labels := live.GetLabels()
	if labels[engine.LabelManagedBy] != engine.ManagedByValue || labels[engine.LabelOwnerKind] != intentkind.Workspace.Owner {
		return Claim{}, fmt.Errorf("it is not a workspace claim written by terraform-provider-mesh (labels %v)", labels)
	}
	data, _, err := unstructured.NestedStringMap(live.Object, "data")
	if err != nil {
		return Claim{}, fmt.Errorf("its data is not a map of strings: %v", err)
	}
	c := Claim{Cluster: cluster, Identity: data[claimIdentityKey], Token: data[claimTokenKey], Members: map[string]string{}}
	switch {
	case c.Token == "":
		return Claim{}, fmt.Errorf("it has no token")
	case c.Identity == "" || live.GetName() != ClaimName(c.Identity):
		return Claim{}, fmt.Errorf("its name is not the claim name of the identity it names (%q)", c.Identity)
	case labels[engine.LabelOwnerID] != c.Token:
		return Claim{}, fmt.Errorf("its owner-id label is not its token")
	}
	if ferr := claimFormatOf(data); ferr != nil {
		return Claim{Cluster: cluster, Identity: c.Identity, Token: c.Token}, ferr
	}
	if raw := data[claimMembersKey]; raw != "" {
		dec := json.NewDecoder(strings.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c.Members); err != nil {
			return Claim{}, fmt.Errorf("its members are not a JSON object of strings: %v", err)
		}
		if dec.More() {
			return Claim{}, fmt.Errorf("its members have content after their JSON object")
		}
	}
	for id, name := range c.Members {
		if id == "" || name == "" {
			return Claim{}, fmt.Errorf("its members are not instance IDs to policy names")
		}
	}
	return c, nil
}

// claimFormatOf checks a claim's data is in a format this build reads:
// a *ClaimFormatError for a newer version or an unknown key, an error for
// a format that is not a version.
func claimFormatOf(data map[string]string) error {
	version := 1
	if f, ok := data[claimFormatKey]; ok {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return fmt.Errorf("its format %q is not a claim format version", f)
		}
		version = v
	}
	if version > ClaimFormat {
		return &ClaimFormatError{Version: version}
	}
	keys := make([]string, 0, len(data))
	for k := range data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch k {
		case claimIdentityKey, claimTokenKey, claimMembersKey, claimFormatKey:
		default:
			return &ClaimFormatError{Version: version, Unknown: k}
		}
	}
	return nil
}

// WriteClaim writes c in its cluster. A claim of the identity with another
// token is never overwritten: that is another state's, and an error names
// it. Writes are pinned to the object read (its UID and resourceVersion).
func (e Claims) WriteClaim(ctx context.Context, c Claim) *engine.Error {
	en := e.ClaimEntry(c.Cluster, c.Identity)
	members, err := json.Marshal(c.Members)
	if err != nil {
		return engine.ObjectError(en, "Writing the workspace claim", err)
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": en.Name, "namespace": en.Namespace, "labels": map[string]any{
			engine.LabelManagedBy: engine.ManagedByValue, engine.LabelOwnerKind: intentkind.Workspace.Owner, engine.LabelOwnerID: c.Token}},
		"data": map[string]any{claimIdentityKey: c.Identity, claimTokenKey: c.Token, claimMembersKey: string(members)},
	}}
	if err, pull := e.updateClaimInArtifact(ctx, en, "Writing the workspace claim", func(live *unstructured.Unstructured) (map[string]any, *engine.Error) {
		if live != nil {
			theirs, cerr := claimOf(c.Cluster, live)
			if cerr != nil || (theirs.Token != c.Token && (c.Replaces == "" || theirs.Token != c.Replaces)) {
				return nil, e.claimTakenError(en, c, cerr)
			}
		}
		return obj.Object, nil
	}); pull {
		return err
	}
	cl, err := e.Clients.Get(c.Cluster)
	if err != nil {
		return engine.ClusterError(c.Cluster, "Writing the workspace claim", err)
	}
	ri := cl.Dynamic.Resource(configMaps).Namespace(en.Namespace)
	live, err := ri.Get(ctx, en.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		if _, err := ri.Create(ctx, obj, metav1.CreateOptions{FieldManager: e.ManagerBase() + "/workspace-claim"}); err != nil {
			if apierrors.IsAlreadyExists(err) {
				return e.claimTakenError(en, c, nil)
			}
			return engine.ObjectError(en, "Writing the workspace claim", err)
		}
		return nil
	case err != nil:
		return engine.ObjectError(en, "Writing the workspace claim", err)
	}
	theirs, cerr := claimOf(c.Cluster, live)
	if cerr != nil || (theirs.Token != c.Token && (c.Replaces == "" || theirs.Token != c.Replaces)) {
		return e.claimTakenError(en, c, cerr)
	}
	obj.SetResourceVersion(live.GetResourceVersion())
	obj.SetUID(live.GetUID())
	if _, err := ri.Update(ctx, obj, metav1.UpdateOptions{FieldManager: e.ManagerBase() + "/workspace-claim"}); err != nil {
		return engine.ObjectError(en, "Writing the workspace claim", err)
	}
	return nil
}

func (e Claims) claimTakenError(en engine.Entry, c Claim, why error) *engine.Error {
	detail := fmt.Sprintf("%s holds the claim of another Terraform state on workspace identity %q, so this state cannot claim it.", en, c.Identity)
	if why != nil {
		detail = fmt.Sprintf("%s exists but cannot be read as a workspace claim (%v), so this state cannot claim identity %q.", en, why, c.Identity)
	}
	return &engine.Error{Cluster: en.Cluster, Object: en.String(), Summary: "Workspace identity claimed by another state", Detail: detail}
}

// ReleaseClaim deletes identity's claim in a cluster, in namespace (the
// records namespace when empty), if it holds token; another state's claim
// is left alone.
func (e Claims) ReleaseClaim(ctx context.Context, cluster, namespace, identity, token string) *engine.Error {
	if namespace == "" {
		namespace = e.RecordsNamespaceName()
	}
	en := claimEntryIn(cluster, namespace, identity)
	if err, pull := e.updateClaimInArtifact(ctx, en, "Releasing the workspace claim", func(live *unstructured.Unstructured) (map[string]any, *engine.Error) {
		if live == nil {
			return nil, nil
		}
		if theirs, cerr := claimOf(cluster, live); cerr != nil || theirs.Token != token {
			return live.Object, nil // not ours to delete
		}
		return nil, nil
	}); pull {
		return err
	}
	cl, err := e.Clients.Get(cluster)
	if err != nil {
		return engine.ClusterError(cluster, "Releasing the workspace claim", err)
	}
	ri := cl.Dynamic.Resource(configMaps).Namespace(en.Namespace)
	live, err := ri.Get(ctx, en.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return engine.ObjectError(en, "Releasing the workspace claim", err)
	}
	if theirs, cerr := claimOf(cluster, live); cerr != nil || theirs.Token != token {
		return nil // not ours to delete
	}
	uid, rv := live.GetUID(), live.GetResourceVersion()
	err = ri.Delete(ctx, en.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}})
	if err != nil && !apierrors.IsNotFound(err) {
		return engine.ObjectError(en, "Releasing the workspace claim", err)
	}
	return nil
}

// ClaimClusters is the sorted list of the clusters of claims.
func ClaimClusters(claims []Claim) []string {
	out := make([]string, 0, len(claims))
	for _, c := range claims {
		out = append(out, c.Cluster)
	}
	sort.Strings(out)
	return out
}
