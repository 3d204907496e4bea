package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
)

// jobRun is one engine's run of one job.
type jobRun struct {
	e       *Engine
	front   frontier
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

// runJob runs a claimed job until it is done, cancelled, or ctx ends:
// take the frontier over, work it (seed, then workers with the heartbeat and
// reclaim loops beside them), then end the run by what stopped it.
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
	r.front = frontier{st: e.st, job: job.ID, owner: e.cfg.Owner, lease: e.cfg.URLLease, budget: spec.MaxPages}
	r.log("crawl job started", "url", spec.URL, "resumed", r.prog.Seeded, "max_pages", spec.MaxPages, "max_depth", spec.Depth())
	r.takeOver(ctx)
	cause := r.work(ctx)
	r.end(ctx, cause)
}

// takeOver returns to the queue the claims nobody works on any more: expired
// ones (a crashed owner), the previous owner's, and this owner's own from an
// earlier run of the job (whose release an outage may have lost).
func (r *jobRun) takeOver(ctx context.Context) {
	e := r.e
	if _, err := r.front.requeueExpired(ctx); err != nil && ctx.Err() == nil {
		e.log.Warn("requeue expired claims", "job", r.job.ID, "err", err)
	}
	owners := []string{e.cfg.Owner}
	if prev := r.prog.Owner; prev != "" && prev != e.cfg.Owner {
		owners = append(owners, prev)
	}
	for _, owner := range owners {
		if n, err := r.front.release(ctx, owner); err != nil && ctx.Err() == nil {
			e.log.Warn("release earlier claims", "job", r.job.ID, "owner", owner, "err", err)
		} else if n > 0 {
			r.log("released claims of an earlier run", "owner", owner, "urls", n)
		}
	}
	r.mu.Lock()
	r.prog.Owner = e.cfg.Owner
	r.mu.Unlock()
}

// work seeds the frontier once and runs the workers until the job has no
// work left, is cancelled, loses its lease or ctx ends; it returns why it
// stopped (errJobDone when the work is done).
func (r *jobRun) work(ctx context.Context) error {
	jctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var loops sync.WaitGroup
	loops.Add(2)
	go func() {
		defer loops.Done()
		r.heartbeatLoop(jctx, cancel)
	}()
	go func() {
		defer loops.Done()
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
		for i := 0; i < r.e.cfg.Workers; i++ {
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
		if r.spec.Prune && jctx.Err() == nil {
			// Beside the heartbeat, which renews the lease and stops the
			// prune when the job is cancelled, the lease lost or ctx ends.
			r.prune(jctx)
			if jctx.Err() != nil {
				cause = context.Cause(jctx)
			}
		}
	default:
	}
	cancel(errJobDone)
	loops.Wait()
	return cause
}

// shutdownLease is the lease a run leaves on its job when the crawler shuts
// down: it has ended by the time another crawler looks.
const shutdownLease = time.Millisecond

// end releases the claims in hand, whatever stopped the run, and finishes
// the job, or leaves it running for the next owner.
func (r *jobRun) end(ctx context.Context, cause error) {
	e := r.e
	bg, bgCancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer bgCancel()
	if _, err := r.front.release(bg, e.cfg.Owner); err != nil {
		e.log.Warn("release claims", "job", r.job.ID, "err", err)
	}
	switch {
	case errors.Is(cause, errJobDone), errors.Is(cause, errJobCancelled):
		r.finish(bg, store.JobDone)
	case errors.Is(cause, errLeaseLost):
		r.log("crawl job lease lost; another owner continues it")
	case ctx.Err() != nil:
		// Shutdown: save progress, keep the job running for the next owner, and
		// end the lease now (the shortest the store takes) so that the next
		// owner, this crawler restarted or another replica, claims it at once
		// instead of a lease later.
		status, err := e.st.HeartbeatJob(bg, r.job.ID, e.cfg.Owner, shutdownLease, store.JobProgress{Counters: r.progressJSON(), LastErrors: r.errs.snapshot()})
		switch {
		case err != nil:
			e.log.Warn("save progress on shutdown", "job", r.job.ID, "err", err)
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
		if c, err := r.front.counts(ctx); err == nil {
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
		r.noteSitemap(errs, len(pages))
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

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
