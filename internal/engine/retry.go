package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
)

// conflictBackoff paces the optimistic-concurrency retries of one object
// (a composed object that another state wrote in between, a restore that
// lost a race). client-go's retry.OnError runs the attempts and waits
// between them: a wait grows by 15% an attempt from 20 ms and is drawn
// from [d, 2d] (Jitter 1), so that writers that collided once do not
// collide again in step; the 29th and last wait is at most about 2 s,
// all of them together at most about 15 s.
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

// lostRace is an attempt that another writer beat: the only error
// retry.OnError retries.
type lostRace struct{ err error }

func (l lostRace) Error() string { return l.err.Error() }

// contextEnded is the operation's end (Terraform's timeout, an
// interrupt) seen before an attempt: never retried.
type contextEnded struct{ err error }

func (c contextEnded) Error() string { return c.err.Error() }

// backoff is the engine's conflictBackoff (tests give one without waits,
// so that no clock decides them).
func (e *Engine) backoff() wait.Backoff {
	if e.retryBackoff != nil {
		return *e.retryBackoff
	}
	return conflictBackoff
}

// retryConflicts runs try until it is done (its error, if any, is the
// result), through client-go's retry.OnError with the engine's backoff:
// an attempt that is not done (another writer came first: try returns
// done false and that error) is tried again after the next wait. It gives
// up when the attempts run out, or when ctx has ended before an attempt
// (so at most one wait after it ends), with an error that wraps
// errKeptChanging and the last conflict.
func (e *Engine) retryConflicts(ctx context.Context, try func(attempt int) (done bool, err error)) error {
	b := e.backoff()
	attempt := 0
	var last error
	err := retry.OnError(b, func(err error) bool {
		var l lostRace
		return errors.As(err, &l)
	}, func() error {
		if attempt > 0 {
			if err := ctx.Err(); err != nil {
				return contextEnded{err}
			}
		}
		done, err := try(attempt)
		attempt++
		if done {
			return err
		}
		last = err
		return lostRace{err}
	})
	var ended contextEnded
	var l lostRace
	switch {
	case errors.As(err, &ended):
		return fmt.Errorf("%w, and the operation ended (%w) before it settled: %w", errKeptChanging, ended.err, last)
	case errors.As(err, &l):
		return fmt.Errorf("%w (%d attempts): %w", errKeptChanging, attempt, last)
	}
	return err
}
