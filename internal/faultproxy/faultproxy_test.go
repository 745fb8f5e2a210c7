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
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
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
	if d := measure(); d > 150*time.Millisecond {
		t.Fatalf("round trip without latency took %s", d)
	}
	p.SetLatency(150 * time.Millisecond)
	if d := measure(); d < 300*time.Millisecond || d > 2*time.Second {
		t.Fatalf("round trip with 150ms latency each way took %s, want about 300ms", d)
	}
	p.SetLatency(0)
	if d := measure(); d > 150*time.Millisecond {
		t.Fatalf("round trip after removing latency took %s", d)
	}
}

// Latency delays data without limiting throughput: chunks in flight
// overlap.
func TestLatencyOverlaps(t *testing.T) {
	p := start(t, echoServer(t))
	p.SetLatency(100 * time.Millisecond)
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
		time.Sleep(5 * time.Millisecond)
	}
	for i := 0; i < 10; i++ {
		if _, err := r.ReadString('\n'); err != nil {
			t.Fatal(err)
		}
	}
	if d := time.Since(begin); d > time.Second {
		t.Fatalf("10 pipelined lines took %s: latency must not serialize chunks", d)
	}
}

func TestDropCutsAndResets(t *testing.T) {
	p := start(t, echoServer(t))
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := roundTrip(c, "before"); err != nil {
		t.Fatal(err)
	}
	p.Drop()
	if _, err := roundTrip(c, "after"); err == nil {
		t.Fatal("an open connection survived Drop")
	}
	// New connections are accepted and reset.
	c2, err := net.Dial("tcp", p.Addr())
	if err == nil {
		_, err = roundTrip(c2, "new")
		c2.Close()
	}
	if err == nil {
		t.Fatal("a new connection worked while dropping")
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
	c3, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if got, err := roundTrip(c3, "healed"); err != nil || got != "healed" {
		t.Fatalf("after Heal: %q, %v", got, err)
	}
}

// Drop also cuts data that latency still holds: it is lost, as on a
// broken path.
func TestDropLosesDataInFlight(t *testing.T) {
	p := start(t, echoServer(t))
	p.SetLatency(300 * time.Millisecond)
	c, err := net.Dial("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := io.WriteString(c, "lost\n"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	p.Drop()
	_ = c.SetReadDeadline(time.Now().Add(2 * time.Second))
	if n, err := c.Read(make([]byte, 16)); err == nil || n > 0 {
		t.Fatalf("read %d bytes, err %v: data in flight must be lost", n, err)
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
