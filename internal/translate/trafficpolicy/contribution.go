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
// now. Version 0 (no "v") is the unresolved form earlier builds wrote.
const ContributionVersion = 1

// MaxContributionBytes bounds one contribution. Kubernetes allows 256 KiB
// of annotations per object in all; a policy's contribution is a few
// hundred bytes, so anything this large was not written by a policy.
const MaxContributionBytes = 32 << 10

// Contribution is what one policy stores on a shared object.
type Contribution struct {
	Version int `json:"v,omitempty"`
	// Workspace is the identity of the Terraform workspace (the provider's
	// workspace setting) whose resource wrote it.
	Workspace string `json:"workspace,omitempty"`
	Named
	// Config is the resource's configuration as written, kept for import;
	// no part of the composition.
	Config json.RawMessage `json:"config,omitempty"`
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

// NewContribution resolves n with reg and returns its contribution as
// JSON, ready for the annotation.
func NewContribution(n Named, workspace string, reg *translate.Registry) (string, error) {
	resolved, err := Resolve(n, reg)
	if err != nil {
		return "", err
	}
	raw, err := json.Marshal(Contribution{Version: ContributionVersion, Workspace: workspace, Named: resolved})
	return string(raw), err
}

// DecodeContribution reads a contribution found on an object and checks
// it as strictly as the policy was checked when it was planned: size,
// known fields only, a known version, a valid policy, and (from version
// 1) source clusters listed by name.
func DecodeContribution(raw string) (Contribution, error) {
	var c Contribution
	if len(raw) > MaxContributionBytes {
		return c, fmt.Errorf("it is %d bytes, more than the %d a traffic policy writes", len(raw), MaxContributionBytes)
	}
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return c, fmt.Errorf("it is not a traffic policy contribution: %v", err)
	}
	if dec.More() {
		return c, errors.New("it has content after the contribution")
	}
	if c.Version < 0 || c.Version > ContributionVersion {
		return c, fmt.Errorf("its version %d is not one this provider writes (0 to %d): a newer provider wrote it; upgrade the provider", c.Version, ContributionVersion)
	}
	if c.Version >= 1 {
		if p := c.Policy.Sources.Placement; len(p.ClusterSelector) > 0 || len(p.Clusters) == 0 {
			return c, errors.New("its source clusters are not listed by name")
		}
	}
	if errs := Validate(c.Policy, c.Destination); len(errs) > 0 {
		return c, fmt.Errorf("its policy is not valid: %s", errs[0].Detail)
	}
	// The decoder has checked that Config is JSON; it must be an object.
	if c.Config != nil && !bytes.HasPrefix(bytes.TrimSpace(c.Config), []byte("{")) {
		return c, errors.New("its kept configuration is not an object")
	}
	return c, nil
}

// ComposeContributions renders the shared object key from the
// contributions found on it (by policy name, as the annotations keep
// them). Resolved contributions need no registry: the registry is made of
// the clusters they name, so every writer composes the same object from
// the same contributions. reg is used only for unresolved version 0
// contributions, resolved against it first. It returns nil when no policy
// contributes.
func ComposeContributions(key translate.Key, contributions map[string]string, reg *translate.Registry) (map[string]any, error) {
	names := make([]string, 0, len(contributions))
	for n := range contributions {
		names = append(names, n)
	}
	sort.Strings(names)
	policies := make([]Named, 0, len(names))
	workspaces := map[string]string{}
	for _, n := range names {
		c, err := DecodeContribution(contributions[n])
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
	objs, err := compose(policies, registryOf(policies), false)
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
