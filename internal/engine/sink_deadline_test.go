package engine

import (
	"context"
	"net/http"
	"sync"
	"testing"
)

// Every registry request the sink makes carries a deadline: Terraform's
// context has none, and a registry that accepts the connection and never
// answers would hang plan and apply instead of being reported unreachable
// (found by review). Checked without waiting: each request's context is
// looked at as it goes out.
func TestRegistryRequestsHaveADeadline(t *testing.T) {
	pr := newPullRegistry(t)
	tg := pr.target("onprem")
	var unbounded []string
	var mu sync.Mutex
	tg.Transport = roundTrip(func(r *http.Request) (*http.Response, error) {
		if _, ok := r.Context().Deadline(); !ok {
			mu.Lock()
			unbounded = append(unbounded, r.Method+" "+r.URL.Path)
			mu.Unlock()
		}
		return http.DefaultTransport.RoundTrip(r)
	})
	e, _ := newFakeEngine(t)
	e.Delivery = pullClusters{"onprem": tg}
	ctx := context.Background()
	prior, err := e.Apply(ctx, testOwner, []Desired{pullDesired(t, testOwner, "onprem", "a")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	run2, _ := newFakeEngine(t)
	run2.Delivery = pullClusters{"onprem": tg}
	if _, errs := run2.Read(ctx, testOwner, nil, []string{"onprem"}, prior); len(errs) > 0 {
		t.Fatal(errs)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(unbounded) > 0 {
		t.Errorf("%d registry requests without any deadline, e.g. %v", len(unbounded), unbounded[:min(3, len(unbounded))])
	}
}
