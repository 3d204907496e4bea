package api

import (
	"context"
	"sync"
	"time"

	"github.com/kgsearch/kgsearch/services/crawler/internal/engine"
)

// statusPolls shares the event streams' periodic status reads among the
// streams of one job. A status read counts the job's frontier in MariaDB; read
// once a poll for every open stream, anyone who may open streams (the search
// web UI's crawl pages are public with KGS_PUBLIC_SEARCH) could multiply the
// database's load by opening hundreds of them. With sharing, a job's status is
// read at most about twice a poll interval however many streams follow it, and
// never twice at once.
type statusPolls struct {
	mu   sync.Mutex
	jobs map[string]*statusPoll
	// timeout bounds each read (0: statusReadTimeout); API.Register sets it
	// to the API's StoreTimeout.
	timeout time.Duration
}

// statusPoll is one read of a job's status: done is closed when st and err are
// set; at is when the read started.
type statusPoll struct {
	done chan struct{}
	at   time.Time
	st   engine.Status
	err  error
}

// statusReadTimeout bounds a shared read: it runs detached from the stream
// that started it, whose client may leave while others wait for the result.
const statusReadTimeout = 10 * time.Second

// get returns a read of job id's status that started less than maxAge ago,
// or the read in progress, however old (a slow database must not get a second
// read of the same status while the first runs), or reads it with read.
func (p *statusPolls) get(ctx context.Context, id string, maxAge time.Duration,
	read func(ctx context.Context, id string) (engine.Status, error)) (engine.Status, error) {
	now := time.Now()
	p.mu.Lock()
	if p.jobs == nil {
		p.jobs = map[string]*statusPoll{}
	}
	e := p.jobs[id]
	if e == nil || (e.finished() && now.Sub(e.at) >= maxAge) {
		for k, old := range p.jobs { // forget jobs no stream has asked about lately
			if now.Sub(old.at) >= time.Minute {
				select {
				case <-old.done:
					delete(p.jobs, k)
				default:
				}
			}
		}
		e = &statusPoll{done: make(chan struct{}), at: now}
		p.jobs[id] = e
		p.mu.Unlock()
		timeout := p.timeout
		if timeout <= 0 {
			timeout = statusReadTimeout
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
		e.st, e.err = read(rctx, id)
		cancel()
		close(e.done)
		return e.st, e.err
	}
	p.mu.Unlock()
	select {
	case <-e.done:
		return e.st, e.err
	case <-ctx.Done():
		return engine.Status{}, ctx.Err()
	}
}

// finished reports whether the read is done.
func (e *statusPoll) finished() bool {
	select {
	case <-e.done:
		return true
	default:
		return false
	}
}
