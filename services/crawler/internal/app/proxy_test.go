package app

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// faultProxy is a loopback TCP proxy in front of a server (MariaDB, Neo4j,
// kg). Down closes its listener and cuts every open connection, which is what
// a client sees when the server is killed: refused connections and queries
// cut mid-way. Up listens again on the same address. Freeze keeps accepting
// connections but passes no byte either way until Thaw, which is what a client
// sees of a server that hangs (stopped with SIGSTOP, or overloaded): nothing is
// refused and nothing is answered. The shared servers themselves are never
// stopped.
type faultProxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	cut   int           // connections cut by Down
	open  chan struct{} // closed while not frozen
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	open := make(chan struct{})
	close(open)
	p := &faultProxy{target: target, addr: ln.Addr().String(), ln: ln, conns: map[net.Conn]struct{}{}, open: open}
	go p.serve(ln)
	t.Cleanup(func() { p.Thaw(); p.Down() })
	return p
}

func (p *faultProxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

func (p *faultProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln == nil {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *faultProxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *faultProxy) pipe(c net.Conn) {
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
func (p *faultProxy) copy(dst io.Writer, src io.Reader) {
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
func (p *faultProxy) wait() {
	p.mu.Lock()
	open := p.open
	p.mu.Unlock()
	<-open
}

// Freeze stops passing bytes on every connection, open or new, until Thaw.
func (p *faultProxy) Freeze() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
		p.open = make(chan struct{})
	default: // already frozen
	}
}

// Thaw passes bytes again.
func (p *faultProxy) Thaw() {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.open:
	default:
		close(p.open)
	}
}

// Down refuses new connections and cuts the open ones; it returns how many
// were cut.
func (p *faultProxy) Down() {
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
func (p *faultProxy) Up(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ln, err := net.Listen("tcp", p.addr)
		if err == nil {
			p.mu.Lock()
			p.ln = ln
			p.mu.Unlock()
			go p.serve(ln)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("proxy: listen again on %s: %v", p.addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Cut is the number of connections Down has cut so far.
func (p *faultProxy) Cut() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cut
}
