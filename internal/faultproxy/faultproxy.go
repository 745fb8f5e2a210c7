// Package faultproxy is a TCP proxy for tests that puts network faults
// between a client and a server: latency, dropped connections and refused
// connections, switched at runtime; and answers held back until the test
// releases them.
//
// It forwards bytes and nothing else, so TLS passes through untouched: the
// client verifies the server's own certificate, and the proxy needs no key.
// The proxy listens on 127.0.0.1; a client reaches the server through it by
// using the proxy's address with the server's CA (and, if the certificate
// does not name 127.0.0.1, a TLS server name that it does name).
//
// The acceptance tests put one proxy in front of each local API server to
// make a cluster slow, or make it go away in the middle of an apply.
package faultproxy

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"time"
)

// Proxy forwards connections from its address to a target address, with the
// faults currently switched on. Its methods are safe for concurrent use.
type Proxy struct {
	target string
	addr   string

	mu        sync.Mutex
	ln        net.Listener // nil while refusing
	latency   time.Duration
	hold      *hold // nil unless holding
	dropping  bool
	closed    bool
	links     map[*link]struct{}
	accepted  int
	upBytes   int64 // client to target
	downBytes int64 // target to client
	wg        sync.WaitGroup
}

// New starts a proxy on a free port of 127.0.0.1 that forwards to target
// (host:port).
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("faultproxy: listening: %w", err)
	}
	p := &Proxy{target: target, addr: ln.Addr().String(), ln: ln, links: map[*link]struct{}{}}
	p.serve(ln)
	return p, nil
}

// Addr is the proxy's address, 127.0.0.1:port. It stays the same across
// Refuse and Heal.
func (p *Proxy) Addr() string { return p.addr }

// URL is https://<Addr>, for clients of a TLS server behind the proxy.
func (p *Proxy) URL() string { return "https://" + p.addr }

// Target is the address the proxy forwards to.
func (p *Proxy) Target() string { return p.target }

// SetLatency delays every chunk of data, in both directions, by d from the
// moment the proxy reads it: a round trip takes 2*d longer. It applies to
// data read from now on, on existing connections too. Zero removes it.
func (p *Proxy) SetLatency(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = d
}

func (p *Proxy) currentLatency() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.latency
}

// hold is one Hold: answers wait for release; kept is closed when the
// first of them is waiting.
type hold struct {
	release, kept chan struct{}
	once          sync.Once
}

// Hold keeps back, from now on and until Release, the data the target
// sends (its answers), on every connection: requests still reach the
// target and take effect. The returned channel is closed once an answer
// is kept. A test holds a cluster's answers for exactly as long as it
// chooses, where latency makes them late by an amount a loaded machine
// can exceed. Hold while holding returns the same channel.
func (p *Proxy) Hold() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.hold == nil {
		p.hold = &hold{release: make(chan struct{}), kept: make(chan struct{})}
	}
	return p.hold.kept
}

// Release delivers, in order, what Hold kept, and ends the hold.
func (p *Proxy) Release() {
	p.mu.Lock()
	h := p.hold
	p.hold = nil
	p.mu.Unlock()
	if h != nil {
		close(h.release)
	}
}

func (p *Proxy) currentHold() *hold {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.hold
}

// Drop cuts every open connection (the client sees a reset) and, until
// Heal, accepts new connections only to reset them at once: the server went
// away, or a middlebox lost its state.
func (p *Proxy) Drop() {
	p.mu.Lock()
	p.dropping = true
	links := p.takeLinks()
	p.mu.Unlock()
	for _, l := range links {
		l.cut(false)
	}
}

// Refuse cuts every open connection and stops listening until Heal: new
// connections are refused, as when nothing listens on the port.
func (p *Proxy) Refuse() {
	p.mu.Lock()
	ln := p.ln
	p.ln = nil
	links := p.takeLinks()
	p.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for _, l := range links {
		l.cut(false)
	}
}

// Heal ends Drop, Refuse and Hold: the proxy listens on its address again
// and forwards new connections, and what a hold kept is delivered.
// Latency is left as set.
func (p *Proxy) Heal() error {
	p.Release()
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return errors.New("faultproxy: proxy is closed")
	}
	p.dropping = false
	if p.ln != nil {
		return nil
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		return fmt.Errorf("faultproxy: listening again on %s: %w", p.addr, err)
	}
	p.ln = ln
	p.serve(ln)
	return nil
}

