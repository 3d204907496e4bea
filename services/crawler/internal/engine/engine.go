// Package engine runs crawl jobs. A page's way through the crawler, and the
// file where each step lives:
//
//	frontier (frontier.go) → fetch → extract → chunk → embed → store + outbox → kg
//	                          └────────── page step (step.go) ──────────┘   (outbox package)
//
// The frontier lives in MariaDB (store), not in colly's in-memory queue: a
// crawler that is killed resumes its jobs from the table without fetching
// stored pages again, several processes share the job queue (rows claimed with
// FOR UPDATE SKIP LOCKED), and max_pages is exact because page slots are
// reserved by the claim itself (store.ClaimRequest.Budget) before any fetch
// starts. Links are canonicalised (canon) and admitted (scope, filters,
// blocklist, SSRF guard) before they are queued, so every spelling of a URL is
// one frontier row and is fetched once. Order is breadth-first: claims take the
// lowest depth first.
//
// A job's workers (worker.go) claim URLs and take each through the page step:
// fetch (the fetch package: colly behind the SSRF guard), extract (htmltext),
// then the Indexer (pipeline: chunk, embed, and one MariaDB transaction for
// the document, its chunks and the kg outbox row). POST /api/v1/pages
// (CrawlPage, page.go) runs the same step for one page. The outbox worker
// (package outbox) delivers to kg afterwards; the crawl never waits for kg.
//
// A job (job.go) takes its frontier over, seeds it, runs its workers beside a
// heartbeat and a reclaim loop, and ends by what stopped it; a job with prune
// (prune.go) first removes the stored documents in its scope it did not
// reach, when it saw the whole scope. It rides out
// outages of MariaDB (outage.go): nothing exits on a transient error, failed
// claims go back to the queue as soon as MariaDB answers, and a job that
// cannot make progress says so. Its counters come from the frontier (state
// and reason per URL) and are exact; what the frontier cannot tell (filtered
// links, bytes, stage times) is saved with the job's heartbeat (status.go).
//
// The engine's seams (deps.go) are interfaces, so the page step and the API
// above it are tested with fakes as well as against the real MariaDB.
package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
)

// Config tunes an Engine. Zero fields take the defaults given.
type Config struct {
	// Owner names this process in claims; default host-pid-random. Two engines
	// must never share an owner name.
	Owner    string
	JobSlots int           // jobs run at once; default 2
	Workers  int           // page workers per job; default 4
	Lease    time.Duration // job lease, renewed by heartbeats every Lease/3; default 30s
	// URLLease is the claim lease of a frontier URL; default 10m. A new owner
	// of a job releases the previous owner's claims at once.
	URLLease time.Duration
	// Reclaim is how often a running job returns to the queue the claims that
	// no worker holds any more (expired claims of a dead owner, claims whose
	// completion was lost in a database outage); default 5s.
	Reclaim        time.Duration
	Poll           time.Duration // how often an idle engine looks for jobs; default 1s
	Limits         Limits        // caps on max_pages and max_depth
	Canon          canon.Options // URL canonicalisation
	MaxSitemaps    int           // sitemap files read per job; default 20
	MaxSitemapURLs int           // URLs taken from sitemaps per job; default 50000
	// MaxPageLinks bounds the links one page adds to the frontier; default
	// DefaultMaxPageLinks. The rest count as filtered (link_limit).
	MaxPageLinks int
}

// DefaultMaxPageLinks is the default of Config.MaxPageLinks. A page of the body
// limit (10 MiB) can hold some 400,000 distinct links, each a frontier row: a
// hostile site could fill MariaDB with rows no crawl would fetch (a job fetches
// max_pages). The largest index pages of documentation sites link a few
// thousand distinct pages.
const DefaultMaxPageLinks = 10000

func (c Config) withDefaults() Config {
	if c.MaxPageLinks <= 0 {
		c.MaxPageLinks = DefaultMaxPageLinks
	}
	if c.Owner == "" {
		host, _ := os.Hostname()
		c.Owner = fmt.Sprintf("%s-%d-%04x", host, os.Getpid(), rand.IntN(1<<16)) //nolint:gosec // G404: a suffix that tells owners apart in logs, not a secret
	}
	if len(c.Owner) > 100 {
		c.Owner = c.Owner[:100]
	}
	if c.JobSlots == 0 {
		c.JobSlots = 2
	}
	if c.Workers == 0 {
		c.Workers = 4
	}
	if c.Lease == 0 {
		c.Lease = 30 * time.Second
	}
	if c.URLLease == 0 {
		c.URLLease = 10 * time.Minute
	}
	if c.Reclaim == 0 {
		c.Reclaim = 5 * time.Second
	}
	if c.Poll == 0 {
		c.Poll = time.Second
	}
	if c.Limits.MaxPages == 0 {
		c.Limits.MaxPages = 10000
	}
	if c.Limits.MaxDepth == 0 {
		c.Limits.MaxDepth = 20
	}
	if c.MaxSitemaps == 0 {
		c.MaxSitemaps = 20
	}
	if c.MaxSitemapURLs == 0 {
		c.MaxSitemapURLs = 50000
	}
	return c
}

// Engine runs crawl jobs. Create it with New, start Run in a goroutine.
type Engine struct {
	cfg     Config
	st      Store
	fetcher Fetcher
	guard   Guard
	pipe    Indexer
	log     *slog.Logger
	m       *metrics
	hub     *hub
	wake    chan struct{}
	block   *blocklist

	qmu    sync.Mutex
	queued map[string]int64 // queued URLs per running job, for the queue_depth gauge

	runMu sync.Mutex
	runs  map[string]bool // jobs this engine is running
}

