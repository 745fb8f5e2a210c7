package engine

import (
	"context"
	"errors"
	"testing"
	"time"
)

// The conflict backoff is what docs/reliability.md states: full jitter
// under a wait that doubles from 20 ms to at most 2 s, so no wait exceeds
// the cap (wait.Backoff's own Jitter adds up to d on top of d: waits of
// up to 4 s once capped, found by review).
func TestBackoffStaysUnderItsStatedCap(t *testing.T) {
	w := &waits{}
	e := &Engine{sleep: w.sleep}
	if err := e.retryConflicts(context.Background(), func(int) (bool, error) { return false, errRace }); !errors.Is(err, errKeptChanging) {
		t.Fatalf("retryConflicts = %v, want it to give up (errKeptChanging)", err)
	}
	if len(w.ds) != conflictBackoff.Steps-1 {
		t.Errorf("%d waits, want one between each of %d attempts", len(w.ds), conflictBackoff.Steps)
	}
	var total, longest time.Duration
	for _, d := range w.ds {
		total += d
		longest = max(longest, d)
	}
	if longest > conflictBackoff.Cap {
		t.Errorf("longest wait %s > the stated cap %s (total %s over %d waits)", longest, conflictBackoff.Cap, total, len(w.ds))
	}
}
