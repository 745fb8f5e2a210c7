package engine

import (
	"context"
	"testing"
	"time"
)

// R10. docs/reliability.md and design.md: "exponential backoff with full
// jitter, 20 ms doubling to at most 2 s a wait, at most 40 attempts".
// wait.Backoff's Jitter adds [0, d) on top of d (so [d, 2d), not full
// jitter's [0, d)), and once the cap is reached every wait is the cap
// jittered: up to 4 s. A writer that keeps losing (a controller rewriting
// the object) holds the apply for up to ~2 minutes per object; no
// resource has a timeouts block, so only an interrupt ends it sooner.
func TestReviewBackoffStaysUnderItsStatedCap(t *testing.T) {
	w := &waits{}
	e := &Engine{sleep: w.sleep}
	_ = e.retryConflicts(context.Background(), func(int) (bool, error) { return false, errRace })
	var total, longest time.Duration
	for _, d := range w.ds {
		total += d
		longest = max(longest, d)
	}
	if longest > conflictBackoff.Cap {
		t.Errorf("longest wait %s > the stated cap %s (total %s over %d waits)", longest, conflictBackoff.Cap, total, len(w.ds))
	}
}
