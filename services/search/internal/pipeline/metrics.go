package pipeline

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the pipeline's Prometheus metrics.
type Metrics struct {
	phase    *prometheus.HistogramVec
	errors   *prometheus.CounterVec
	degraded *prometheus.CounterVec
	qcache   *prometheus.CounterVec
}

// NewMetrics registers the pipeline's metrics with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		phase: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "kgsearch", Subsystem: "search", Name: "phase_duration_seconds",
			Help:    "Search latency per pipeline phase (parse, retrieve, expand, rank, format, total).",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1},
		}, []string{"phase"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "kgsearch", Subsystem: "search", Name: "retriever_errors_total",
			Help: "Retriever failures by retriever (vector, graph, bm25, expansion, hydrate) and kind (timeout, error).",
		}, []string{"retriever", "kind"}),
		degraded: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "kgsearch", Subsystem: "search", Name: "degraded_responses_total",
			Help: "Searches answered without a signal, by signal.",
		}, []string{"signal"}),
	}
	m.qcache = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "kgsearch", Subsystem: "search", Name: "query_vector_cache_total",
		Help: "Query embeddings looked up in the cache of recent query vectors, by result (hit, miss).",
	}, []string{"result"})
	reg.MustRegister(m.phase, m.errors, m.degraded, m.qcache)
	return m
}

func (p *Pipeline) observe(phase string, d time.Duration) {
	if p.met != nil {
		p.met.phase.WithLabelValues(phase).Observe(d.Seconds())
	}
}

func (p *Pipeline) retrieverError(name string, err error) {
	kind := "error"
	if errors.Is(err, context.DeadlineExceeded) {
		kind = "timeout"
	}
	// A dependency that is down fails every search: warn when a retriever starts
	// failing, then only at debug level until it works again.
	if p.failing(name, true) {
		p.log.Debug("retriever failed", "retriever", name, "kind", kind, "err", err)
	} else {
		p.log.Warn("retriever failing; searches continue without it", "retriever", name, "kind", kind, "err", err)
	}
	if p.met != nil {
		p.met.errors.WithLabelValues(name, kind).Inc()
	}
}

func (p *Pipeline) queryCacheInc(hit bool) {
	if p.met != nil {
		r := "miss"
		if hit {
			r = "hit"
		}
		p.met.qcache.WithLabelValues(r).Inc()
	}
}

func (p *Pipeline) degradedInc(signal string) {
	if p.met != nil {
		p.met.degraded.WithLabelValues(signal).Inc()
	}
}

// failing records whether a retriever is failing and returns the previous state.
func (p *Pipeline) failing(name string, now bool) bool {
	v, _ := p.state.LoadOrStore(name, new(atomic.Bool))
	return v.(*atomic.Bool).Swap(now)
}

// recovered logs a retriever that works again after failing.
func (p *Pipeline) recovered(name string) {
	if v, ok := p.state.Load(name); ok && v.(*atomic.Bool).Swap(false) {
		p.log.Info("retriever works again", "retriever", name)
	}
}
