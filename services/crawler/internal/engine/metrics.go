package engine

import "github.com/prometheus/client_golang/prometheus"

// metrics are the crawler's Prometheus series.
type metrics struct {
	fetched    prometheus.Counter
	stored     prometheus.Counter
	unchanged  prometheus.Counter
	deleted    *prometheus.CounterVec
	failed     *prometheus.CounterVec
	skipped    *prometheus.CounterVec
	bytes      prometheus.Counter
	chunks     prometheus.Counter
	fetchDur   prometheus.Histogram
	embedDur   prometheus.Histogram
	stageDur   *prometheus.HistogramVec
	queueDepth prometheus.Gauge
	running    prometheus.Gauge
	stalls     prometheus.Counter
	reclaimed  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	const ns, sub = "kgsearch", "crawler"
	buckets := []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}
	m := &metrics{
		fetched:    prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "pages_fetched_total", Help: "Pages fetched (an HTTP answer was received)."}),
		stored:     prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "pages_stored_total", Help: "Pages stored (inserted or replaced)."}),
		unchanged:  prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "pages_unchanged_total", Help: "Pages found unchanged (304 or same content hash)."}),
		deleted:    prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "pages_deleted_total", Help: "Stored pages removed because of what they answer now, or because a prune crawl did not reach them (vanished), by reason (http_404, noindex, redirect, vanished, ...)."}, []string{"reason"}),
		failed:     prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "pages_failed_total", Help: "Pages that failed, by reason."}, []string{"reason"}),
		skipped:    prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "pages_skipped_total", Help: "Pages skipped, by reason."}, []string{"reason"}),
		bytes:      prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "fetched_bytes_total", Help: "Response body bytes fetched."}),
		chunks:     prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "chunks_stored_total", Help: "Chunks stored."}),
		fetchDur:   prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "fetch_duration_seconds", Help: "Fetch latency per page, retries and politeness waits included.", Buckets: buckets}),
		embedDur:   prometheus.NewHistogram(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "embed_duration_seconds", Help: "Embedding latency per page (all its chunks).", Buckets: buckets}),
		stageDur:   prometheus.NewHistogramVec(prometheus.HistogramOpts{Namespace: ns, Subsystem: sub, Name: "stage_duration_seconds", Help: "Per-page time in each pipeline stage.", Buckets: buckets}, []string{"stage"}),
		queueDepth: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "queue_depth", Help: "Queued frontier URLs of the jobs this process runs."}),
		running:    prometheus.NewGauge(prometheus.GaugeOpts{Namespace: ns, Subsystem: sub, Name: "jobs_running", Help: "Jobs this process is running."}),
		stalls:     prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "job_stalls_total", Help: "Times a running job stalled waiting for MariaDB."}),
		reclaimed:  prometheus.NewCounter(prometheus.CounterOpts{Namespace: ns, Subsystem: sub, Name: "claims_reclaimed_total", Help: "Frontier claims returned to the queue by a job's reclaim loop (expired or lost)."}),
	}
	if reg != nil {
		reg.MustRegister(m.fetched, m.stored, m.unchanged, m.deleted, m.failed, m.skipped, m.bytes, m.chunks,
			m.fetchDur, m.embedDur, m.stageDur, m.queueDepth, m.running, m.stalls, m.reclaimed)
	}
	return m
}
