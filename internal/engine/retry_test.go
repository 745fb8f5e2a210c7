package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// waits records the backoff an engine asked for, and waits for none.
type waits struct {
	mu sync.Mutex
	ds []time.Duration
}

func (w *waits) sleep(ctx context.Context, d time.Duration) error {
	w.mu.Lock()
	w.ds = append(w.ds, d)
	w.mu.Unlock()
	return ctx.Err()
}

// checkBackoff fails unless ds are the first waits of conflictBackoff:
// each drawn with full jitter from (0, d], d growing by the factor up to
// the cap.
func checkBackoff(t *testing.T, ds []time.Duration) {
	t.Helper()
	step := conflictBackoff.Duration
	for i, d := range ds {
		hi := min(step, conflictBackoff.Cap)
		if d <= 0 || d > hi {
			t.Fatalf("wait %d is %s, want within (0, %s] (waits %v)", i+1, d, hi, ds)
		}
		step = time.Duration(float64(step) * conflictBackoff.Factor)
	}
}

var errRace = apierrors.NewConflict(schema.GroupResource{Resource: "virtualservices"}, "x", errors.New("the object has been modified"))

// A write that lost a race waits a growing, jittered backoff before each
// new attempt.
func TestRetryConflictsBacksOffWithJitter(t *testing.T) {
	run := func() []time.Duration {
		w := &waits{}
		e := &Engine{sleep: w.sleep}
		tries := 0
		err := e.retryConflicts(context.Background(), func(int) (bool, error) {
			if tries++; tries <= 6 {
				return false, errRace
			}
			return true, nil
		})
		if err != nil || tries != 7 {
			t.Fatalf("err %v after %d tries, want success at the 7th", err, tries)
		}
		if len(w.ds) != 6 {
			t.Fatalf("%d waits (%v), want one before each of the 6 retries", len(w.ds), w.ds)
		}
		checkBackoff(t, w.ds)
		return w.ds
	}
	// Jitter: two runs do not wait alike (two equal draws of six random
	// durations do not happen).
	if a, b := run(), run(); fmt.Sprint(a) == fmt.Sprint(b) {
		t.Fatalf("two runs waited alike (%v): no jitter", a)
	}
}

// The waits end with the operation's context: an interrupted apply does
// not keep retrying, and says why it stopped.
func TestRetryConflictsEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := &Engine{} // the real timer, bounded by the context
	tries := 0
	err := e.retryConflicts(ctx, func(int) (bool, error) { tries++; return false, errRace })
	if tries != 1 || !errors.Is(err, context.Canceled) || !errors.Is(err, errKeptChanging) || !apierrors.IsConflict(err) {
		t.Fatalf("after %d tries: %v; want one try, then the context's end, the give-up and the last conflict", tries, err)
	}
}

// gate holds the answers to the first size reads of one object until
// size of them have been read, so that size writers read the same
// version and then all write at the same moment (no clock: a channel
// closed by the last reader).
type gate struct {
	name string
	size int
	mu   sync.Mutex
	n    int
	all  chan struct{}
}

func (g *gate) arrive() {
	g.mu.Lock()
	g.n++
	k := g.n
	if k == g.size {
		close(g.all)
	}
	g.mu.Unlock()
	if k <= g.size {
		<-g.all
	}
}

// gated is a ClientSource whose reads of the gate's object pass the gate
// (outside the fake's own lock, which serialises its reactions).
type gated struct {
	fakeClusters
	g *gate
}

func (c gated) Get(cluster string) (*kubeclient.Clients, error) {
	cl, err := c.fakeClusters.Get(cluster)
	if err != nil {
		return nil, err
	}
	return &kubeclient.Clients{Dynamic: gatedDynamic{cl.Dynamic, c.g}}, nil
}

type gatedDynamic struct {
	dynamic.Interface
	g *gate
}

func (d gatedDynamic) Resource(r schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return gatedResource{d.Interface.Resource(r), d.g}
}

type gatedResource struct {
	dynamic.NamespaceableResourceInterface
	g *gate
}

func (r gatedResource) Namespace(ns string) dynamic.ResourceInterface {
	return gatedNamespaced{r.NamespaceableResourceInterface.Namespace(ns), r.g}
}

type gatedNamespaced struct {
	dynamic.ResourceInterface
	g *gate
}

func (r gatedNamespaced) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	obj, err := r.ResourceInterface.Get(ctx, name, opts, sub...)
	if name == r.g.name {
		r.g.arrive() // having read: no writer writes before all have read
	}
	return obj, err
}

// A burst: 20 states (20 engines, one owner each) compose on one
// hostname at the same moment, all having read the object before any
// writes. 19 lose the first race; each retries after a backoff, and all
// land: every route is in the composed object, none lost.
func TestBurstOfTwentyWritersOnOneHostname(t *testing.T) {
	const writers = 20
	_, fc := newFakeEngine(t, "east")
	d := composedEntry()
	// One contribution is there before the burst.
	first := &Engine{Clients: fc, FieldManager: "test", sleep: noWait}
	if _, err := first.Apply(context.Background(), composedOwner("first"), []Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	g := &gate{name: d.Name, size: writers, all: make(chan struct{})}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	ws := make([]*waits, writers)
	for i := range writers {
		ws[i] = &waits{}
		e := &Engine{Clients: gated{fc, g}, FieldManager: "test", sleep: ws[i].sleep}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.Apply(context.Background(), composedOwner(fmt.Sprintf("w%02d", i)), []Desired{d}, nil)
			if err != nil {
				errs[i] = err
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("writer %d failed: %v", i, err)
		}
	}
	retried := 0
	for _, w := range ws {
		checkBackoff(t, w.ds)
		if len(w.ds) > 0 {
			retried++
		}
	}
	if retried < writers-1 {
		t.Fatalf("%d writers waited before retrying, want at least %d (all but the first to write lost a race)", retried, writers-1)
	}
	want := []string{"route-of-first"}
	for i := range writers {
		want = append(want, fmt.Sprintf("route-of-w%02d", i))
	}
	if got := routesOf(t, fc["east"], d.Entry); got != "["+strings.Join(want, " ")+"]" {
		t.Fatalf("composed routes %s, want all %d", got, len(want))
	}
	vs := live(t, fc["east"], d.Entry)
	for i := range writers {
		k := fmt.Sprintf("traffic-policy.mesh-intent.io/w%02d", i)
		if vs.GetAnnotations()[k] == "" || vs.GetLabels()[k] != fmt.Sprintf("id-w%02d", i) {
			t.Fatalf("contribution %s missing: labels %v", k, vs.GetLabels())
		}
	}
}
