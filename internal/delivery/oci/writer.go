package oci

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// Writers hands out one Writer per artifact (repository and tag) for the
// life of the process, so that all the resources Terraform applies in
// parallel in one run write to an artifact through one Writer.
type Writers struct {
	mu sync.Mutex
	m  map[string]*Writer
}

// For returns the Writer of t's artifact, publishing as publisher. The
// target's credentials are the ones of this call: a later call (the next
// run of a long-lived process) brings fresh ones.
func (ws *Writers) For(t Target, publisher string) *Writer {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m == nil {
		ws.m = map[string]*Writer{}
	}
	w := ws.m[t.String()]
	if w == nil {
		w = &Writer{}
		ws.m[t.String()] = w
	}
	w.mu.Lock()
	w.target, w.publisher = t, publisher
	w.mu.Unlock()
	return w
}

// Change edits an artifact's objects: it is given a copy it may modify
// and returns an error to leave the artifact as it was.
type Change func(Objects) error

// Writer serialises the writes to one artifact. Changes queued while a
// push is in flight go out together in the next push (a group commit):
// 500 resources applied in parallel make a handful of pushes, not 500.
// Each change is applied to the artifact the registry holds (read again
// whenever its digest is not the one this Writer last saw), so a change
// never undoes another one, made in this process or before it.
type Writer struct {
	mu        sync.Mutex // guards every field but last, which only the leader uses
	target    Target
	publisher string
	queue     []*pending
	leading   bool
	// last is the artifact as this Writer last pushed or fetched it.
	last *Artifact
	// rendered keeps the YAML of the objects of the last artifact it
	// built, which the next push's mostly repeat (used by the leader).
	rendered yamlCache
	// enqueued, when set (tests), is called after a change is queued.
	enqueued func()
}

type pending struct {
	change Change
	done   chan result
}

type result struct {
	artifact Artifact
	err      error
}

// Update applies change to the artifact and publishes it, and returns the
// artifact the tag names afterwards (its objects are shared: read only). The call that finds no push in flight
// leads: it pushes its change and every change queued meanwhile, until the
// queue is empty; the others wait for the push that carries theirs.
func (w *Writer) Update(ctx context.Context, change Change) (Artifact, error) {
	p := &pending{change: change, done: make(chan result, 1)}
	w.mu.Lock()
	w.queue = append(w.queue, p)
	lead := !w.leading
	w.leading = true
	hook := w.enqueued
	w.mu.Unlock()
	if hook != nil {
		hook()
	}
	if lead {
		w.lead(ctx)
	}
	select {
	case r := <-p.done:
		return r.artifact, r.err
	case <-ctx.Done():
	}
	// Cancelled while waiting. A change still queued is withdrawn: it is
	// never published. One a push has taken is in flight: its outcome is
	// this change's, so the caller never mistakes a published change for
	// a failed one (its objects would be in the artifact and not in state).
	w.mu.Lock()
	for i, q := range w.queue {
		if q == p {
			w.queue = append(w.queue[:i:i], w.queue[i+1:]...)
			w.mu.Unlock()
			return Artifact{}, ctx.Err()
		}
	}
	w.mu.Unlock()
	r := <-p.done
	return r.artifact, r.err
}

// lead pushes batches until the queue is empty. The leader's context
// carries every batch: the leader returns only when the queue is empty.
func (w *Writer) lead(ctx context.Context) {
	for {
		w.mu.Lock()
		batch := w.queue
		w.queue = nil
		if len(batch) == 0 {
			w.leading = false
			w.mu.Unlock()
			return
		}
		t, publisher := w.target, w.publisher
		w.mu.Unlock()
		a, errs := w.push(ctx, t, publisher, batch)
		for i, p := range batch {
			p.done <- result{artifact: a, err: errs[i]}
		}
	}
}

// tagAttempts bounds how often a batch is made again on an artifact
// another writer published meanwhile (errTagMoved).
const tagAttempts = 5

// push applies a batch to the current artifact and publishes it. errs[i]
// is the error of batch[i]: its own change's, or the push's. When another
// writer moved the tag during the upload, the batch is applied again to
// what it published (changes are functions of the artifact they are
// given), after the same check of its publisher.
func (w *Writer) push(ctx context.Context, t Target, publisher string, batch []*pending) (Artifact, []error) {
	var errs []error
	fail := func(err error) (Artifact, []error) {
		for i := range errs {
			if errs[i] == nil {
				errs[i] = err
			}
		}
		return Artifact{}, errs
	}
	for attempt := 1; ; attempt++ {
		errs = make([]error, len(batch))
		base, err := w.current(ctx, t, publisher)
		if err != nil {
			return fail(err)
		}
		objs := base.Objects.Clone()
		for i, p := range batch {
			next := objs.Clone()
			if err := p.change(next); err != nil {
				errs[i] = err // this change only; the others go out
				continue
			}
			objs = next
		}
		img, err := image(objs, publisher, &w.rendered)
		if err != nil {
			return fail(err)
		}
		want, err := img.Digest()
		if err != nil {
			return fail(err)
		}
		digest, err := write(ctx, t, img, want.String(), base.Digest)
		if err != nil {
			w.last = nil // unknown now: read it again next time
			if errors.Is(err, errTagMoved) && attempt < tagAttempts {
				continue
			}
			return fail(err)
		}
		w.last = &Artifact{Digest: digest, Publisher: publisher, Objects: objs}
		return *w.last, errs
	}
}

// current is the artifact the tag holds: the one this Writer last saw if
// the tag still names it, else fetched. A tag that another state publishes
// is refused.
func (w *Writer) current(ctx context.Context, t Target, publisher string) (*Artifact, error) {
	head, found, err := resolve(ctx, t)
	if err != nil {
		return nil, err
	}
	if !found {
		return &Artifact{Objects: Objects{}}, nil
	}
	if w.last != nil && w.last.Digest == head {
		return w.last, nil
	}
	a, found, err := Fetch(ctx, t)
	if err != nil {
		return nil, err
	}
	if !found { // deleted between the two requests
		return &Artifact{Objects: Objects{}}, nil
	}
	if a.Publisher != "" && a.Publisher != publisher {
		return nil, &ClaimedError{Target: t.String(), Publisher: a.Publisher, Claimant: publisher}
	}
	w.last = &a
	return &a, nil
}

// ClaimedError is an artifact another state publishes.
type ClaimedError struct {
	Target, Publisher, Claimant string
}

func (e *ClaimedError) Error() string {
	return fmt.Sprintf("artifact %s is published by state %q; this state (%q) cannot publish it too: give each state its own repository or tag", e.Target, e.Publisher, e.Claimant)
}
