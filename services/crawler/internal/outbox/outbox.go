// Package outbox delivers stored documents to the kg service. The crawler
// writes an outbox row in the same MariaDB transaction as the document
// (store.UpsertDocument, store.DeleteDocument); workers here claim due rows,
// call kg's ingest or delete endpoint, and acknowledge them. When kg is down
// the row is released with the store's backoff and retried later, so nothing
// is lost and the crawl never waits for kg. A row that kg refuses for good (the
// document itself is wrong: 400, 413, 422) is parked instead: it is not retried
// until an operator requeues it (kgregraph -requeue-parked), and the parked count
// is exported (metrics, /readyz) so the documents missing from the graph show.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/store"
)

// KG is the part of the kg service the worker calls (kgapi.Client).
type KG interface {
	Ingest(ctx context.Context, doc kgapi.Document) (*kgapi.IngestResponse, error)
	DeleteDocument(ctx context.Context, id string) error
}

// Store is the outbox table in MariaDB (store.Store).
type Store interface {
	ClaimOutbox(ctx context.Context, owner string, n int, lease time.Duration) ([]store.OutboxItem, error)
	AckOutbox(ctx context.Context, id int64, owner string) error
	FailOutbox(ctx context.Context, id int64, owner string, cause error) (time.Time, error)
	ParkOutbox(ctx context.Context, id int64, owner string, status int, reason string) (bool, error)
	OutboxStats(ctx context.Context) (store.OutboxStats, error)
}

// Config tunes a Worker. Zero fields take the defaults given.
type Config struct {
	Owner   string        // claim owner; required, unique per process
	Workers int           // parallel deliveries; default 2
	Batch   int           // rows claimed at once; default 16
	Lease   time.Duration // claim lease; default 2m
	Poll    time.Duration // idle poll interval; default 1s
	// StatsEvery is how often the pending and parked counts are read for the
	// gauges and the readiness report; default 30s.
	StatsEvery time.Duration
}

// Worker delivers outbox rows.
type Worker struct {
	cfg       Config
	st        Store
	kg        KG
	log       *slog.Logger
	delivered *prometheus.CounterVec
	failures  *prometheus.CounterVec
	parkedTot *prometheus.CounterVec
	pending   prometheus.Gauge
	parked    prometheus.Gauge
	// stats is the last OutboxStats read (nil before the first).
	stats atomic.Pointer[store.OutboxStats]
}

// Result counts what DeliverOnce did with the rows it claimed.
type Result struct {
	Delivered int // acknowledged (kg took them)
	Retried   int // released for a later attempt (kg unavailable)
	Parked    int // refused by kg for good (or superseded by a newer row while refused)
}

// New returns a Worker; reg may be nil.
func New(cfg Config, st Store, kg KG, logger *slog.Logger, reg prometheus.Registerer) *Worker {
	if cfg.Workers == 0 {
		cfg.Workers = 2
	}
	if cfg.Batch == 0 {
		cfg.Batch = 16
	}
	if cfg.Lease == 0 {
		cfg.Lease = 2 * time.Minute
	}
	if cfg.Poll == 0 {
		cfg.Poll = time.Second
	}
	if cfg.StatsEvery == 0 {
		cfg.StatsEvery = 30 * time.Second
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	w := &Worker{cfg: cfg, st: st, kg: kg, log: logger,
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kgsearch", Subsystem: "crawler",
			Name: "outbox_delivered_total", Help: "Outbox rows delivered to kg, by kind."}, []string{"kind"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kgsearch", Subsystem: "crawler",
			Name: "outbox_failures_total", Help: "Failed outbox deliveries (retried later), by kind."}, []string{"kind"}),
		parkedTot: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kgsearch", Subsystem: "crawler",
			Name: "outbox_parked_total", Help: "Outbox rows kg refused for good and this process parked, by kind and kg's HTTP status (0: the row could not be sent)."}, []string{"kind", "status"}),
		pending: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "kgsearch", Subsystem: "crawler",
			Name: "outbox_pending", Help: "Outbox rows waiting for delivery to kg (the whole table, read every StatsEvery)."}),
		parked: prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "kgsearch", Subsystem: "crawler",
			Name: "outbox_parked", Help: "Parked outbox rows: documents kg refused, missing from the graph until requeued (the whole table)."}),
	}
	if reg != nil {
		reg.MustRegister(w.delivered, w.failures, w.parkedTot, w.pending, w.parked)
	}
	return w
}

// RefreshStats reads the pending and parked counts into the gauges and the
// readiness report.
func (w *Worker) RefreshStats(ctx context.Context) error {
	st, err := w.st.OutboxStats(ctx)
	if err != nil {
		return err
	}
	w.stats.Store(&st)
	w.pending.Set(float64(st.Pending))
	w.parked.Set(float64(st.Parked))
	return nil
}

