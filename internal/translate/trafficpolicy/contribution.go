package trafficpolicy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/mesh-intent/terraform-provider-mesh/internal/translate"
)

// A traffic policy's part in a shared VirtualService or DestinationRule is
// kept in an annotation of that object, its contribution. Whoever writes
// the object next (another policy, from this Terraform state or another)
// recomposes it from the contributions it finds there, so a contribution
// must be enough to recompose without the writer's own view of the mesh:
// it is stored resolved, with its source clusters listed by name (never a
// selector over cluster labels the reader may not know), and it says which
// workspace wrote it.

// ContributionVersion is the version of the contribution format written
// now, and the newest this build reads. Version 0 (no "v") is the
// unresolved form the first builds wrote; version 1 added the resolved
// sources and the workspace; version 2 added "min" and "provider".
//
// The contract between builds (docs/design.md, "Contribution format and
// versions"): a build that changes what a contribution holds or means (a
// field added, a meaning changed, a limit raised) writes a higher "v".
// "min" is the lowest format version a reader must know to compose it:
// a field that older readers may ignore without composing anything
// differently keeps "min" where it was; anything else raises it to "v".
// A reader composes what it can read (v at most its own version, or min
// at most its own version, unknown fields then ignored); anything else it
// does not understand: it keeps it on the object byte for byte, never
// composes it, and refuses to write the object, naming the provider
// version that wrote it (FormatError).
const ContributionVersion = 2

// WrittenVersion is the format this build writes: the lowest version that
// carries what it writes, so that every build since version 1 composes it
// (a version 1 reader refuses fields it does not know, "min" and
// "provider" among them, and would remove the contribution). A build that
// writes what version 1 cannot carry writes its own version, with "min"
// and "provider".
const WrittenVersion = 1

// MaxContributionBytes bounds one contribution. Kubernetes allows 256 KiB
// of annotations per object in all; a policy's contribution is a few
// hundred bytes (restricted to the cluster of the object: Restrict), so
// anything this large was not written by a policy.
const MaxContributionBytes = 32 << 10

// Contribution is what one policy stores on a shared object.
type Contribution struct {
	Version int `json:"v,omitempty"`
	// Min is the lowest format version a reader must read to compose it
	// (version 2 on; absent, it is Version).
	Min int `json:"min,omitempty"`
	// Provider is the version of the provider build that wrote it
	// (version 2 on), named when a reader cannot compose it.
	Provider string `json:"provider,omitempty"`
	// Workspace is the identity of the Terraform workspace (the provider's
	// workspace setting) whose resource wrote it.
	Workspace string `json:"workspace,omitempty"`
	Named
	// Config is the resource's configuration as written, kept for import;
	// no part of the composition.
	Config json.RawMessage `json:"config,omitempty"`
}

// Writer is who writes a contribution: the workspace name it records.
// (The provider version is recorded from the first format version that
// has a place for it and needs it, see WrittenVersion.)
type Writer struct {
	Workspace string
}

// Resolve fixes the policy's source clusters: the placement becomes the
// list of clusters it selects in reg that are clients of the destination.
// The result composes the same with any registry that knows those names.
func Resolve(n Named, reg *translate.Registry) (Named, error) {
	clusters, err := reg.Select(n.Policy.Sources.Placement, translate.Root("sources"))
	if err != nil {
		return n, err
	}
	if clusters, err = clientClusters(resolveTarget(n.Destination), clusters); err != nil {
		return n, err
	}
	n.Policy.Sources.Placement = translate.Placement{Clusters: clusters}
	return n, nil
}

// Restrict is resolved n as objects in cluster need it: what the policy
// does to another cluster's objects is left out, so that its size does
// not grow with the fleet. A policy on a virtual destination makes
// objects only in its source clusters, each from that cluster's sources
// and the policy itself (which backends the cluster reaches only checks
// the clusters it names): the sources become cluster alone, the clients'
// backends cluster's own, when known, and of those only the ones the
// policy sends to. A policy on a service is left whole:
// its DestinationRules hold subsets of other clusters (a local shift
// defines one per source cluster in each), and it lists no backends.
// Composing restricted contributions gives, in cluster, the objects the
// whole ones give (TestRestrictedContributionsComposeTheSame).
func Restrict(n Named, cluster string) Named {
	if n.Destination.VirtualDestination == "" {
		return n
	}
	n.Policy.Sources.Placement = translate.Placement{Clusters: []string{cluster}}
	if cb := n.Destination.ClientBackends; cb != nil {
		// Which backends cluster reaches is read only to check the
		// clusters the policy sends to (validateClusters): those it names
		// and, for a local shift, cluster itself.
		named := map[string]bool{cluster: true}
		for _, s := range n.Policy.TrafficShift {
			named[s.Cluster] = true
		}
		if m := n.Policy.Mirror; m != nil {
			named[m.Cluster] = true
		}
		reached := []string{}
		for _, b := range cb[cluster] {
			if named[b] {
				reached = append(reached, b)
			}
		}
		n.Destination.ClientBackends = map[string][]string{cluster: reached}
		// Backends are read only where clients are not known, and in
		// messages.
		n.Destination.BackendClusters = reached
	}
	return n
}

