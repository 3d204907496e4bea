package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/htmltext"
	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// jobRun is one engine's run of one job.
type jobRun struct {
	e       *Engine
	job     store.Job
	spec    Spec
	filters *filters
	errs    *errorList

	mu       sync.Mutex
	prog     progress
	runStart time.Time // this run's start, for ActiveMS
	baseMS   int64     // ActiveMS saved before this run

	doneOnce sync.Once
	done     chan struct{} // closed when a worker finds no work left

	// claimMu orders claims (read side) before the reclaim loop's release of
	// claims not in flight (write side); inflight holds the URLs workers hold.
	claimMu    sync.RWMutex
	inflightMu sync.Mutex
	inflight   map[string]struct{}

	stallMu sync.Mutex
	stall   string // why the job cannot make progress now; "" when it can
}

func (r *jobRun) log(msg string, args ...any) {
	r.e.log.Info(msg, append([]any{"job", r.job.ID}, args...)...)
}

// progressJSON snapshots the saved counters.
func (r *jobRun) progressJSON() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prog.ActiveMS = r.baseMS + time.Since(r.runStart).Milliseconds()
	b, _ := json.Marshal(r.prog)
	return b
}

func (r *jobRun) addFiltered(reason string, n int64) {
	r.mu.Lock()
	r.prog.Filtered[reason] += n
	r.mu.Unlock()
}

func (r *jobRun) finishWorkers() { r.doneOnce.Do(func() { close(r.done) }) }

// runJob runs a claimed job until it is done, cancelled, or ctx ends.
func (e *Engine) runJob(ctx context.Context, job store.Job) {
	e.m.running.Inc()
	defer e.m.running.Dec()
	defer e.setQueued(job.ID, -1)
	r := &jobRun{e: e, job: job, errs: &errorList{items: job.LastErrors}, done: make(chan struct{}), runStart: time.Now(),
		inflight: map[string]struct{}{}}
	r.prog = loadProgress(job.Counters)
	r.baseMS = r.prog.ActiveMS
	spec, err := decodeSpec(job.Spec)
	if err == nil {
		r.spec = spec
		r.filters, err = compileFilters(spec)
	}
	if err != nil {
		r.errs.add("bad job spec: %v", err)
		r.finish(ctx, store.JobFailed)
		return
	}
	resumed := r.prog.Seeded
	r.log("crawl job started", "url", spec.URL, "resumed", resumed, "max_pages", spec.MaxPages, "max_depth", spec.Depth())

	// Claims left by a crashed owner go back to the queue.
	if _, err := e.st.RequeueExpired(ctx, job.ID); err != nil && ctx.Err() == nil {
		e.log.Warn("requeue expired claims", "job", job.ID, "err", err)
	}
	// So do the claims of the previous owner, and this owner's own claims
	// from an earlier run of the job (whose release an outage may have lost).
	owners := []string{e.cfg.Owner}
	if prev := r.prog.Owner; prev != "" && prev != e.cfg.Owner {
		owners = append(owners, prev)
	}
	for _, owner := range owners {
		if n, err := e.st.ReleaseClaims(ctx, job.ID, owner); err != nil && ctx.Err() == nil {
			e.log.Warn("release earlier claims", "job", job.ID, "owner", owner, "err", err)
		} else if n > 0 {
			r.log("released claims of an earlier run", "owner", owner, "urls", n)
		}
	}
	r.mu.Lock()
	r.prog.Owner = e.cfg.Owner
	r.mu.Unlock()

	jctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		r.heartbeatLoop(jctx, cancel)
	}()
	rcDone := make(chan struct{})
	go func() {
		defer close(rcDone)
		r.reclaimLoop(jctx)
	}()

	if !r.prog.Seeded {
		if err := r.seed(jctx); err != nil {
			if jctx.Err() == nil {
				r.errs.add("seed: %v", err)
				cancel(fmt.Errorf("seed: %w", err))
			}
		} else {
			r.mu.Lock()
			r.prog.Seeded = true
			r.mu.Unlock()
		}
	}

	var wg sync.WaitGroup
	if jctx.Err() == nil {
		for i := 0; i < e.cfg.Workers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.worker(jctx)
			}()
		}
	}
	wg.Wait()
	cause := context.Cause(jctx)
	select {
	case <-r.done:
		cause = errJobDone
	default:
	}
	cancel(errJobDone)
	<-hbDone
	<-rcDone

	// Claims in hand go back to the queue, whatever stopped the run.
	bg, bgCancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer bgCancel()
	if _, err := e.st.ReleaseClaims(bg, job.ID, e.cfg.Owner); err != nil {
		e.log.Warn("release claims", "job", job.ID, "err", err)
	}
	switch {
	case errors.Is(cause, errJobDone), errors.Is(cause, errJobCancelled):
		r.finish(bg, store.JobDone)
	case errors.Is(cause, errLeaseLost):
		r.log("crawl job lease lost; another owner continues it")
	case ctx.Err() != nil:
		// Shutdown: save progress, keep the job running for the next owner.
		status, err := e.st.HeartbeatJob(bg, job.ID, e.cfg.Owner, e.cfg.Lease, store.JobProgress{Counters: r.progressJSON(), LastErrors: r.errs.snapshot()})
		switch {
		case err != nil:
			e.log.Warn("save progress on shutdown", "job", job.ID, "err", err)
		case status == store.JobCancelled:
			r.finish(bg, store.JobDone) // stays cancelled, gets its finish time
		default:
			r.log("crawl job paused by shutdown; it resumes when a crawler claims it again")
		}
	default:
		r.errs.add("job failed: %v", cause)
		r.finish(bg, store.JobFailed)
	}
}

