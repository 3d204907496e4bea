package engine

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// A job's workers: each claims a URL from the frontier, takes it through the
// page step (handle) and completes its frontier row (process).

// worker claims and processes URLs until the job has no work left.
// A worker never exits on an error: it waits and tries again, so that a job
// outlives an outage of MariaDB.
func (r *jobRun) worker(ctx context.Context) {
	idle := 20 * time.Millisecond
	var wait backoff
	for {
		select {
		case <-r.done:
			return
		default:
		}
		if ctx.Err() != nil {
			return
		}
		items, err := r.claim(ctx)
		if err == nil && len(items) == 0 {
			var c store.FrontierCounts
			if c, err = r.front.counts(ctx); err == nil {
				if c.Claimed == 0 && (c.Queued == 0 || c.Done >= int64(r.spec.MaxPages)) {
					r.finishWorkers()
					return
				}
				r.resumed()
				wait.reset()
				sleepCtx(ctx, idle)
				idle = min(idle*2, 500*time.Millisecond)
				continue
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if store.Unavailable(err) {
				r.stalled("MariaDB (claim urls)", err)
			} else {
				r.errs.add("claim urls: %v", err)
			}
			sleepCtx(ctx, wait.next())
			continue
		}
		r.resumed()
		wait.reset()
		idle = 20 * time.Millisecond
		r.process(ctx, items[0])
	}
}

// maxAttempts bounds the claims of one URL whose store or embedding failed.
const maxAttempts = 3

// outcome is how a URL ends.
type outcome struct {
	state  store.FrontierState
	reason string
	err    error
	chunks int
	detail string // what shows a script_rendered page is a shell
}

// process fetches and indexes one claimed URL and completes its frontier row.
func (r *jobRun) process(ctx context.Context, it store.FrontierItem) {
	defer r.release(it)
	out := r.handle(ctx, it)
	if out.state == "" {
		return // ctx ended: released when the run ends
	}
	e := r.e
	if retry(it, out) {
		if store.Unavailable(out.err) {
			r.stalled("MariaDB (store page)", out.err)
		} else {
			r.errs.add("%s: %s (attempt %d, will retry): %v", it.URL, out.reason, it.Attempts, out.err)
		}
		if err := r.complete(ctx, it, store.FrontierQueued, "retry"); err != nil && ctx.Err() == nil {
			e.log.Warn("requeue url", "job", r.job.ID, "url", it.URL, "err", err)
		}
		return
	}
	if err := r.complete(ctx, it, out.state, out.reason); err != nil {
		if ctx.Err() == nil {
			e.log.Warn("complete url", "job", r.job.ID, "url", it.URL, "err", err)
		}
		return
	}
	e.countEnd(out)
	ev := Event{Type: EventPage, JobID: r.job.ID, At: time.Now().UTC(), URL: it.URL, Depth: it.Depth, Reason: out.reason, Chunks: out.chunks, Detail: out.detail}
	switch out.state {
	case store.FrontierDone:
		ev.Outcome = out.reason
		if why, ok := deletedWhy(out.reason); ok {
			ev.Outcome, ev.Reason = DoneDeleted, why // deleted, and why: the page's answer now
		}
	case store.FrontierSkipped:
		ev.Outcome = "skipped"
	case store.FrontierFailed:
		ev.Outcome = "failed"
		if out.err != nil {
			ev.Error = out.err.Error()
			r.errs.add("%s: %s: %v", it.URL, out.reason, out.err)
		}
	}
	if out.state == store.FrontierSkipped && out.err != nil && (out.reason == SkipSSRF || out.reason == SkipBlocked) {
		r.errs.add("%s: %s: %v", it.URL, out.reason, out.err)
	}
	e.hub.publish(ev)
}

// retry reports whether a failed URL goes back to the queue. A store or
// embedding failure may be passing (a lock timeout, a busy model server): the
// URL gets another try or two. A store failure because MariaDB is unreachable
// is not the page's fault: it is retried up to maxOutageAttempts.
func retry(it store.FrontierItem, out outcome) bool {
	if out.state != store.FrontierFailed {
		return false
	}
	switch {
	case out.reason == FailStore && store.Unavailable(out.err):
		return it.Attempts < maxOutageAttempts
	case out.reason == FailStore || out.reason == FailEmbed:
		return it.Attempts < maxAttempts
	}
	return false
}

// failLabel keeps the metric's label set small.
func failLabel(reason string) string {
	if len(reason) > 5 && reason[:5] == "http_" {
		if reason[5] == '4' {
			return "http_4xx"
		}
		return "http_5xx"
	}
	return reason
}

// handle takes a claimed URL through the page step: the blocklist, the
// stored version, a conditional request on recrawls, then runPage with the
// page's links queued before it is stored; a redirect queues its target.
// The stored version of a page, if any, is removed (staleOutcome, redirect)
// when the page's answer now says it has no content of its own to keep.
func (r *jobRun) handle(ctx context.Context, it store.FrontierItem) outcome {
	u, err := url.Parse(it.URL)
	if err != nil {
		return outcome{state: store.FrontierFailed, reason: FailNetwork, err: err}
	}
	if blocked, err := r.e.block.blocked(ctx, u.Hostname()); err == nil && blocked {
		return outcome{state: store.FrontierSkipped, reason: SkipBlocked, err: fmt.Errorf("%s is on the blocklist", u.Hostname())}
	}
	prev, err := r.e.previous(ctx, it.URL)
	if err != nil {
		return storeFailure(ctx, FailStore, err)
	}
	// A reclaimed URL whose page this job already stored (the previous owner
	// died, or MariaDB went away, between storing and completing): done,
	// without fetching again.
	if it.Attempts > 1 && prev != nil && !prev.FetchedAt.Before(r.job.StartedAt) {
		return outcome{state: store.FrontierDone, reason: DoneStored, chunks: prev.ChunkCount}
	}
	req := fetch.Request{URL: it.URL, IgnoreRobots: !r.spec.Robots()}
	// A recrawl asks conditionally only for pages whose links it will not
	// follow: a 304 has no body, and the links of inner pages are needed to
	// reach the rest of the site. Inner pages that did not change are still
	// recognised by their content hash and not embedded again.
	if r.spec.Recrawl && prev != nil && it.Depth >= r.spec.Depth() {
		req.ETag, req.LastModified = prev.ETag, prev.LastModified
	}
	d := r.e.runPage(ctx, pageJob{u: u, req: req, prev: prev, tags: r.spec.Tags,
		beforeStore: func(page *htmltext.Page) error { return r.queueLinks(ctx, u, it, page) }})
	r.mu.Lock()
	r.prog.Stages.add(d.stages)
	if d.resp != nil {
		r.prog.Bytes += int64(len(d.resp.Body))
	}
	if d.result.Outcome == pipeline.Stored && d.out.reason == DoneStored {
		r.prog.Chunks += int64(d.result.Chunks)
	}
	if d.out.reason == DoneScriptRendered && r.prog.ScriptShell == "" {
		r.prog.ScriptShell = d.out.detail // the example the status's warning names
	}
	r.mu.Unlock()
	switch {
	case d.out.reason == SkipRedirect:
		return r.redirect(ctx, u, it, prev, d.location)
	case prev == nil:
		return d.out
	}
	if out, ok := r.e.staleOutcome(ctx, prev, d); ok {
		return out
	}
	return d.out
}

// classifyFetchError maps a fetch error to a frontier outcome.
func classifyFetchError(ctx context.Context, err error) outcome {
	var skip *fetch.SkipError
	switch {
	case ctx.Err() != nil:
		return outcome{} // released when the run ends
	case errors.As(err, &skip):
		return outcome{state: store.FrontierSkipped, reason: skip.Reason, err: err}
	case errors.Is(err, netguard.ErrBlocked):
		return outcome{state: store.FrontierSkipped, reason: SkipSSRF, err: ssrfRefusal(err)}
	case fetch.IsTimeout(err):
		return outcome{state: store.FrontierFailed, reason: FailTimeout, err: err}
	default:
		return outcome{state: store.FrontierFailed, reason: FailNetwork, err: err}
	}
}
