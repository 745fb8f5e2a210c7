package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// conflictBackoff paces the optimistic-concurrency retries of one object
// (a composed object that another state wrote in between, a restore that
// lost a race): exponential from 20ms, capped at 2s a wait, with full
// jitter so that writers that collided once do not collide again in step.
// A burst of N writers on one object needs at most N attempts of each
// (every lost attempt is another writer's won one), so Steps covers a
// burst of every pipeline a module release triggers; the operation's
// context (Terraform's timeouts, an interrupt) ends the waits earlier.
// The jitter is applied by fullJitter: wait.Backoff's own Jitter adds up
// to the wait on top of it, which would double the cap.
var conflictBackoff = wait.Backoff{Duration: 20 * time.Millisecond, Factor: 2, Steps: 40, Cap: 2 * time.Second}

// fullJitter is a wait drawn uniformly from (0, d].
func fullJitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return time.Duration(rand.Int64N(int64(d))) + 1
}

// errKeptChanging is the error of writes that lost every race they ran.
var errKeptChanging = errors.New("the object kept changing under concurrent writers")

// sleepCtx waits d, or until ctx ends (its error then).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryConflicts runs try until it is done (its error, if any, is the
// result), waiting a jittered, growing backoff between attempts that are
// not (another writer came first: try returns done false and that
// error). It gives up when the attempts run out or ctx ends, with an
// error that wraps errKeptChanging and the last conflict.
func (e *Engine) retryConflicts(ctx context.Context, try func(attempt int) (done bool, err error)) error {
	b := conflictBackoff
	steps := b.Steps
	sleep := e.sleep
	if sleep == nil {
		sleep = sleepCtx
	}
	var last error
	for attempt := 0; attempt < steps; attempt++ {
		if attempt > 0 {
			if err := sleep(ctx, fullJitter(b.Step())); err != nil {
				return fmt.Errorf("%w, and the operation ended (%w) before it settled: %w", errKeptChanging, err, last)
			}
		}
		done, err := try(attempt)
		if done {
			return err
		}
		last = err
	}
	return fmt.Errorf("%w (%d attempts): %w", errKeptChanging, steps, last)
}
