package kubeclient

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// A cluster that does not answer in time once is not asked again in the
// same run (one provider process serves one Terraform command): each
// resource would otherwise wait its own full timeout for the same silent
// API server, and a plan of 50 resources would take 50 timeouts. The first
// request's timeout marks the cluster; later requests fail at once with an
// error that says so. Refusals (the cluster answered with an error status)
// and refused connections are quick and mark nothing.

// ErrSilent marks a request not sent because the cluster was silent earlier
// in this run.
var ErrSilent = errors.New("did not answer earlier in this run, so it is not asked again until the next Terraform command")

// silence records the silent clusters of a Set.
type silence struct {
	mu     sync.Mutex
	silent map[string]error
}

func (s *silence) mark(cluster string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.silent == nil {
		s.silent = map[string]error{}
	}
	if _, ok := s.silent[cluster]; !ok {
		s.silent[cluster] = err
	}
}

func (s *silence) check(cluster string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if first, ok := s.silent[cluster]; ok {
		return &SilentError{Cluster: cluster, First: first}
	}
	return nil
}

// SilentError is a request not sent because the cluster did not answer in
// time earlier in this run; errors.Is(err, ErrSilent) holds. First is the
// failure of the request that timed out.
type SilentError struct {
	Cluster string
	First   error
}

func (e *SilentError) Error() string {
	return fmt.Sprintf("cluster %s %v (first: %v)", e.Cluster, ErrSilent, e.First)
}

func (e *SilentError) Unwrap() error { return ErrSilent }

// Silent reports whether the cluster timed out earlier in this run.
func (s *Set) Silent(cluster string) bool { return s.silence.check(cluster) != nil }

// silentTransport fails fast for a cluster marked silent, and marks it when
// a request times out without an answer.
type silentTransport struct {
	cluster string
	s       *silence
	next    http.RoundTripper
}

func (t *silentTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := t.s.check(t.cluster); err != nil {
		return nil, err
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil && req.Context().Err() != context.Canceled && (timedOut(err) || pastDeadline(req)) {
		t.s.mark(t.cluster, err)
	}
	return resp, err
}

// pastDeadline reports a request whose deadline (http.Client's Timeout)
// has passed. At that moment the client both ends the request's context
// and closes its legacy Cancel channel; when the transport sees the channel
// first, it answers "request canceled", which is no timeout error, although
// the request did time out.
func pastDeadline(req *http.Request) bool {
	dl, ok := req.Context().Deadline()
	return ok && !time.Now().Before(dl)
}

func timedOut(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