// Stats returns the counts last read, and false before the first read.
func (w *Worker) Stats() (store.OutboxStats, bool) {
	if st := w.stats.Load(); st != nil {
		return *st, true
	}
	return store.OutboxStats{}, false
}

// ParkedCheck is a readiness report (httpserver.Server.AddInfoCheck: it never
// makes the crawler unready): an error naming the parked count while there are
// parked rows. It reads the counts last refreshed, not the database.
func (w *Worker) ParkedCheck(context.Context) error {
	st, ok := w.Stats()
	if !ok || st.Parked == 0 {
		return nil
	}
	return fmt.Errorf("%d outbox rows parked: kg refused these documents for good and they are missing from the graph; "+
		"list them with kgregraph -parked, requeue them with kgregraph -requeue-parked once kg is fixed", st.Parked)
}

// Run delivers until ctx is cancelled.
func (w *Worker) Run(ctx context.Context) error {
	rows := make(chan store.OutboxItem)
	done := make(chan struct{})
	for i := 0; i < w.cfg.Workers; i++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for it := range rows {
				w.deliver(ctx, it)
			}
		}()
	}
	defer func() {
		close(rows)
		for i := 0; i < w.cfg.Workers; i++ {
			<-done
		}
	}()
	statsDone := make(chan struct{})
	go func() { defer close(statsDone); w.statsLoop(ctx) }()
	defer func() { <-statsDone }()
	for ctx.Err() == nil {
		items, err := w.st.ClaimOutbox(ctx, w.cfg.Owner, w.cfg.Batch, w.cfg.Lease)
		if err != nil {
			if ctx.Err() == nil {
				w.log.Warn("claim outbox", "err", err)
			}
			sleep(ctx, w.cfg.Poll)
			continue
		}
		if len(items) == 0 {
			sleep(ctx, w.cfg.Poll)
			continue
		}
		for _, it := range items {
			select {
			case rows <- it:
			case <-ctx.Done():
				return nil
			}
		}
	}
	return nil
}