// Accepted is the number of connections accepted so far, dropped ones
// included.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.accepted
}

// BytesUp is the number of bytes forwarded from clients to the target.
func (p *Proxy) BytesUp() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.upBytes
}

// BytesDown is the number of bytes delivered from the target to clients.
func (p *Proxy) BytesDown() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.downBytes
}

// Close stops the proxy, cuts every connection and waits for its
// goroutines. It is idempotent.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	ln := p.ln
	p.ln = nil
	links := p.takeLinks()
	p.mu.Unlock()
	if ln != nil {
		ln.Close()
	}
	for _, l := range links {
		l.cut(false)
	}
	p.wg.Wait()
	return nil
}

// takeLinks empties the set of open links; p.mu must be held.
func (p *Proxy) takeLinks() []*link {
	out := make([]*link, 0, len(p.links))
	for l := range p.links {
		out = append(out, l)
	}
	p.links = map[*link]struct{}{}
	return out
}

// serve accepts on ln until it is closed.
func (p *Proxy) serve(ln net.Listener) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				var ne net.Error
				if errors.As(err, &ne) && ne.Timeout() {
					continue
				}
				return // closed by Refuse or Close
			}
			p.handle(c)
		}
	}()
}

func (p *Proxy) handle(client net.Conn) {
	p.mu.Lock()
	p.accepted++
	if p.dropping || p.closed {
		p.mu.Unlock()
		reset(client)
		return
	}
	p.mu.Unlock()

	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		reset(client)
		return
	}
	l := &link{client: client, server: server, done: make(chan struct{})}
	p.mu.Lock()
	if p.dropping || p.closed {
		p.mu.Unlock()
		l.cut(false)
		return
	}
	p.links[l] = struct{}{}
	p.mu.Unlock()

	var both sync.WaitGroup
	both.Add(2)
	p.wg.Add(1)
	go func() { defer both.Done(); p.pump(l, server, client, true) }()
	go func() { defer both.Done(); p.pump(l, client, server, false) }()
	go func() {
		defer p.wg.Done()
		both.Wait()
		l.cut(true)
		p.mu.Lock()
		delete(p.links, l)
		p.mu.Unlock()
	}()
}

// chunk is data read from one side, to be written to the other at due.
type chunk struct {
	data []byte
	due  time.Time
}

// pump copies src to dst, delaying each chunk by the latency in force when
// it was read. Delays overlap, as on a long network path: latency adds to
// every chunk's travel time but does not limit throughput.
func (p *Proxy) pump(l *link, dst, src net.Conn, up bool) {
	queue := make(chan chunk, 256)
	go func() {
		defer close(queue)
		for {
			buf := make([]byte, 32*1024)
			n, err := src.Read(buf)
			if n > 0 {
				select {
				case queue <- chunk{data: buf[:n], due: time.Now().Add(p.currentLatency())}:
				case <-l.done:
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for c := range queue {
		if h := p.currentHold(); h != nil && !up {
			h.once.Do(func() { close(h.kept) })
			select {
			case <-h.release:
			case <-l.done:
				return
			}
		}
		if wait := time.Until(c.due); wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-l.done:
				t.Stop()
				return
			}
		}
		// Counted before the write: once a peer has read the bytes, the
		// count already holds them (counted after, a test that reads the
		// count right after its client got an answer could miss them).
		p.count(up, int64(len(c.data)))
		if _, err := dst.Write(c.data); err != nil {
			p.count(up, -int64(len(c.data)))
			l.cut(false)
			return
		}
	}
	// src reached its end and everything read was delivered: end the
	// whole connection in order, as HTTP clients and servers do not rely on
	// half-closed connections. (After a cut this does nothing.)
	l.cut(true)
}

// count adds n bytes to the count of one direction.
func (p *Proxy) count(up bool, n int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if up {
		p.upBytes += n
	} else {
		p.downBytes += n
	}
}

// link is one proxied connection.
type link struct {
	client, server net.Conn
	once           sync.Once
	done           chan struct{}
}

// cut closes both sides: in order (graceful), or so that the client sees
// a reset, as when the connection is lost.
func (l *link) cut(graceful bool) {
	l.once.Do(func() {
		close(l.done)
		if graceful {
			l.client.Close()
		} else {
			reset(l.client)
		}
		l.server.Close()
	})
}

// reset closes c so that its peer gets a TCP reset rather than an orderly
// end of stream.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	c.Close()
}