// finish ends the job (a job cancelled meanwhile stays cancelled) and sends the summary.
func (r *jobRun) finish(ctx context.Context, status store.JobStatus) {
	job, err := r.e.st.FinishJob(ctx, r.job.ID, r.e.cfg.Owner, status, store.JobProgress{Counters: r.progressJSON(), LastErrors: r.errs.snapshot()})
	if err != nil {
		r.e.log.Warn("finish job", "job", r.job.ID, "err", err)
		return
	}
	st, err := r.e.Status(ctx, job.ID)
	if err != nil {
		r.e.log.Warn("job status", "job", r.job.ID, "err", err)
		return
	}
	r.log("crawl job finished", "status", st.Status, "fetched", st.Counters.Fetched, "stored", st.Counters.Stored,
		"unchanged", st.Counters.Unchanged, "failed", st.Counters.Failed, "running_ms", st.RunningMS)
	r.e.hub.publish(Event{Type: EventSummary, JobID: r.job.ID, At: time.Now().UTC(), Status: &st})
}

// heartbeatLoop renews the lease and saves progress; it stops the run when
// the job is cancelled or the lease is lost.
func (r *jobRun) heartbeatLoop(ctx context.Context, cancel context.CancelCauseFunc) {
	// Often enough to see a cancel quickly, and well within the lease.
	t := time.NewTicker(min(r.e.cfg.Lease/3, 2*time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		status, err := r.e.st.HeartbeatJob(ctx, r.job.ID, r.e.cfg.Owner, r.e.cfg.Lease,
			store.JobProgress{Counters: r.progressJSON(), LastErrors: r.errs.snapshot()})
		switch {
		case errors.Is(err, store.ErrLeaseLost):
			cancel(errLeaseLost)
			return
		case err != nil:
			if ctx.Err() == nil {
				r.e.log.Warn("job heartbeat", "job", r.job.ID, "err", err)
			}
			continue
		case status == store.JobCancelled:
			r.log("crawl job cancelled")
			cancel(errJobCancelled)
			return
		}
		if c, err := r.e.st.FrontierCounts(ctx, r.job.ID); err == nil {
			r.e.setQueued(r.job.ID, c.Queued)
		}
		if st, err := r.e.Status(ctx, r.job.ID); err == nil {
			r.e.hub.publish(Event{Type: EventProgress, JobID: r.job.ID, At: time.Now().UTC(), Status: &st})
		}
	}
}

// seed queues the start URL and the sitemaps' URLs.
func (r *jobRun) seed(ctx context.Context) error {
	e := r.e
	if err := r.retryStore(ctx, "seed", func(ctx context.Context) error {
		return r.enqueue(ctx, []store.FrontierURL{{URL: r.spec.URL, Depth: 0}})
	}); err != nil {
		return err
	}
	if r.spec.Sitemap() && r.spec.Depth() >= 1 {
		seed, _ := url.Parse(r.spec.URL)
		var sitemaps []string
		if sm, err := e.fetcher.RobotsSitemaps(ctx, seed); err == nil {
			sitemaps = append(sitemaps, sm...)
		}
		sitemaps = append(sitemaps, seed.Scheme+"://"+seed.Host+"/sitemap.xml")
		pages, errs := e.fetcher.Sitemap(ctx, sitemaps, r.spec.Robots(), e.cfg.MaxSitemaps, e.cfg.MaxSitemapURLs)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		for _, err := range errs {
			r.errs.add("sitemap: %v", err)
		}
		var urls []store.FrontierURL
		for _, p := range pages {
			if c, ok := r.admit(ctx, nil, p); ok {
				urls = append(urls, store.FrontierURL{URL: c, Depth: 1})
			}
		}
		if err := r.retryStore(ctx, "seed", func(ctx context.Context) error { return r.enqueue(ctx, urls) }); err != nil {
			return err
		}
		r.mu.Lock()
		r.prog.SitemapURLs += int64(len(pages))
		r.mu.Unlock()
		if len(pages) > 0 {
			r.log("sitemap seeded", "urls", len(pages))
		}
	}
	return nil
}

// admit canonicalises a link and applies scope, filters, blocklist and the
// SSRF pre-check; it counts refusals by reason.
func (r *jobRun) admit(ctx context.Context, base *url.URL, href string) (string, bool) {
	c, err := canon.Resolve(base, href, r.e.cfg.Canon)
	if err != nil {
		r.addFiltered(FilterInvalid, 1)
		return "", false
	}
	u, err := url.Parse(c)
	if err != nil {
		r.addFiltered(FilterInvalid, 1)
		return "", false
	}
	if reason := r.filters.check(u, c); reason != "" {
		r.addFiltered(reason, 1)
		return "", false
	}
	if blocked, err := r.e.block.blocked(ctx, u.Hostname()); err == nil && blocked {
		r.addFiltered(FilterBlocked, 1)
		return "", false
	}
	if r.e.guard != nil {
		if err := r.e.guard.CheckURL(u); err != nil {
			r.addFiltered(FilterSSRF, 1)
			return "", false
		}
	}
	return c, true
}

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
			if c, err = r.e.st.FrontierCounts(ctx, r.job.ID); err == nil {
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
	ev := Event{Type: EventPage, JobID: r.job.ID, At: time.Now().UTC(), URL: it.URL, Depth: it.Depth, Reason: out.reason, Chunks: out.chunks}
	switch out.state {
	case store.FrontierDone:
		ev.Outcome = out.reason
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
// page's links queued before it is stored; a redirect queues its target and a
// page gone (404, 410) removes its stored version.
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
	r.mu.Unlock()
	switch {
	case d.out.reason == SkipRedirect:
		return r.redirect(ctx, u, it, d.resp.Location)
	case prev != nil && d.resp != nil && (d.resp.Status == http.StatusNotFound || d.resp.Status == http.StatusGone):
		return r.gone(ctx, prev)
	}
	return d.out
}

// gone removes the stored version of a page that answered 404 or 410.
func (r *jobRun) gone(ctx context.Context, prev *store.Document) outcome {
	bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if _, err := r.e.st.DeleteDocument(bg, prev.ID, &store.DeletePayload{URL: prev.URL}); err != nil && !errors.Is(err, store.ErrNotFound) {
		return outcome{state: store.FrontierFailed, reason: FailStore, err: err}
	}
	return outcome{state: store.FrontierDone, reason: DoneDeleted}
}

// redirect queues an in-scope redirect target at the same depth (fetched
// once, like any link) and completes the redirecting URL as skipped.
func (r *jobRun) redirect(ctx context.Context, base *url.URL, it store.FrontierItem, location string) outcome {
	c, ok := r.admit(ctx, base, location)
	if !ok {
		return outcome{state: store.FrontierSkipped, reason: SkipRedirectOutOfScope, err: fmt.Errorf("redirect to %s is outside the crawl's scope", location)}
	}
	if err := r.enqueue(ctx, []store.FrontierURL{{URL: c, Depth: it.Depth}}); err != nil {
		if ctx.Err() != nil {
			return outcome{}
		}
		return outcome{state: store.FrontierFailed, reason: FailStore, err: err}
	}
	return outcome{state: store.FrontierSkipped, reason: SkipRedirect}
}

// queueLinks queues the page's followable links at depth+1.
func (r *jobRun) queueLinks(ctx context.Context, base *url.URL, it store.FrontierItem, page *htmltext.Page) error {
	if len(page.Links) == 0 {
		return nil
	}
	if page.Robots.NoFollow {
		r.addFiltered(FilterNoFollow, int64(len(page.Links)))
		return nil
	}
	if it.Depth >= r.spec.Depth() {
		r.addFiltered(FilterDepth, int64(len(page.Links)))
		return nil
	}
	seen := map[string]bool{}
	var urls []store.FrontierURL
	for _, l := range page.Links {
		if l.NoFollow() {
			r.addFiltered(FilterNoFollow, 1)
			continue
		}
		c, ok := r.admit(ctx, base, l.URL)
		if !ok || seen[c] {
			continue
		}
		seen[c] = true
		urls = append(urls, store.FrontierURL{URL: c, Depth: it.Depth + 1})
	}
	return r.enqueue(ctx, urls)
}

// enqueue adds URLs to the frontier (store.EnqueueURLs retries deadlocks of
// workers inserting overlapping links).
func (r *jobRun) enqueue(ctx context.Context, urls []store.FrontierURL) error {
	_, err := r.e.st.EnqueueURLs(ctx, r.job.ID, urls)
	return err
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
		return outcome{state: store.FrontierSkipped, reason: SkipSSRF, err: err}
	case fetch.IsTimeout(err):
		return outcome{state: store.FrontierFailed, reason: FailTimeout, err: err}
	default:
		return outcome{state: store.FrontierFailed, reason: FailNetwork, err: err}
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// Status returns a job's status with exact counters.
func (e *Engine) Status(ctx context.Context, id string) (Status, error) {
	job, err := e.st.GetJob(ctx, id)
	if err != nil {
		return Status{}, err
	}
	fr, err := e.st.FrontierReasons(ctx, id)
	if err != nil {
		return Status{}, err
	}
	return buildStatus(job, loadProgress(job.Counters), fr, time.Now())
}
