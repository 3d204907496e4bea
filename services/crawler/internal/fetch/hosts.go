package fetch

import (
	"context"
	"sync"
	"time"
)

// hostLimiter bounds requests per host: at most parallel in flight, and
// request starts at least delay apart (the host's own delay when larger). A
// host's state is dropped once nothing used it for idle (the robots.txt cache
// lifetime, so the Crawl-delay it holds is set again when robots.txt is read
// again): the crawler meets new hosts for as long as it runs, and kept them all.
type hostLimiter struct {
	parallel int
	delay    time.Duration
	idle     time.Duration

	mu    sync.Mutex
	hosts map[string]*hostState
	swept time.Time

	// now and wait are the clock: time.Now and sleepCtx, replaced in tests so the
	// spacing of request starts is checked without timing real requests.
	now  func() time.Time
	wait func(ctx context.Context, d time.Duration) error
}

type hostState struct {
	slots chan struct{}
	next  time.Time     // earliest next request start
	delay time.Duration // per-host delay (robots Crawl-delay), 0: the default
	users int           // acquires waiting or holding a slot
	last  time.Time     // when the last user let go
}

func newHostLimiter(parallel int, delay, idle time.Duration) *hostLimiter {
	return &hostLimiter{parallel: parallel, delay: delay, idle: idle, hosts: map[string]*hostState{}, now: time.Now, wait: sleepCtx}
}

// state returns the host's state, made when missing; l.mu is held.
func (l *hostLimiter) state(host string) *hostState {
	h := l.hosts[host]
	if h == nil {
		l.sweep(l.now())
		h = &hostState{slots: make(chan struct{}, l.parallel), last: l.now()}
		l.hosts[host] = h
	}
	return h
}

// sweep drops, at most once a minute, the hosts nobody used for l.idle and
// whose next start is due; l.mu is held.
func (l *hostLimiter) sweep(now time.Time) {
	if now.Sub(l.swept) < time.Minute {
		return
	}
	l.swept = now
	for host, h := range l.hosts {
		if h.users == 0 && now.Sub(h.last) >= l.idle && !h.next.After(now) {
			delete(l.hosts, host)
		}
	}
}

func (l *hostLimiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.hosts)
}

// setDelay records a host's Crawl-delay.
func (l *hostLimiter) setDelay(host string, d time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	h := l.state(host)
	h.delay = d
	h.last = l.now()
}

// acquire waits for a slot and the host's next start time.
func (l *hostLimiter) acquire(ctx context.Context, host string) (release func(), err error) {
	l.mu.Lock()
	h := l.state(host)
	h.users++
	l.mu.Unlock()
	done := func() {
		l.mu.Lock()
		h.users--
		h.last = l.now()
		l.mu.Unlock()
	}
	select {
	case h.slots <- struct{}{}:
	case <-ctx.Done():
		done()
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
		done()
		return nil, err
	}
	return func() { <-h.slots; done() }, nil
}
