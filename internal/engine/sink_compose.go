package engine

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"

	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
)

// The artifact plumbing of composed objects on pull clusters, which stays
// in the engine: the other tags of a cluster's repository (siblings, read
// once per process) and the plan warnings of checks that could not look
// (notChecked). Composing them is pull_compose.go's.

// fluxKustomizationLabels are the labels Flux's kustomize-controller puts
// on what it applies: the Kustomization's name and namespace.
const (
	fluxNameLabel      = "kustomize.toolkit.fluxcd.io/name"
	fluxNamespaceLabel = "kustomize.toolkit.fluxcd.io/namespace"
)

// errNotChecked marks a plan warning: a check of a pull cluster that
// could not look (the registry or the cluster did not answer, or the
// cluster has no connection).
var errNotChecked = errors.New("not checked")

// notChecked is the plan warning that a check of cluster could not look.
func notChecked(cluster string, owner Owner, summary, detail string) *Error {
	return &Error{Cluster: cluster, Summary: summary, Detail: detail, Err: errNotChecked}
}

// kindWords is an owner kind as prose: "traffic policy".
func kindWords(kind string) string { return strings.ReplaceAll(kind, "-", " ") }

// sibling is another state's artifact in a pull cluster's repository.
type sibling struct {
	target   string
	artifact oci.Artifact
}

// siblingSet is the process's reading of one repository's other tags,
// and what of it could not be read.
type siblingSet struct {
	once   sync.Once
	list   []sibling
	unread []unread
}

// unread is a part of a repository that could not be read, and why.
type unread struct {
	what string
	err  error
}

// siblings are the artifacts in a's repository under tags other than
// a's: other states' artifacts for the same cluster. The repository is
// read once per process (a tag listing, and a fetch of each other tag);
// what cannot be read is left out and returned as unread.
func (p *pulls) siblings(ctx context.Context, a PullArtifact) ([]sibling, []unread) {
	p.mu.Lock()
	if p.sibs == nil {
		p.sibs = map[string]*siblingSet{}
	}
	s := p.sibs[a.Target.Normalized()]
	if s == nil {
		s = &siblingSet{}
		p.sibs[a.Target.Normalized()] = s
	}
	p.mu.Unlock()
	s.once.Do(func() {
		tags, err := oci.Tags(ctx, a.Target)
		if err != nil {
			s.unread = append(s.unread, unread{"The tags of repository " + a.Target.Repository + " could not be listed", err})
			return
		}
		sort.Strings(tags)
		for _, tag := range tags {
			if tag == a.Target.Tag {
				continue
			}
			t := a.Target
			t.Tag = tag
			got, found, err := p.fetch(ctx, t)
			if errors.Is(err, oci.ErrNotFlux) {
				// A signature (cosign's sha256-<digest>.sig), an
				// attestation, an SBOM: no state's artifact.
				tflog.Debug(ctx, "engine: skipping a tag that is no Flux artifact", map[string]any{"artifact": t.String(), "reason": err.Error()})
				continue
			}
			if err != nil {
				s.unread = append(s.unread, unread{"Artifact " + t.String() + " (another tag of the repository) could not be read", err})
				continue
			}
			if found {
				s.list = append(s.list, sibling{target: t.String(), artifact: got})
			}
		}
	})
	return s.list, s.unread
}
