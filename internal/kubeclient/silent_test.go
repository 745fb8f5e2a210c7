package kubeclient

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

type failingTransport struct{ err error }

func (f failingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	<-req.Context().Done()
	return nil, f.err
}

// A request that ran out of time marks its cluster silent whatever error
// the transport chose to report ("request canceled" when it saw the
// client's legacy cancel channel first); one canceled before its deadline
// marks nothing.
func TestSilentMarksEveryTimedOutRequest(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel bool
		want   bool
	}{
		{"deadline passed, request canceled reported", false, true},
		{"canceled before the deadline", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s silence
			rt := &silentTransport{cluster: "c", s: &s, next: failingTransport{err: errors.New("net/http: request canceled")}}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
			defer cancel()
			if tc.cancel {
				cancel()
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://127.0.0.1:1/", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rt.RoundTrip(req); err == nil {
				t.Fatal("the failing transport succeeded")
			}
			if got := s.check("c") != nil; got != tc.want {
				t.Fatalf("cluster marked silent: %v, want %v", got, tc.want)
			}
		})
	}
}
