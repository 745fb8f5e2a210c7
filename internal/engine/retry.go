package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// conflictBackoff paces the optimistic-concurrency retries of one object
// (a composed object that another state wrote in between, a restore that
// lost a race). retryConflicts runs the attempts and waits between them:
// a wait grows by 15% an attempt from 20 ms and is drawn from [d, 2d]
// (Jitter 1), so that writers that collided once do not collide again in
// step; the 29th and last wait is at most about 2 s, all of them together
// at most about 15 s.
//
// A burst of N writers on one object needs at most N attempts of each
// (every lost attempt is another writer's won one), so Steps covers a
// burst of every pipeline a module release triggers. There is no Cap on
// purpose: wait.Backoff ends its steps once a wait reaches the cap (so 20
// ms doubling to 2 s would allow only 8 attempts); Steps and Factor bound
// the waits instead.
var conflictBackoff = wait.Backoff{Duration: 20 * time.Millisecond, Factor: 1.15, Jitter: 1, Steps: 30}

// errKeptChanging is the error of writes that lost every race they ran.
var errKeptChanging = errors.New("the object kept changing under concurrent writers")

// backoff is the engine's conflictBackoff (tests give one without waits,
// so that no clock decides them).
func (e *Engine) backoff() wait.Backoff {
	if e.retryBackoff != nil {
		return *e.retryBackoff
	}
	return conflictBackoff
}

// waitOrEnd waits d, or less when ctx ends first: its error is ctx's.
// client-go's retry.OnError sleeps through its waits, so a cancelled
// apply would stop only after the current one.
func waitOrEnd(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return ctx.Err()
	}
}

// pause is the engine's wait between retries: waitOrEnd, unless a test
// gives its own.
func (e *Engine) pause(ctx context.Context, d time.Duration) error {
	if e.retryWait != nil {
		return e.retryWait(ctx, d)
	}
	return waitOrEnd(ctx, d)
}

// retryConflicts runs try until it is done (its error, if any, is the
// result), stepping through the engine's backoff: an attempt that is not
// done (another writer came first: try returns done false and that error)
// is tried again after the next wait. It gives up when the attempts run
// out, or when ctx ends (during a wait, which then ends at once), with an
// error that wraps errKeptChanging and the last conflict.
func (e *Engine) retryConflicts(ctx context.Context, try func(attempt int) (done bool, err error)) error {
	b := e.backoff()
	for attempt := 0; ; {
		done, err := try(attempt)
		attempt++
		if done {
			return err
		}
		if b.Steps <= 1 {
			return fmt.Errorf("%w (%d attempts): %w", errKeptChanging, attempt, err)
		}
		if ended := e.pause(ctx, b.Step()); ended != nil {
			return fmt.Errorf("%w, and the operation ended (%w) before it settled: %w", errKeptChanging, ended, err)
		}
	}
}
