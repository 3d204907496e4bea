package fetch

import (
	"context"
	"sync"
	"time"
)

// hostLimiter bounds requests per host: at most parallel in flight, and
// request starts at least delay apart (the host's own delay when larger).
type hostLimiter struct {
	parallel int
	delay    time.Duration

	mu    sync.Mutex
	hosts map[string]*hostState

	// now and wait are the clock: time.Now and sleepCtx, replaced in tests so the
	// spacing of request starts is checked without timing real requests.
	now  func() time.Time
	wait func(ctx context.Context, d time.Duration) error
}

type hostState struct {
	slots chan struct{}
	next  time.Time     // earliest next request start
	delay time.Duration // per-host delay (robots Crawl-delay), 0: the default
}

func newHostLimiter(parallel int, delay time.Duration) *hostLimiter {
	return &hostLimiter{parallel: parallel, delay: delay, hosts: map[string]*hostState{}, now: time.Now, wait: sleepCtx}
}

func (l *hostLimiter) state(host string) *hostState {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.hosts[host]
	if h == nil {
		h = &hostState{slots: make(chan struct{}, l.parallel)}
		l.hosts[host] = h
	}
	return h
}

// setDelay records a host's Crawl-delay.
func (l *hostLimiter) setDelay(host string, d time.Duration) {
	h := l.state(host)
	l.mu.Lock()
	h.delay = d
	l.mu.Unlock()
}

// acquire waits for a slot and the host's next start time.
func (l *hostLimiter) acquire(ctx context.Context, host string) (release func(), err error) {
	h := l.state(host)
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	l.mu.Lock()
	now := l.now()
	start := now
	if h.next.After(now) {
		start = h.next
	}
	gap := max(l.delay, h.delay)
	h.next = start.Add(gap)
	l.mu.Unlock()
	if err := l.wait(ctx, start.Sub(now)); err != nil {
		<-h.slots
		return nil, err
	}
	return func() { <-h.slots }, nil
}