// NewContribution resolves n with reg and returns its contribution as
// JSON, ready for the annotation: whole, for every cluster.
func NewContribution(n Named, w Writer, reg *translate.Registry) (string, error) {
	resolved, err := Resolve(n, reg)
	if err != nil {
		return "", err
	}
	e, err := encode(resolved, w)
	return e.raw, err
}

// NewContributions is NewContribution, and the contribution stored on
// objects in each source cluster, restricted to it (Restrict): nil when
// it is the whole one everywhere.
func NewContributions(n Named, w Writer, reg *translate.Registry) (string, map[string]string, error) {
	whole, in, err := newContributions(n, w, reg)
	if err != nil {
		return "", nil, err
	}
	var rawIn map[string]string
	if in != nil {
		rawIn = make(map[string]string, len(in))
		for c, e := range in {
			rawIn[c] = e.raw
		}
	}
	return whole.raw, rawIn, nil
}

// written is a contribution this build wrote: the value and its encoding.
type written struct {
	c   Contribution
	raw string
}

// newContributions is NewContributions, keeping each contribution's value
// beside its encoding.
func newContributions(n Named, w Writer, reg *translate.Registry) (written, map[string]written, error) {
	resolved, err := Resolve(n, reg)
	if err != nil {
		return written{}, nil, err
	}
	whole, err := encode(resolved, w)
	if err != nil || resolved.Destination.VirtualDestination == "" {
		return whole, nil, err
	}
	in := make(map[string]written, len(resolved.Policy.Sources.Clusters))
	for _, c := range resolved.Policy.Sources.Clusters {
		if in[c], err = encode(Restrict(resolved, c), w); err != nil {
			return written{}, nil, err
		}
	}
	return whole, in, nil
}

func encode(n Named, w Writer) (written, error) {
	c := Contribution{Version: WrittenVersion, Workspace: w.Workspace, Named: n}
	raw, err := json.Marshal(c)
	return written{c: c, raw: string(raw)}, err
}

// FormatError says a contribution is in a format this build does not
// read: written by a newer provider. Such a contribution is kept as it is, never composed, and
// the object is not written.
type FormatError struct {
	// Version and Min are the contribution's; Provider the provider
	// version that wrote it ("" when not recorded).
	Version, Min int
	Provider     string
	// Refused is, for a newer version this build may compose (its min),
	// why this build's checks refuse it all the same (a value the newer
	// build allows and this one does not know).
	Refused string
}

func (e *FormatError) Error() string {
	by := "a provider that did not record its version"
	if e.Provider != "" {
		by = fmt.Sprintf("terraform-provider-mesh %s", e.Provider)
	}
	if e.Refused != "" {
		return fmt.Sprintf("it is in contribution format version %d, written by %s, and this provider's checks refuse it (%s); composing it needs a provider that reads format version %d (%s or later)",
			e.Version, by, e.Refused, e.Version, orUnknown(e.Provider))
	}
	return fmt.Sprintf("it is in contribution format version %d, written by %s; composing it needs a provider that reads format version %d (%s or later), and this provider reads versions 0 to %d",
		e.Version, by, e.Min, orUnknown(e.Provider), ContributionVersion)
}

func orUnknown(v string) string {
	if v == "" {
		return "the version that wrote it"
	}
	return v
}

// header is the part of a contribution every format version has.
type header struct {
	Version  int    `json:"v"`
	Min      int    `json:"min"`
	Provider string `json:"provider"`
}

