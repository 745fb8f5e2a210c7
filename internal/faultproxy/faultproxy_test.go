package faultproxy

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"
)

// echoServer answers every line with the same line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func start(t *testing.T, target string) *Proxy {
	t.Helper()
	p, err := New(target)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// roundTrip writes a line on c and reads it back.
func roundTrip(c net.Conn, line string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(hangGuard))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSuffix(got, "\n"), err
}

// TLS is not terminated: the client verifies the server's own certificate
// through the proxy.
func TestTLSPassesThrough(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hello") }))
	defer srv.Close()
	p := start(t, srv.Listener.Addr().String())

	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}, Timeout: 5 * time.Second}
	resp, err := client.Get(p.URL())
	if err != nil {
		t.Fatalf("GET through the proxy with the server's CA: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello" {
		t.Fatalf("body %q", body)
	}
	if !resp.TLS.PeerCertificates[0].Equal(srv.Certificate()) {
		t.Fatal("the client did not see the server's own certificate")
	}
	if p.Accepted() != 1 || p.BytesUp() == 0 {
		t.Fatalf("accepted %d, bytes up %d", p.Accepted(), p.BytesUp())
	}
}

// hangGuard bounds waits for what must happen, so that a broken proxy
// fails the test instead of hanging it; it never decides a passing run.
const hangGuard = 30 * time.Second

// Latency makes a round trip at least twice as long (a lower bound: a
// loaded machine only makes it longer), and setting it to zero removes
// it: after an hour of latency is removed, a round trip completes within
// the hang guard.
func TestLatencyAtRuntime(t *testing.T) {
	p := start(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	measure := func() time.Duration {
		t.Helper()
		begin := time.Now()
		if got, err := roundTrip(c, "ping"); err != nil || got != "ping" {
			t.Fatalf("round trip: %q, %v", got, err)
		}
		return time.Since(begin)
	}
	measure()
	p.SetLatency(150 * time.Millisecond)
	if d := measure(); d < 300*time.Millisecond {
		t.Fatalf("round trip with 150ms latency each way took %s, want at least 300ms", d)
	}
	p.SetLatency(time.Hour)
	p.SetLatency(0)
	measure() // an hour each way would hit roundTrip's deadline
}

// Latency delays data without limiting throughput: chunks in flight
// overlap. Ten lines with half a second of latency each way take about a
// second (the bound is generous); one after another they would take ten.
func TestLatencyOverlaps(t *testing.T) {
	p := start(t, echoServer(t))
	p.SetLatency(500 * time.Millisecond)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	begin := time.Now()
	r := bufio.NewReader(c)
	for i := 0; i < 10; i++ {
		if _, err := io.WriteString(c, "x\n"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond) // separate chunks, most likely; the bound holds either way
	}
	for i := 0; i < 10; i++ {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(begin); d > 8*time.Second {
		t.Fatalf("10 pipelined lines with 2x500ms latency took %s (10s one after another): latency must not serialize chunks", d)
	}
}

// Hold keeps every answer back until Release: the request reaches the
// server (which answers), the client gets nothing, and after Release it
// gets the answer, in order. No clock decides: the proxy says when it
// keeps an answer, and a hold that did not hold lets the client read
// first.
func TestHoldKeepsAnswersUntilRelease(t *testing.T) {
	p := start(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c, "before"); err != nil || got != "before" {
		t.Fatalf("round trip before the hold: %q, %v", got, err)
	}
	down := p.BytesDown()
	kept := p.Hold()
	if again := p.Hold(); again != kept {
		t.Fatal("Hold while holding is a new hold")
	}
	if _, err := io.WriteString(c, "held\n"); err != nil {
		t.Fatal(err)
	}
	answered := make(chan string, 1)
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(2 * hangGuard))
		got, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			got = "error: " + err.Error()
		}
		answered <- got
	}()
	select {
	case <-kept:
	case got := <-answered:
		t.Fatalf("the client read %q while the proxy was holding", got)
	case <-time.After(hangGuard):
		t.Fatal("the server's answer never reached the proxy")
	}
	if got := p.BytesDown(); got != down {
		t.Fatalf("%d bytes delivered to the client while holding", got-down)
	}
	p.Release()
	select {
	case got := <-answered:
		if got != "held\n" {
			t.Fatalf("after Release the client read %q, want the held answer", got)
		}
	case <-time.After(hangGuard):
		t.Fatal("Release did not deliver the held answer")
	}
}

// Drop also cuts data that the proxy still holds back: it is lost, as on
// a broken path.
func TestDropLosesDataInFlight(t *testing.T) {
	p := start(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	kept := p.Hold()
	if _, err := io.WriteString(c, "lost\n"); err != nil {
		t.Fatal(err)
	}
	select {
	case <-kept:
	case <-time.After(hangGuard):
		t.Fatal("the server's answer never reached the proxy")
	}
	p.Drop()
	p.Release()
	_ = c.SetReadDeadline(time.Now().Add(hangGuard))
	if n, err := c.Read(make([]byte, 16)); err == nil || n > 0 {
		t.Fatalf("read %d bytes, err %v: data held when the connection was dropped must be lost", n, err)
	}
}

func TestRefuseAndHealOnTheSameAddress(t *testing.T) {
	p := start(t, echoServer(t))
	addr := p.Addr()
	p.Refuse()
	_, err := net.DialTimeout("tcp", addr, time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial while refusing: %v, want connection refused", err)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	if p.Addr() != addr {
		t.Fatalf("address changed from %s to %s", addr, p.Addr())
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, err := roundTrip(c, "back"); err != nil || got != "back" {
		t.Fatalf("after Heal: %q, %v", got, err)
	}
}

func TestCloseIsIdempotent(t *testing.T) {
	p := start(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(c, "x"); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Close(); p.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Close hangs with an open connection")
	}
	if err := p.Heal(); err == nil {
		t.Fatal("Heal after Close must fail")
	}
}
