package gen

import (
	"context"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"syscall"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/shareddata"
)

// Fleet is one measurement of the provider's engine on fake clusters
// (the in-memory clusters of record.go, client-go's fake dynamic client):
// every step the end-to-end bench times against real API servers, with
// the API servers taken out, so that tens of clusters fit on a laptop.
// Each step of the engine is set against its floor on the same fake
// clusters: the same apply requests replayed (the SSA floor), one LIST
// per cluster and kind (the list floor), one DELETE per object (the
// delete floor). Times are CPU seconds of this process (user and
// system, the in-memory clusters' work included, the garbage collector
// too): on a machine shared with other work they move far less than wall
// time, which the load decides.
type Fleet struct {
	Clusters, Intents int
	// Objects is what the translator returns; Planned what engine.Plan
	// returns (records and composed objects included).
	Objects, Planned int

	Translate, Plan float64 // the translator alone; engine.Plan alone (CPU seconds, as every time below)

	FloorApply, Apply   float64
	FloorList, Read     float64 // Read: every intent's refresh in a new engine (no listing yet)
	FloorDelete, Delete float64

	// Requests the engine sent per step, over every cluster; Touched is
	// how many clusters received any.
	ApplyRequests, ReadRequests, DeleteRequests int
	Touched                                     int
}

// fleetIntent is one intent as the fleet measurement drives it.
type fleetIntent struct {
	owner   engine.Owner
	desired []engine.Desired
	kinds   []schema.GroupVersionKind
	applied []engine.Entry
}

