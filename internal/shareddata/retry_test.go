package shareddata

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/mesh-intent/terraform-provider-mesh/internal/engine"
	"github.com/mesh-intent/terraform-provider-mesh/internal/engine/enginetest"
	"github.com/mesh-intent/terraform-provider-mesh/internal/kubeclient"
)

// A burst of writers on one composed object (retry.go's backoff, through
// compose).

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
	enginetest.Clusters
	g *gate
}

func (c gated) Get(cluster string) (*kubeclient.Clients, error) {
	cl, err := c.Clusters.Get(cluster)
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
	first, fc := newEngine("east")
	d := enginetest.ComposedEntry()
	// One contribution is there before the burst.
	if _, err := first.Apply(context.Background(), enginetest.ComposedOwner("first"), []engine.Desired{d}, nil); err != nil {
		t.Fatal(err)
	}
	g := &gate{name: d.Name, size: writers, all: make(chan struct{})}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		e := &engine.Engine{Clients: gated{fc, g}, FieldManager: "test", Shared: Compositions{}}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.Apply(context.Background(), enginetest.ComposedOwner(fmt.Sprintf("w%02d", i)), []engine.Desired{d}, nil)
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
	vs := enginetest.Live(t, fc["east"], d.Entry)
	for i := range writers {
		k := fmt.Sprintf("traffic-policy.mesh-intent.io/w%02d", i)
		if vs.GetAnnotations()[k] == "" || vs.GetLabels()[k] != fmt.Sprintf("id-w%02d", i) {
			t.Fatalf("contribution %s missing: labels %v", k, vs.GetLabels())
		}
	}
}