// DecodeContribution reads a contribution found on an object and checks
// that it is one: size, known fields only, a known version, (from version
// 1) source clusters listed by name, and a kept configuration that is an
// object. A contribution in a format this build does not read is a
// *FormatError (see ContributionVersion).
//
// The values of the policy are not checked against this build's rules
// (Validate): they were checked by the build that wrote them, and a later
// build that tightens a rule (a limit lowered, a combination refused)
// must not make every other state's older contributions invalid, to be
// removed by the next writer. So a contribution is decoded leniently for
// keeping, composed byte for byte as its writer wrote it, and validated
// only where this build writes it (NewPart, checkWritten). What Istio
// then refuses of the composition is refused at apply, naming the
// object; nothing is removed on this build's word.
func DecodeContribution(raw string) (Contribution, error) {
	var c Contribution
	var h header
	if err := json.NewDecoder(strings.NewReader(raw)).Decode(&h); err != nil {
		return c, fmt.Errorf("it is not a traffic policy contribution: %v", err)
	}
	if h.Min == 0 {
		h.Min = h.Version
	}
	if h.Version < 0 || h.Min < 0 || h.Min > h.Version {
		return c, fmt.Errorf("its version %d (min %d) is not a contribution format version", h.Version, h.Min)
	}
	if h.Min > ContributionVersion {
		return c, &FormatError{Version: h.Version, Min: h.Min, Provider: h.Provider}
	}
	// A newer version that older readers may compose (min): its
	// unknown fields are left out; it is still kept whole on the object.
	newer := h.Version > ContributionVersion
	if !newer && len(raw) > MaxContributionBytes {
		return c, fmt.Errorf("it is %d bytes, more than the %d a traffic policy writes", len(raw), MaxContributionBytes)
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	if !newer {
		dec.DisallowUnknownFields()
	}
	// A newer version this build may compose, but that its checks refuse
	// (a value the newer build allows), is not understood: kept, never
	// composed or removed.
	refuse := func(err error) error {
		if newer {
			return &FormatError{Version: h.Version, Min: h.Min, Provider: h.Provider, Refused: err.Error()}
		}
		return err
	}
	if err := dec.Decode(&c); err != nil {
		if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			// Unknown fields are refused only in a format this build
			// reads (a newer one's are left out above): format version
			// h.Version never had the field, so no provider knows it. It
			// was added by hand, and is not valid (no upgrade reads it).
			return c, fmt.Errorf("it has a field contribution format version %d never had (unknown field %s), added by hand: remove that edit, or the policy's own next apply replaces it", h.Version, field)
		}
		return c, refuse(fmt.Errorf("it is not a traffic policy contribution: %v", err))
	}
	if dec.More() {
		return c, refuse(errors.New("it has content after the contribution"))
	}
	if err := c.check(); err != nil {
		return c, refuse(err)
	}
	if newer {
		// A value a newer build allows may mean what this one does not
		// know: not understood. Values of this build's format or an
		// older one are not checked (see above).
		if errs := Validate(c.Policy, c.Destination); len(errs) > 0 {
			return c, refuse(fmt.Errorf("its policy is not valid: %s", errs[0].Detail))
		}
	}
	return c, nil
}

// check is what a decoded contribution must hold besides its JSON to be
// one: source clusters listed by name (from version 1) and a kept
// configuration that is an object. Its policy's values are not checked
// (DecodeContribution says why).
func (c Contribution) check() error {
	if c.Version >= 1 {
		if p := c.Policy.Sources.Placement; len(p.ClusterSelector) > 0 || len(p.Clusters) == 0 {
			return errors.New("its source clusters are not listed by name")
		}
	}
	// The decoder has checked that Config is JSON; it must be an object.
	if c.Config != nil && !bytes.HasPrefix(bytes.TrimSpace(c.Config), []byte("{")) {
		return errors.New("its kept configuration is not an object")
	}
	return nil
}

// checkWritten checks c, encoded as raw by this build, as this build
// writes it: what DecodeContribution checks (without decoding raw), and
// its policy by this build's rules (Validate), which only what this build
// writes must pass.
func (c Contribution) checkWritten(raw string) error {
	if len(raw) > MaxContributionBytes {
		return fmt.Errorf("it is %d bytes, more than the %d a traffic policy writes", len(raw), MaxContributionBytes)
	}
	if errs := Validate(c.Policy, c.Destination); len(errs) > 0 {
		return fmt.Errorf("its policy is not valid: %s", errs[0].Detail)
	}
	return c.check()
}