// MeasureFleet generates m intents over n fake clusters and measures
// every step once. parallelism intents are handled at once, as Terraform
// does (its -parallelism).
func MeasureFleet(m, n, parallelism int) (*Fleet, error) {
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("c%02d", i))
	}
	s := Generate(m, Clusters(names))
	reg := s.Registry()
	f := &Fleet{Clusters: n, Intents: s.Intents()}

	start := cpuNow()
	translated, err := s.Translate(reg)
	if err != nil {
		return nil, err
	}
	f.Translate = cpuNow() - start
	var all []*fleetIntent
	start = cpuNow()
	for _, t := range translated {
		desired, err := engine.Plan(t.Owner, t.Objects)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", t.Owner, err)
		}
		all = append(all, &fleetIntent{owner: t.Owner, desired: desired})
	}
	f.Plan = cpuNow() - start
	var plain, composed []*fleetIntent
	for i, t := range translated {
		f.Objects += len(t.Objects)
		in := all[i]
		f.Planned += len(in.desired)
		kinds := map[schema.GroupVersionKind]bool{}
		for _, d := range in.desired {
			kinds[schema.FromAPIVersionAndKind(d.APIVersion, d.Kind)] = true
		}
		for k := range kinds {
			in.kinds = append(in.kinds, k)
		}
		sort.Slice(in.kinds, func(i, j int) bool { return in.kinds[i].String() < in.kinds[j].String() })
		if in.owner.Composition != nil {
			composed = append(composed, in)
		} else {
			plain = append(plain, in)
		}
	}
	ctx := context.Background()
	composers := Composers(reg)

	// The engine's apply, in Terraform's order (traffic policies after
	// the virtual destinations they compose into).
	clusters := newRecorder(names)
	clusters.allFields = true
	eng := &engine.Engine{Clients: clusters, Composers: composers, Shared: shareddata.Compositions{}}
	start = cpuNow()
	for wave, intents := range [][]*fleetIntent{plain, composed} {
		clusters.setWave(wave)
		if err := InParallel(intents, parallelism, func(in *fleetIntent) error {
			var err error
			in.applied, err = eng.Apply(ctx, in.owner, in.desired, nil)
			return err
		}); err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
	}
	f.Apply = cpuNow() - start
	f.ApplyRequests, f.Touched = clusters.requests()

	// The SSA floor: the engine's apply requests, replayed as sent on
	// new fake clusters, one wave after the other.
	floor := newRecorder(names)
	floor.allFields = true
	floor.unrecorded = true
	start = cpuNow()
	if err := floor.replay(ctx, clusters.writes, parallelism); err != nil {
		return nil, fmt.Errorf("floor apply: %w", err)
	}
	f.FloorApply = cpuNow() - start
	floor.requests() // forgotten

	// The list floor: one LIST of our objects per cluster and kind.
	start = cpuNow()
	if err := floor.listAll(ctx, names); err != nil {
		return nil, fmt.Errorf("floor list: %w", err)
	}
	f.FloorList = cpuNow() - start

	// A no-op refresh: a new engine (a new provider process) reads every
	// intent; each must find exactly what it applied.
	composedKeys := map[string]bool{}
	for _, w := range clusters.writes {
		if w.Wave == 1 {
			composedKeys[w.Key.String()] = true
		}
	}
	fresh := &engine.Engine{Clients: clusters, Composers: composers, Shared: shareddata.Compositions{}}
	start = cpuNow()
	if err := InParallel(all, parallelism, func(in *fleetIntent) error {
		got, errs := fresh.Read(ctx, in.owner, in.kinds, nil, in.applied)
		if err := errs.Err(); err != nil {
			return err
		}
		if !sameEntries(got, in.applied, composedKeys) {
			return fmt.Errorf("%s: refresh found %s, apply returned %s: not a no-op", in.owner, digests(got), digests(in.applied))
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	f.Read = cpuNow() - start
	f.ReadRequests, _ = clusters.requests()

	// Destroy: traffic policies first, in a new engine.
	gone := &engine.Engine{Clients: clusters, Composers: composers, Shared: shareddata.Compositions{}}
	start = cpuNow()
	for _, intents := range [][]*fleetIntent{composed, plain} {
		if err := InParallel(intents, parallelism, func(in *fleetIntent) error {
			left, err := gone.Delete(ctx, in.owner, in.applied)
			if err == nil && len(left) > 0 {
				err = fmt.Errorf("%s: %d objects left after delete", in.owner, len(left))
			}
			return err
		}); err != nil {
			return nil, fmt.Errorf("delete: %w", err)
		}
	}
	f.Delete = cpuNow() - start
	f.DeleteRequests, _ = clusters.requests()

	// The delete floor: one DELETE per object the floor wrote.
	start = cpuNow()
	if err := floor.deleteAll(ctx, clusters.writes, parallelism); err != nil {
		return nil, fmt.Errorf("floor delete: %w", err)
	}
	f.FloorDelete = cpuNow() - start
	return f, nil
}

// sameEntries reports whether a and b list the same entries with the same
// digests, in any order. The digests of composed objects (keys in
// composed) are not compared: the fake's merge does not move ownership
// of a field a composer's forced apply takes over, as an API server
// does, so an owner's digest of such an object differs on fake clusters
// only (the end-to-end bench compares them on real ones).
func sameEntries(a, b []engine.Entry, composed map[string]bool) bool {
	if len(a) != len(b) {
		return false
	}
	seen := map[engine.Entry]int{}
	strip := func(e engine.Entry) engine.Entry {
		if composed[e.String()] {
			e.Digest = ""
		}
		return e
	}
	for _, e := range a {
		seen[strip(e)]++
	}
	for _, e := range b {
		if seen[strip(e)] == 0 {
			return false
		}
		seen[strip(e)]--
	}
	return true
}

// digests lists entries with their digests, for a message.
func digests(es []engine.Entry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.String()+" "+e.Digest)
	}
	return out
}

// requests counts the requests the clusters received since it was last
// called, in all and how many clusters received any, and forgets them
// (client-go's fake keeps every request otherwise).
func (r *recorder) requests() (total, touched int) {
	for _, d := range r.clusters {
		if n := len(d.Actions()); n > 0 {
			total += n
			touched++
		}
		d.ClearActions()
	}
	return total, touched
}

