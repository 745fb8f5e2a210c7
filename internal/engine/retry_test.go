package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
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