// ComposeContributions renders the shared object key from the
// contributions found on it (by policy name, as the annotations keep
// them). Resolved contributions need no registry: the registry is made of
// the clusters they name, so every writer composes the same object from
// the same contributions. reg is used only for unresolved version 0
// contributions, resolved against it first. It returns nil when no policy
// contributes.
func ComposeContributions(key translate.Key, contributions map[string]string, reg *translate.Registry) (map[string]any, error) {
	read := make(map[string]decoded, len(contributions))
	for n, raw := range contributions {
		c, err := DecodeContribution(raw)
		read[n] = decoded{c: c, err: err}
	}
	return composeDecoded(key, read, reg)
}

// composeDecoded is ComposeContributions of contributions decoded
// already; one decoded with an error cannot be used.
func composeDecoded(key translate.Key, contributions map[string]decoded, reg *translate.Registry) (manifest map[string]any, err error) {
	// Contributions found on objects are not validated by this build's
	// rules (DecodeContribution): should rendering one this build's rules
	// refuse ever fail hard, it is this object's error, not the run's.
	defer func() {
		if r := recover(); r != nil {
			manifest, err = nil, fmt.Errorf("the contributions on the object cannot be composed by this provider: %v", r)
		}
	}()
	names := make([]string, 0, len(contributions))
	for n := range contributions {
		names = append(names, n)
	}
	sort.Strings(names)
	policies := make([]Named, 0, len(names))
	workspaces := map[string]string{}
	for _, n := range names {
		c, err := contributions[n].c, contributions[n].err
		if err != nil {
			return nil, fmt.Errorf("the contribution of traffic policy %q on the object cannot be used: %v", n, err)
		}
		if c.Version == 0 {
			if reg == nil {
				return nil, fmt.Errorf("the contribution of traffic policy %q was written by an earlier provider build and needs the cluster registry to be read", n)
			}
			if c.Named, err = Resolve(c.Named, reg); err != nil {
				return nil, fmt.Errorf("the contribution of traffic policy %q, written by an earlier provider build, does not resolve in this registry: %v", n, err)
			}
		}
		if c.Policy.Name != n {
			return nil, fmt.Errorf("the contribution under the name %q is traffic policy %q", n, c.Policy.Name)
		}
		workspaces[n] = c.Workspace
		policies = append(policies, c.Named)
	}
	if len(policies) == 0 {
		return nil, nil
	}
	// The policies on one object may place their other objects
	// differently for a while: while a virtual destination is renamed,
	// each policy moves its DestinationRule settings when it is applied.
	// Only the parts that target key are composed into it.
	// Not validated by this build's rules: a contribution found on an
	// object was checked by the build that wrote it, and this build's
	// own was checked when written (checkWritten, its decoded error).
	objs, err := compose(policies, registryOf(policies), false, false)
	if err != nil {
		return nil, withOwners(err, workspaces)
	}
	for _, o := range objs {
		if o.Key() == key {
			return o.Manifest()
		}
	}
	return nil, nil
}

// registryOf is a registry of the clusters resolved policies name: their
// sources, the clusters their shifts and mirrors send to, and their
// destinations' backends and clients.
func registryOf(policies []Named) *translate.Registry {
	seen := map[string]bool{}
	var clusters []translate.Cluster
	add := func(names ...string) {
		for _, n := range names {
			if n != "" && !seen[n] {
				seen[n] = true
				clusters = append(clusters, translate.Cluster{Name: n})
			}
		}
	}
	for _, p := range policies {
		add(p.Policy.Sources.Clusters...)
		for _, s := range p.Policy.TrafficShift {
			add(s.Cluster)
		}
		if p.Policy.Mirror != nil {
			add(p.Policy.Mirror.Cluster)
		}
		add(p.Destination.BackendClusters...)
		for c, bs := range p.Destination.ClientBackends {
			add(c)
			add(bs...)
		}
	}
	return translate.NewRegistry(clusters...)
}

// withOwners adds to a composition error which workspace each policy on
// the object comes from, so a conflict names both owners.
func withOwners(err error, workspaces map[string]string) error {
	var errs translate.Errors
	if !errors.As(err, &errs) {
		return err
	}
	names := make([]string, 0, len(workspaces))
	for n := range workspaces {
		names = append(names, n)
	}
	sort.Strings(names)
	var owners []string
	for _, n := range names {
		w := workspaces[n]
		if w == "" {
			w = "unnamed"
		}
		owners = append(owners, fmt.Sprintf("%q from workspace %q", n, w))
	}
	out := make(translate.Errors, len(errs))
	for i, e := range errs {
		c := *e
		c.Detail = fmt.Sprintf("%s Traffic policies on this object: %s.", e.Detail, strings.Join(owners, ", "))
		out[i] = &c
	}
	return out
}
