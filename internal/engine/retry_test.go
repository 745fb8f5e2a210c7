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
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

var errRace = apierrors.NewConflict(schema.GroupResource{Resource: "virtualservices"}, "x", errors.New("the object has been modified"))

// attemptsAndWaits is what retryConflicts makes of b: the attempts it
// runs when each one loses, and the waits it draws between them.
func attemptsAndWaits(b wait.Backoff) (int, []time.Duration) {
	attempts := 0
	var waits []time.Duration
	for b.Steps > 0 {
		attempts++
		if b.Steps == 1 {
			break
		}
		waits = append(waits, b.Step())
	}
	return attempts, waits
}

// The conflict backoff is what docs/reliability.md states: enough
// attempts for a burst of 20 writers (wait.Backoff's Cap would end the
// steps early: 20 ms doubling to 2 s is 8 attempts), each wait drawn
// from [d, 2d] with d growing by 15% from 20 ms, none over about 2 s and
// all of them under 15 s, and two runs do not wait alike (jitter).
func TestConflictBackoffSpreadsABurst(t *testing.T) {
	run := func() []time.Duration {
		attempts, ws := attemptsAndWaits(conflictBackoff)
		if attempts < 20 || attempts != conflictBackoff.Steps {
			t.Fatalf("%d attempts, want conflictBackoff.Steps (%d), at least 20 (a burst of 20 writers)", attempts, conflictBackoff.Steps)
		}
		d := 20 * time.Millisecond
		var total time.Duration
		for i, w := range ws {
			if w < d || w > 2*d {
				t.Fatalf("wait %d is %s, want within [%s, %s] (waits %v)", i+1, w, d, 2*d, ws)
			}
			total += w
			d = time.Duration(float64(d) * 1.15)
		}
		if longest := ws[len(ws)-1]; longest > 2100*time.Millisecond || total > 15*time.Second {
			t.Fatalf("the last wait is %s and all take %s, want at most about 2 s and 15 s", longest, total)
		}
		return ws
	}
	if a, b := run(), run(); fmt.Sprint(a) == fmt.Sprint(b) {
		t.Fatalf("two runs waited alike (%v): no jitter", a)
	}
}

// retryConflicts runs the attempts its backoff allows, and each one that
// lost a race is tried again; the give-up names the last conflict.
func TestRetryConflictsRunsTheBackoffsAttempts(t *testing.T) {
	e := &Engine{retryBackoff: &wait.Backoff{Steps: 5}}
	tries := 0
	err := e.retryConflicts(context.Background(), func(attempt int) (bool, error) {
		if attempt != tries {
			t.Fatalf("attempt %d passed as %d", tries, attempt)
		}
		tries++
		return false, errRace
	})
	if tries != 5 || !errors.Is(err, errKeptChanging) || !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "(5 attempts)") {
		t.Fatalf("after %d tries: %v; want 5 tries, then the give-up naming them and the last conflict", tries, err)
	}
	// A try that is done ends the retries with its own error, whatever it is.
	tries = 0
	own := errors.New("refused")
	err = e.retryConflicts(context.Background(), func(int) (bool, error) {
		if tries++; tries < 3 {
			return false, errRace
		}
		return true, own
	})
	if tries != 3 || err != own {
		t.Fatalf("after %d tries: %v; want the third try's own error", tries, err)
	}
}

// The retries end with the operation's context: an interrupted apply does
// not keep retrying, and says why it stopped.
func TestRetryConflictsEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e := &Engine{} // conflictBackoff: the wait after the first try ends at once
	tries := 0
	err := e.retryConflicts(ctx, func(int) (bool, error) { tries++; return false, errRace })
	if tries != 1 || !errors.Is(err, context.Canceled) || !errors.Is(err, errKeptChanging) || !apierrors.IsConflict(err) {
		t.Fatalf("after %d tries: %v; want one try, then the context's end, the give-up and the last conflict", tries, err)
	}
}

// A context that ends during a wait ends the wait, and the retries, at
// once: no further attempt is made, and the give-up says the operation
// ended. The wait is the test's: it blocks until the test, told that the
// wait began, cancels the context (no clock decides the test).
func TestRetryConflictsStopsWhenTheContextEndsDuringAWait(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	waiting := make(chan struct{})
	go func() {
		<-waiting
		cancel()
	}()
	waits := 0
	e := &Engine{retryBackoff: &conflictBackoff, retryWait: func(ctx context.Context, d time.Duration) error {
		if waits++; waits == 1 {
			close(waiting)
		}
		<-ctx.Done()
		return ctx.Err()
	}}
	tries := 0
	err := e.retryConflicts(ctx, func(int) (bool, error) { tries++; return false, errRace })
	if tries != 1 || waits != 1 {
		t.Fatalf("%d tries and %d waits, want one of each: the context ended during the first wait", tries, waits)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, errKeptChanging) || !apierrors.IsConflict(err) || !strings.Contains(err.Error(), "the operation ended") {
		t.Fatalf("got %v; want the give-up saying the operation ended, wrapping context.Canceled and the last conflict", err)
	}
}

// The engine's own wait ends with the context, however long it was to
// be: an hour's wait on a cancelled context returns its error (were it a
// sleep, the test would not end), and a wait that ran out on a live
// context returns nil.
func TestWaitOrEndEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := waitOrEnd(ctx, 0); err != nil {
		t.Fatalf("a wait that ran out on a live context: %v, want nil", err)
	}
	cancel()
	if err := waitOrEnd(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("an hour's wait on a cancelled context: %v, want context.Canceled", err)
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
	n    int // reads of the object, the gated ones and those after
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

// A burst: 20 states (20 engines, one owner each, with the real
// conflictBackoff) compose on one hostname at the same moment, all having
// read the object before any writes. 19 lose the first race; each reads
// again after its backoff, and all land: every route is in the composed
// object, none lost.
func TestBurstOfTwentyWritersOnOneHostname(t *testing.T) {
	const writers = 20
	_, fc := newFakeEngine(t, "east")
	d := composedEntry()
	// One contribution is there before the burst.
	first := &Engine{Clients: fc, FieldManager: "test", Shared: Compositions{}, retryBackoff: noWait}
	if _, err := first.Apply(context.Background(), composedOwner("first"), []Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	g := &gate{name: d.Name, size: writers, all: make(chan struct{})}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		e := &Engine{Clients: gated{fc, g}, FieldManager: "test", Shared: Compositions{}}
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
	if g.n < 2*writers-1 {
		t.Fatalf("%d reads of the object, want at least %d (all but the first to write lost a race and read again)", g.n, 2*writers-1)
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