// replay sends writes as the floor does: the apply requests as recorded,
// wave by wave, up to parallelism at once per cluster, clusters in
// parallel.
func (r *recorder) replay(ctx context.Context, writes []Write, parallelism int) error {
	waves := map[int]map[string][]Write{}
	for _, w := range writes {
		if waves[w.Wave] == nil {
			waves[w.Wave] = map[string][]Write{}
		}
		waves[w.Wave][w.Key.Cluster] = append(waves[w.Wave][w.Key.Cluster], w)
	}
	var order []int
	for w := range waves {
		order = append(order, w)
	}
	sort.Ints(order)
	for _, w := range order {
		if err := r.perCluster(waves[w], parallelism, func(w Write) error {
			gvr, ok := engine.ResourceOf(schema.FromAPIVersionAndKind(w.Key.APIVersion, w.Key.Kind))
			if !ok {
				return fmt.Errorf("%s: not a kind the engine writes", w.Key)
			}
			force := w.Force
			_, err := r.clusters[w.Key.Cluster].Resource(gvr).Namespace(w.Key.Namespace).Patch(ctx, w.Key.Name, types.ApplyPatchType, w.Body,
				metav1.PatchOptions{FieldManager: w.Manager, Force: &force})
			return err
		}); err != nil {
			return err
		}
	}
	return nil
}

// listAll lists our objects once per cluster and kind (ConfigMaps in the
// records namespace alone, as the engine does).
func (r *recorder) listAll(ctx context.Context, names []string) error {
	sel := labels.SelectorFromSet(labels.Set{engine.LabelManagedBy: engine.ManagedByValue}).String()
	for _, c := range names {
		for _, gvk := range engine.Kinds() {
			gvr, _ := engine.ResourceOf(gvk)
			ri := r.clusters[c].Resource(gvr)
			var err error
			if gvk.Kind == "ConfigMap" && gvk.Group == "" {
				_, err = ri.Namespace(engine.DefaultRecordsNamespace).List(ctx, metav1.ListOptions{LabelSelector: sel})
			} else {
				_, err = ri.List(ctx, metav1.ListOptions{LabelSelector: sel})
			}
			if err != nil {
				return fmt.Errorf("%s %s: %w", c, gvk.Kind, err)
			}
		}
	}
	return nil
}

// deleteAll deletes every object the writes named, once.
func (r *recorder) deleteAll(ctx context.Context, writes []Write, parallelism int) error {
	byCluster := map[string][]Write{}
	seen := map[string]bool{}
	for _, w := range writes {
		if k := w.Key.String(); !seen[k] {
			seen[k] = true
			byCluster[w.Key.Cluster] = append(byCluster[w.Key.Cluster], w)
		}
	}
	return r.perCluster(byCluster, parallelism, func(w Write) error {
		gvr, _ := engine.ResourceOf(schema.FromAPIVersionAndKind(w.Key.APIVersion, w.Key.Kind))
		return r.clusters[w.Key.Cluster].Resource(gvr).Namespace(w.Key.Namespace).Delete(ctx, w.Key.Name, metav1.DeleteOptions{})
	})
}

// perCluster calls fn for every write, clusters in parallel, at most
// parallelism at once within one cluster.
func (r *recorder) perCluster(byCluster map[string][]Write, parallelism int, fn func(Write) error) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(byCluster))
	for _, ws := range byCluster {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := InParallel(ws, parallelism, fn); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// InParallel calls fn for every item, at most n at once, and returns the
// first error.
func InParallel[T any](items []T, n int, fn func(T) error) error {
	sem := make(chan struct{}, max(n, 1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first error
	for _, it := range items {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := fn(it); err != nil {
				mu.Lock()
				if first == nil {
					first = err
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return first
}

// Spread is the median of values (the mean of the middle two for an even
// count) and how a table prints it: alone for one value, else with the
// range, "1.20 (1.10 to 1.50)".
func Spread(values []float64) (float64, string) {
	v := append([]float64(nil), values...)
	sort.Float64s(v)
	med := v[len(v)/2]
	if len(v)%2 == 0 {
		med = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	if len(v) == 1 {
		return med, fmt.Sprintf("%.2f", med)
	}
	return med, fmt.Sprintf("%.2f (%.2f to %.2f)", med, v[0], v[len(v)-1])
}

// cpuNow is the CPU time this process has used, in seconds, after a
// garbage collection: the collection of the previous step's garbage is
// not counted in the next step.
func cpuNow() float64 {
	runtime.GC()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