// New builds an engine. reg may be nil (no metrics registered).
func New(cfg Config, d Deps, logger *slog.Logger, reg prometheus.Registerer) *Engine {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Engine{
		cfg: cfg.withDefaults(), st: d.Store, fetcher: d.Fetcher, guard: d.Guard, pipe: d.Indexer, log: logger,
		m: newMetrics(reg), hub: newHub(), wake: make(chan struct{}, 1),
		block: newBlocklist(d.Store, 5*time.Second), queued: map[string]int64{}, runs: map[string]bool{},
	}
}

// Owner is the name this engine claims rows with.
func (e *Engine) Owner() string { return e.cfg.Owner }

// Limits are the caps new job specs are checked against.
func (e *Engine) Limits() Limits { return e.cfg.Limits }

// CanonOptions are the URL canonicalisation options.
func (e *Engine) CanonOptions() canon.Options { return e.cfg.Canon }

// Wake makes an idle engine look for jobs now (after a job was created).
func (e *Engine) Wake() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

// Subscribe streams a job's events from this process until cancel is called.
func (e *Engine) Subscribe(jobID string) (<-chan Event, func()) { return e.hub.subscribe(jobID) }

// Run claims and runs jobs until ctx is cancelled. Jobs running at that point
// keep their state in MariaDB and are resumed by the next owner.
func (e *Engine) Run(ctx context.Context) error {
	e.log.Info("crawl engine started", "owner", e.cfg.Owner, "job_slots", e.cfg.JobSlots, "workers", e.cfg.Workers)
	slots := make(chan struct{}, e.cfg.JobSlots)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		job, ok, err := e.st.ClaimJob(ctx, e.cfg.Owner, e.cfg.Lease)
		if err != nil || !ok {
			<-slots
			if err != nil && ctx.Err() == nil {
				e.log.Warn("claim job failed", "err", err)
			}
			select {
			case <-ctx.Done():
				return nil
			case <-e.wake:
			case <-time.After(e.cfg.Poll):
			}
			continue
		}
		// A job this engine still runs comes back when its heartbeats failed
		// for longer than the lease (a database outage): the claim renewed the
		// lease, and the run in progress goes on.
		if !e.startRun(job.ID) {
			<-slots
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			defer e.endRun(job.ID)
			e.runJob(ctx, job)
		}()
	}
}

func (e *Engine) startRun(id string) bool {
	e.runMu.Lock()
	defer e.runMu.Unlock()
	if e.runs[id] {
		return false
	}
	e.runs[id] = true
	return true
}

func (e *Engine) endRun(id string) {
	e.runMu.Lock()
	delete(e.runs, id)
	e.runMu.Unlock()
}

// setQueued records a job's queued URLs (n < 0: the job stopped) and updates
// the queue depth gauge with the sum over the running jobs.
func (e *Engine) setQueued(jobID string, n int64) {
	e.qmu.Lock()
	defer e.qmu.Unlock()
	if n < 0 {
		delete(e.queued, jobID)
	} else {
		e.queued[jobID] = n
	}
	var sum int64
	for _, v := range e.queued {
		sum += v
	}
	e.m.queueDepth.Set(float64(sum))
}

// blocklist caches the domain blocklist for a few seconds.
type blocklist struct {
	st  Blocklist
	ttl time.Duration

	mu      sync.Mutex
	domains map[string]bool
	loaded  time.Time
}

func newBlocklist(st Blocklist, ttl time.Duration) *blocklist {
	return &blocklist{st: st, ttl: ttl}
}

// InvalidateBlocklist drops the blocklist cache (after the blocklist changed).
func (e *Engine) InvalidateBlocklist() {
	e.block.mu.Lock()
	e.block.loaded = time.Time{}
	e.block.mu.Unlock()
}

// blocked reports whether host or a parent domain is blocklisted.
func (b *blocklist) blocked(ctx context.Context, host string) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.domains == nil || time.Since(b.loaded) > b.ttl {
		list, err := b.st.BlockedDomains(ctx)
		if err != nil {
			return false, err
		}
		b.domains = make(map[string]bool, len(list))
		for _, d := range list {
			b.domains[d.Domain] = true
		}
		b.loaded = time.Now()
	}
	if len(b.domains) == 0 {
		return false, nil
	}
	h, err := store.NormalizeDomain(host)
	if err != nil {
		return false, nil
	}
	for {
		if b.domains[h] {
			return true, nil
		}
		i := strings.IndexByte(h, '.')
		if i < 0 {
			return false, nil
		}
		h = h[i+1:]
	}
}

// errorList keeps the newest job errors.
type errorList struct {
	mu    sync.Mutex
	items []string
	dirty bool
}

func (l *errorList) add(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, time.Now().UTC().Format(time.RFC3339)+" "+fmt.Sprintf(format, args...))
	if len(l.items) > 50 {
		l.items = l.items[len(l.items)-50:]
	}
	l.dirty = true
}

func (l *errorList) snapshot() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string{}, l.items...)
}

var (
	errJobCancelled = errors.New("job cancelled")
	errLeaseLost    = errors.New("job lease lost")
	errJobDone      = errors.New("job finished")
)
