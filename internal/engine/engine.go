package engine

import (
	"context"
	"sort"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
	"github.com/mesh-intent/terraform-provider-mesh/internal/translate/composition"
)

// ClientSource hands out the clients of a registered cluster.
type ClientSource interface {
	Get(cluster string) (*kubeclient.Clients, error)
}

// Engine applies, reads and deletes the objects of intents.
type Engine struct {
	Clients ClientSource
	// FieldManager is the base of every intent's field manager name.
	FieldManager string
	// ForceConflicts takes fields over from other field managers.
	ForceConflicts bool
	// Concurrency bounds the requests in flight per cluster.
	Concurrency int
	// RecordsNamespace is the only namespace whose ConfigMaps (records)
	// the engine lists: the provider needs no ConfigMap access elsewhere.
	RecordsNamespace string

	// Composers are the composers of the composed intent kinds, by owner
	// kind. A composer's fields on an object are the composition's (not
	// drift) only where a contribution of its kind decodes and composes
	// into that object (contributingKinds); nil: nowhere.
	Composers map[string]composition.Composer

	// Shared composes the objects several intents share (shared.go); the
	// provider registers it. Nil: no composition, and a composed intent
	// is refused (noShared).
	Shared Shared

	// Delivery says which clusters are delivered by pull (sink.go); nil:
	// every cluster is written by server-side apply.
	Delivery Delivery

	// lists holds this process's listings (listcache.go).
	lists listings
	// pulls holds this process's artifact writers and fetched artifacts.
	pulls pulls
	// memos holds what the protocols above the engine keep per process
	// (Memo).
	memos sync.Map
	// foreign holds this process's listings of hand-written
	// VirtualServices and DestinationRules (foreign_routes.go).
	foreign foreignRoutes
	// retryBackoff paces the retries of a write that lost a race
	// (retry.go); nil is conflictBackoff. Tests give one without waits
	// so that no clock decides them.
	retryBackoff *wait.Backoff
	// retryWait waits between those retries, or ends the wait with the
	// context's error (retry.go); nil is waitOrEnd. Tests give one that
	// no clock decides.
	retryWait func(ctx context.Context, d time.Duration) error
}

// DefaultConcurrency is the number of objects written at once per cluster.
const DefaultConcurrency = 8

func (e *Engine) concurrency() int {
	if e.Concurrency <= 0 {
		return DefaultConcurrency
	}
	return e.Concurrency
}

// perCluster runs fn for every cluster in parallel and gathers the entries
// each returns and the errors each reports.
func perCluster(ctx context.Context, clusters []string, fn func(ctx context.Context, cluster string) ([]Entry, []*Error)) ([]Entry, Errors) {
	var (
		mu      sync.Mutex
		entries []Entry
		errs    Errors
		wg      sync.WaitGroup
	)
	for _, c := range clusters {
		wg.Add(1)
		go func(cluster string) {
			defer wg.Done()
			got, es := fn(ctx, cluster)
			mu.Lock()
			entries = append(entries, got...)
			errs = append(errs, es...)
			mu.Unlock()
		}(c)
	}
	wg.Wait()
	SortEntries(entries)
	errs.sort()
	return entries, errs
}

// bounded runs fn over n items with at most limit running at once.
func bounded(n, limit int, fn func(i int)) {
	var g errgroup.Group
	g.SetLimit(limit)
	for i := range n {
		g.Go(func() error { fn(i); return nil })
	}
	_ = g.Wait() // always nil: fn reports its errors itself
}

func clustersOf(entries ...[]Entry) []string {
	seen := map[string]bool{}
	var out []string
	for _, es := range entries {
		for _, e := range es {
			if !seen[e.Cluster] {
				seen[e.Cluster] = true
				out = append(out, e.Cluster)
			}
		}
	}
	sort.Strings(out)
	return out
}

func byCluster(es []Entry, cluster string) []Entry {
	var out []Entry
	for _, e := range es {
		if e.Cluster == cluster {
			out = append(out, e)
		}
	}
	return out
}
