// Package admission is the search service's back-pressure: a bounded number of
// searches run at once, a bounded number wait a short, bounded time for a slot, and
// the rest are refused at once with a *SaturatedError (the API answers 503 with
// Retry-After). A search that is only queued therefore never eats into the
// retrievers' budgets, so degraded answers mean a dependency failed, not that the
// machine was busy.
package admission

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
)

// Options size the limiter. Zero values take the defaults (Defaults).
type Options struct {
	MaxInFlight int           // searches running at once
	MaxQueue    int           // searches waiting for a slot, more are refused at once; < 0: none wait
	MaxWait     time.Duration // longest wait for a slot before the search is refused
	RetryAfter  time.Duration // told to refused clients (rounded up to whole seconds)
}

// Defaults are the limiter's defaults for this machine: 4 searches in flight per
// core (GOMAXPROCS; a search spends most of its time waiting for MariaDB, kg and
// Bleve, so one per core would leave the cores idle), as many waiting, 100 ms wait.
func Defaults() Options {
	n := 4 * runtime.GOMAXPROCS(0)
	return Options{MaxInFlight: n, MaxQueue: n, MaxWait: 100 * time.Millisecond, RetryAfter: time.Second}
}

func (o Options) withDefaults() Options {
	d := Defaults()
	if o.MaxInFlight <= 0 {
		o.MaxInFlight = d.MaxInFlight
	}
	switch {
	case o.MaxQueue == 0:
		o.MaxQueue = d.MaxQueue
	case o.MaxQueue < 0:
		o.MaxQueue = 0
	}
	if o.MaxWait <= 0 {
		o.MaxWait = d.MaxWait
	}
	if o.RetryAfter <= 0 {
		o.RetryAfter = d.RetryAfter
	}
	return o
}

// ErrSaturated is what a refused search's error Is.
var ErrSaturated = errors.New("search service saturated")

// SaturatedError is a search refused because the service is at capacity.
type SaturatedError struct {
	InFlight   int
	Queued     bool          // it waited and timed out (false: the queue was full)
	RetryAfter time.Duration // when to try again
}

func (e *SaturatedError) Error() string {
	if e.Queued {
		return fmt.Sprintf("search service saturated: %d searches running and no slot freed in time", e.InFlight)
	}
	return fmt.Sprintf("search service saturated: %d searches running and the queue is full", e.InFlight)
}

// Is makes errors.Is(err, ErrSaturated) true.
func (e *SaturatedError) Is(target error) bool { return target == ErrSaturated }

// RetryAfterSeconds is RetryAfter in whole seconds, at least 1 (the Retry-After header).
func (e *SaturatedError) RetryAfterSeconds() int {
	return max(1, int((e.RetryAfter+time.Second-1)/time.Second))
}

// Limiter admits searches. It is safe for concurrent use.
type Limiter struct {
	opt     Options
	slots   chan struct{}
	waiting atomic.Int64
	met     *metrics
}

// New returns a limiter; reg may be nil (no metrics).
func New(o Options, reg prometheus.Registerer) *Limiter {
	o = o.withDefaults()
	l := &Limiter{opt: o, slots: make(chan struct{}, o.MaxInFlight)}
	if reg != nil {
		l.met = newMetrics(reg, l)
	}
	return l
}

// Options returns the limiter's effective options.
func (l *Limiter) Options() Options { return l.opt }

// Acquire takes a slot, waiting at most MaxWait when all are taken and fewer than
// MaxQueue searches are waiting. It returns the function that frees the slot, a
// *SaturatedError when refused, or ctx's error when the caller went away first.
func (l *Limiter) Acquire(ctx context.Context) (func(), error) {
	select {
	case l.slots <- struct{}{}:
		return l.release, nil
	default:
	}
	if l.waiting.Add(1) > int64(l.opt.MaxQueue) {
		l.waiting.Add(-1)
		return nil, l.refuse(false)
	}
	defer l.waiting.Add(-1)
	t := time.NewTimer(l.opt.MaxWait)
	defer t.Stop()
	start := time.Now()
	select {
	case l.slots <- struct{}{}:
		l.observeWait(time.Since(start))
		return l.release, nil
	case <-t.C:
		return nil, l.refuse(true)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (l *Limiter) release() { <-l.slots }

func (l *Limiter) refuse(queued bool) error {
	reason := "queue_full"
	if queued {
		reason = "wait_timeout"
	}
	if l.met != nil {
		l.met.rejected.WithLabelValues(reason).Inc()
	}
	return &SaturatedError{InFlight: len(l.slots), Queued: queued, RetryAfter: l.opt.RetryAfter}
}

func (l *Limiter) observeWait(d time.Duration) {
	if l.met != nil {
		l.met.wait.Observe(d.Seconds())
	}
}

// Searcher is the pipeline behind the limiter.
type Searcher interface {
	Search(ctx context.Context, req pipeline.Request) (*pipeline.Response, error)
}

// Limited runs each search through l.
type Limited struct {
	Next Searcher
	L    *Limiter
}

// Search admits the search, then runs it.
func (s Limited) Search(ctx context.Context, req pipeline.Request) (*pipeline.Response, error) {
	release, err := s.L.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	return s.Next.Search(ctx, req)
}

type metrics struct {
	rejected *prometheus.CounterVec
	wait     prometheus.Histogram
}

func newMetrics(reg prometheus.Registerer, l *Limiter) *metrics {
	m := &metrics{
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "kgsearch", Subsystem: "search", Name: "admission_rejected_total",
			Help: "Searches refused with 503 because the service was saturated, by reason (queue_full, wait_timeout).",
		}, []string{"reason"}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "kgsearch", Subsystem: "search", Name: "admission_wait_seconds",
			Help:    "Time admitted searches waited for a slot (only those that waited).",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5},
		}),
	}
	reg.MustRegister(m.rejected, m.wait,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kgsearch", Subsystem: "search", Name: "searches_in_flight",
			Help: "Searches running now (admitted)."}, func() float64 { return float64(len(l.slots)) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kgsearch", Subsystem: "search", Name: "searches_waiting",
			Help: "Searches waiting for a slot now."}, func() float64 { return float64(l.waiting.Load()) }))
	return m
}
