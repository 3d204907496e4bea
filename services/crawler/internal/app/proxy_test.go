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
// cut mid-way. Up listens again on the same address. The shared servers
// themselves are never stopped.
type faultProxy struct {
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	cut   int // connections cut by Down
}

func newFaultProxy(t *testing.T, target string) *faultProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &faultProxy{target: target, addr: ln.Addr().String(), ln: ln, conns: map[net.Conn]struct{}{}}
	go p.serve(ln)
	t.Cleanup(p.Down)
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
		_, _ = io.Copy(u, c)
		u.Close()
	}()
	_, _ = io.Copy(c, u)
	c.Close()
	<-done
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
