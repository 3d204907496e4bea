package testenv

import (
	"fmt"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// FaultProxy is a loopback TCP proxy in front of a server (MariaDB, Neo4j,
// kg), for tests of what a service does when the server fails. Down closes its listener and cuts every open connection, which is what
// a client sees when the server is killed: refused connections and queries
// cut mid-way. Up listens again on the same address. Freeze keeps accepting
// connections but passes no byte either way until Thaw, which is what a client
// sees of a server that hangs (stopped with SIGSTOP, or overloaded): nothing is
// refused and nothing is answered. The shared servers themselves are never
// stopped.
type FaultProxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	cut   int           // connections cut by Down
	open  chan struct{} // closed while not frozen
}

// NewFaultProxy listens on a free loopback port and forwards each connection to
// target until the test ends.
func NewFaultProxy(t testing.TB, target string) *FaultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := make(chan struct{})
	close(open)
	p := &FaultProxy{target: target, addr: ln.Addr().String(), ln: ln, conns: map[net.Conn]struct{}{}, open: open}
	go p.serve(ln)
	t.Cleanup(func() { p.Thaw(); p.Down() })
	return p
}

func (p *FaultProxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *FaultProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *FaultProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *FaultProxy) pipe(c net.Conn) {
	if !p.track(c) {
		return
	}
	defer p.untrack(c)
	p.wait()
	u, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(u) {
		return
	}
	defer p.untrack(u)
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.copy(u, c)
		u.Close()
	}()
	p.copy(c, u)
	c.Close()
	<-done
}

// copy passes bytes from src to dst, holding each read while the proxy is frozen.
func (p *FaultProxy) copy(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.wait()
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// wait returns once the proxy is not frozen.
func (p *FaultProxy) wait() {
	p.mu.Lock()
	open := p.open
	p.mu.Unlock()
	<-open
}

// Freeze stops passing bytes on every connection, open or new, until Thaw.
func (p *FaultProxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default: // already frozen
	}
}

// Thaw passes bytes again.
func (p *FaultProxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// Addr is the proxy's address (host:port), which clients dial instead of the
// server's.
func (p *FaultProxy) Addr() string { return p.addr }

// Down refuses new connections and cuts the open ones (Cut counts them).
func (p *FaultProxy) Down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		return
	}
	p.ln.Close()
	p.ln = nil
	for c := range p.conns {
		c.Close()
		p.cut++
	}
	clear(p.conns)
}

// Up accepts connections again on the same address.
func (p *FaultProxy) Up(t testing.TB) {
	t.Helper()
	if err := p.Listen(); err != nil {
		t.Fatal(err)
	}
}

// Listen is Up for a goroutine other than the test's: it returns the error
// instead of failing the test.
func (p *FaultProxy) Listen() error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := net.Listen("tcp", p.addr)
		if err == nil {
			p.mu.Lock()
			p.ln = ln
			p.mu.Unlock()
			go p.serve(ln)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("proxy: listen again on %s: %w", p.addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Cut is the number of connections Down has cut so far.
func (p *FaultProxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}