// statsLoop refreshes the counts now and every StatsEvery until ctx ends.
func (w *Worker) statsLoop(ctx context.Context) {
	t := time.NewTicker(w.cfg.StatsEvery)
	defer t.Stop()
	for {
		if err := w.RefreshStats(ctx); err != nil && ctx.Err() == nil {
			w.log.Debug("read outbox counts", "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// DeliverOnce claims and delivers the due rows once (tests, tools).
func (w *Worker) DeliverOnce(ctx context.Context) (Result, error) {
	var r Result
	items, err := w.st.ClaimOutbox(ctx, w.cfg.Owner, w.cfg.Batch, w.cfg.Lease)
	if err != nil {
		return r, err
	}
	for _, it := range items {
		switch w.deliver(ctx, it) {
		case delivered:
			r.Delivered++
		case parked:
			r.Parked++
		default:
			r.Retried++
		}
	}
	return r, nil
}

// outcome is what became of a delivery.
type outcome int

const (
	retried outcome = iota
	delivered
	parked
)

// DeliverTimeout bounds one delivery to kg. kg gives the ingest of a large
// document up to eight times its graph timeout (8 s by default), so the kg client
// of the outbox must wait that long too: with the kgapi client's default 10 s, a
// 500-chunk page timed out at every attempt and never reached the graph.
const DeliverTimeout = 90 * time.Second

func (w *Worker) deliver(ctx context.Context, it store.OutboxItem) outcome {
	cctx, cancel := context.WithTimeout(ctx, DeliverTimeout)
	defer cancel()
	err := w.send(cctx, it)
	if err == nil {
		if err := w.retryStore(ctx, func(ctx context.Context) error { return w.st.AckOutbox(ctx, it.ID, w.cfg.Owner) }); err != nil {
			w.log.Warn("ack outbox", "id", it.ID, "err", err)
		}
		w.delivered.WithLabelValues(it.Kind).Inc()
		return delivered
	}
	if status, reason, ok := Refusal(err); ok {
		w.park(ctx, it, status, reason)
		return parked
	}
	w.failures.WithLabelValues(it.Kind).Inc()
	var next time.Time
	ferr := w.retryStore(ctx, func(ctx context.Context) error {
		var err2 error
		next, err2 = w.st.FailOutbox(ctx, it.ID, w.cfg.Owner, err)
		return err2
	})
	if ferr != nil {
		w.log.Warn("release outbox row", "id", it.ID, "err", ferr)
		return retried
	}
	var se *kgapi.StatusError
	switch {
	case it.Attempts > 1:
		w.log.Debug("kg still unavailable or refusing", "id", it.ID, "kind", it.Kind, "attempts", it.Attempts, "retry_at", next, "err", err)
	case errors.As(err, &se):
		// 401, 403, 404 on ingest, …: kg refuses every request (a wrong key or
		// URL), not this document; the row is retried until the setup is fixed.
		w.log.Error("kg refused outbox row, kept for retry", "id", it.ID, "kind", it.Kind, "document", it.DocumentID, "status", se.Status, "retry_at", next, "err", err)
	default:
		w.log.Warn("kg unavailable, outbox row kept for retry", "id", it.ID, "kind", it.Kind, "document", it.DocumentID, "attempts", it.Attempts, "retry_at", next, "err", err)
	}
	return retried
}

// errBadRow marks a row the worker cannot turn into a request (its payload does
// not decode, its kind is unknown): no retry can help.
var errBadRow = errors.New("outbox row cannot be sent")

// Refusal reports whether err means kg refused the row for good, and then kg's
// HTTP status and reason: a *kgapi.StatusError saying the document itself is
// wrong (400 invalid, 413 too large, 422 unprocessable), or a row that cannot be
// sent at all (status 0). kgapi has already classed 5xx, 408, 429 and transport
// failures (timeouts included) as kgapi.ErrUnavailable; the other 4xx answers
// (401, 403, a 404 on ingest, 405, 415) refuse every request, not this document,
// and are retried like an outage. A 404 on delete never gets here: kgapi counts a
// document kg does not know as deleted.
func Refusal(err error) (status int, reason string, ok bool) {
	var se *kgapi.StatusError
	if errors.As(err, &se) {
		switch se.Status {
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
			return se.Status, se.Detail, true
		}
		return 0, "", false
	}
	if errors.Is(err, errBadRow) {
		return 0, err.Error(), true
	}
	return 0, "", false
}

// park parks a refused row (or drops it when a newer row of its document
// supersedes it) and logs it once.
func (w *Worker) park(ctx context.Context, it store.OutboxItem, status int, reason string) {
	var isParked bool
	err := w.retryStore(ctx, func(ctx context.Context) error {
		var err2 error
		isParked, err2 = w.st.ParkOutbox(ctx, it.ID, w.cfg.Owner, status, reason)
		return err2
	})
	if err != nil {
		w.log.Warn("park outbox row", "id", it.ID, "err", err)
		return
	}
	if !isParked {
		w.log.Warn("kg refused outbox row superseded by a newer one, dropped", "id", it.ID, "kind", it.Kind, "document", it.DocumentID, "status", status, "reason", reason)
		return
	}
	w.parkedTot.WithLabelValues(it.Kind, strconv.Itoa(status)).Inc()
	w.log.Error("kg refused outbox row for good, parked", "id", it.ID, "kind", it.Kind, "document", it.DocumentID, "status", status, "reason", reason, "attempts", it.Attempts)
	if err := w.RefreshStats(ctx); err != nil && ctx.Err() == nil {
		w.log.Debug("read outbox counts", "err", err)
	}
}

func (w *Worker) send(ctx context.Context, it store.OutboxItem) error {
	switch it.Kind {
	case store.OutboxUpsert:
		var doc kgapi.Document
		if err := json.Unmarshal(it.Payload, &doc); err != nil {
			return fmt.Errorf("%w: decode payload of outbox row %d: %w", errBadRow, it.ID, err)
		}
		_, err := w.kg.Ingest(ctx, doc)
		return err
	case store.OutboxDelete:
		p, err := it.DeletePayload()
		if err != nil {
			return fmt.Errorf("%w: %w", errBadRow, err)
		}
		return w.kg.DeleteDocument(ctx, p.ID)
	default:
		return fmt.Errorf("%w: outbox row %d has unknown kind %q", errBadRow, it.ID, it.Kind)
	}
}

// retryStore runs an acknowledgement until it succeeds, fails for a reason
// other than an unreachable MariaDB, or ctx ends: a row delivered to kg must
// not wait for its lease to expire because MariaDB blinked. A row whose
// acknowledgement is given up is delivered again after its lease (kg's ingest
// and delete are idempotent).
func (w *Worker) retryStore(ctx context.Context, op func(context.Context) error) error {
	wait := 100 * time.Millisecond
	for {
		octx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		err := op(octx)
		cancel()
		if err == nil || !store.Unavailable(err) || ctx.Err() != nil {
			return err
		}
		sleep(ctx, wait)
		wait = min(2*wait, 5*time.Second)
	}
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
