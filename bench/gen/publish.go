package gen

import (
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/mesh-intent/terraform-provider-mesh/internal/delivery/oci"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
)

// Publish is one measurement of issue 35's pull delivery: every cluster
// of a generated configuration delivered by pull, its objects published
// by the provider's engine to an in-process OCI registry
// (go-containerregistry's pkg/registry), against the floor of rendering
// the same objects and pushing the same artifact once per cluster with
// go-containerregistry alone.
type Publish struct {
	Clusters, Intents int
	Traffic           int     // traffic policies among the intents (composed)
	Objects           int     // in every artifact together
	Bytes             int64   // the artifacts' layers together
	Apply, Floor      float64 // CPU seconds of the process (engine or floor, and the in-process registry): the engine's apply of every intent; the floor's pushes
	// Requests to the registry per cluster (the most of any cluster):
	// the apply's, its pushes (manifest PUTs), the floor's, and a
	// refresh's in a new engine (every intent read), in all and manifest
	// reads.
	ApplyRequests, Pushes, FloorRequests int
	RefreshRequests, RefreshManifests    int
}

// countingRegistry is the in-process registry, counting requests per
// repository.
type countingRegistry struct {
	host string
	mu   sync.Mutex
	reqs map[string]map[string]int // repository -> "GET manifests" etc. -> count
}

func newCountingRegistry() (*countingRegistry, func()) {
	cr := &countingRegistry{reqs: map[string]map[string]int{}}
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// /v2/<repository>/{manifests,blobs}/...
		path := strings.TrimPrefix(r.URL.Path, "/v2/")
		for _, what := range []string{"/manifests/", "/blobs/"} {
			if repo, _, ok := strings.Cut(path, what); ok {
				kind := strings.Trim(what, "/")
				if strings.HasPrefix(path[len(repo)+len(what):], "uploads") {
					kind = "uploads"
				}
				cr.mu.Lock()
				if cr.reqs[repo] == nil {
					cr.reqs[repo] = map[string]int{}
				}
				cr.reqs[repo][r.Method+" "+kind]++
				cr.mu.Unlock()
				break
			}
		}
		reg.ServeHTTP(w, r)
	}))
	cr.host = strings.TrimPrefix(srv.URL, "http://")
	return cr, srv.Close
}

// take returns the requests counted so far, per repository, and forgets
// them.
func (cr *countingRegistry) take() map[string]map[string]int {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	out := cr.reqs
	cr.reqs = map[string]map[string]int{}
	return out
}

// most is the largest count of any repository under prefix, of the
// requests whose "METHOD kind" match matches (every request if match is
// empty).
func most(reqs map[string]map[string]int, prefix, match string) int {
	top := 0
	for repo, byKind := range reqs {
		if !strings.HasPrefix(repo, prefix) {
			continue
		}
		n := 0
		for k, c := range byKind {
			if match == "" || k == match {
				n += c
			}
		}
		top = max(top, n)
	}
	return top
}

func (cr *countingRegistry) target(repo, cluster string) oci.Target {
	return oci.Target{Repository: cr.host + "/" + repo + "/" + cluster, Tag: "bench", Insecure: true}
}

// pullEverywhere delivers every cluster by pull, each to its artifact.
type pullEverywhere map[string]oci.Target

func (p pullEverywhere) Pull(cluster string) (engine.PullArtifact, bool, error) {
	t, ok := p[cluster]
	return engine.PullArtifact{Target: t, Publisher: "bench"}, ok, nil
}

// MeasurePublish generates m intents over the named clusters, every one
// delivered by pull, and measures the engine's publishing once. Traffic
// policies are published after the virtual destinations they compose
// into, as Terraform orders them, their parts composed into the
// artifacts' VirtualServices (docs/design.md, "Composition on pull
// clusters"). Those with a connection pool are left out: it goes into
// the virtual destination's own DestinationRule, a contribution a pull
// cluster still refuses (errJoinedOnPull in internal/engine), so the
// configuration has fewer than m intents (Intents says how many).
func MeasurePublish(m int, names []string, parallelism int) (*Publish, error) {
	s := Generate(m, Clusters(names))
	kept := s.Traffic[:0]
	for _, tp := range s.Traffic {
		if tp.Intent.ConnectionPool == nil {
			kept = append(kept, tp)
		}
	}
	s.Traffic = kept
	reg := s.Registry()
	translated, err := s.Translate(reg)
	if err != nil {
		return nil, err
	}
	type intent struct {
		owner   engine.Owner
		desired []engine.Desired
		applied []engine.Entry
	}
	var all, plain, composed []*intent
	for _, t := range translated {
		desired, err := engine.Plan(t.Owner, t.Objects)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Owner, err)
		}
		in := &intent{owner: t.Owner, desired: desired}
		all = append(all, in)
		if t.Owner.Composition != nil {
			composed = append(composed, in)
		} else {
			plain = append(plain, in)
		}
	}
	cr, stop := newCountingRegistry()
	defer stop()
	pull := pullEverywhere{}
	for _, c := range names {
		pull[c] = cr.target("mesh", c)
	}
	// Clients for no cluster: a pull cluster needs no connection, and a
	// request to one would fail the apply.
	noClusters := newRecorder(nil)
	p := &Publish{Clusters: len(names), Intents: s.Intents(), Traffic: len(composed)}
	ctx := context.Background()

	eng := &engine.Engine{Clients: noClusters, Composers: Composers(reg), Delivery: pull, Shared: shareddata.Compositions{}}
	start := cpuNow()
	for _, wave := range [][]*intent{plain, composed} {
		if err := InParallel(wave, parallelism, func(in *intent) error {
			var err error
			in.applied, err = eng.Apply(ctx, in.owner, in.desired, nil)
			return err
		}); err != nil {
			return nil, fmt.Errorf("publishing: %w", err)
		}
	}
	p.Apply = cpuNow() - start
	reqs := cr.take()
	p.ApplyRequests = most(reqs, "mesh/", "")
	p.Pushes = most(reqs, "mesh/", "PUT manifests")

	// The floor: what the engine published, rendered and pushed once per
	// cluster, clusters in parallel.
	arts := map[string]oci.Artifact{}
	for _, c := range names {
		a, found, err := oci.Fetch(ctx, pull[c])
		if err != nil || !found {
			return nil, fmt.Errorf("reading back %s's artifact: found %v, %v", c, found, err)
		}
		arts[c] = a
		p.Objects += len(a.Objects)
	}
	cr.take()
	start = cpuNow()
	if err := InParallel(names, len(names), func(c string) error {
		ref, err := name.NewTag(cr.target("floor", c).String(), name.Insecure)
		if err != nil {
			return err
		}
		img, err := oci.Image(arts[c].Objects, arts[c].Publisher)
		if err != nil {
			return err
		}
		return remote.Write(ref, img)
	}); err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	p.Floor = cpuNow() - start
	p.FloorRequests = most(cr.take(), "floor/", "")
	for _, c := range names {
		img, err := oci.Image(arts[c].Objects, arts[c].Publisher)
		if err != nil {
			return nil, err
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			return nil, fmt.Errorf("%s's artifact: %d layers, %v", c, len(layers), err)
		}
		size, err := layers[0].Size()
		if err != nil {
			return nil, err
		}
		p.Bytes += size
		if d, err := img.Digest(); err != nil || d.String() != arts[c].Digest {
			return nil, fmt.Errorf("%s: the floor's artifact %v is not the one the engine published (%s): %v", c, d, arts[c].Digest, err)
		}
	}

	// A refresh in a new engine (a new provider process): every intent
	// read, each finding what it published.
	fresh := &engine.Engine{Clients: noClusters, Composers: Composers(reg), Delivery: pull, Shared: shareddata.Compositions{}}
	if err := InParallel(all, parallelism, func(in *intent) error {
		var kinds []schema.GroupVersionKind
		got, errs := fresh.Read(ctx, in.owner, kinds, names, in.applied)
		if err := errs.Err(); err != nil {
			return err
		}
		if !sameEntries(got, in.applied, nil) {
			return fmt.Errorf("%s: refresh found %s, apply returned %s", in.owner, digests(got), digests(in.applied))
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("refresh: %w", err)
	}
	reqs = cr.take()
	p.RefreshRequests = most(reqs, "mesh/", "")
	p.RefreshManifests = most(reqs, "mesh/", "GET manifests")
	return p, nil
}
