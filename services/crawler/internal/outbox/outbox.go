// Package outbox delivers stored documents to the kg service. The crawler
// writes an outbox row in the same MariaDB transaction as the document
// (store.UpsertDocument, store.DeleteDocument); workers here claim due rows,
// call kg's ingest or delete endpoint, and acknowledge them. When kg is down
// the row is released with the store's backoff and retried later, so nothing
// is lost and the crawl never waits for kg.
package outbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
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
}

// Config tunes a Worker. Zero fields take the defaults given.
type Config struct {
	Owner   string        // claim owner; required, unique per process
	Workers int           // parallel deliveries; default 2
	Batch   int           // rows claimed at once; default 16
	Lease   time.Duration // claim lease; default 2m
	Poll    time.Duration // idle poll interval; default 1s
}

// Worker delivers outbox rows.
type Worker struct {
	cfg       Config
	st        Store
	kg        KG
	log       *slog.Logger
	delivered *prometheus.CounterVec
	failures  *prometheus.CounterVec
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
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	w := &Worker{cfg: cfg, st: st, kg: kg, log: logger,
		delivered: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kgsearch", Subsystem: "crawler",
			Name: "outbox_delivered_total", Help: "Outbox rows delivered to kg, by kind."}, []string{"kind"}),
		failures: prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "kgsearch", Subsystem: "crawler",
			Name: "outbox_failures_total", Help: "Failed outbox deliveries (retried later), by kind."}, []string{"kind"}),
	}
	if reg != nil {
		reg.MustRegister(w.delivered, w.failures)
	}
	return w
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

// DeliverOnce claims and delivers the due rows once (tests, tools); it
// returns how many were delivered and how many failed.
func (w *Worker) DeliverOnce(ctx context.Context) (delivered, failed int, err error) {
	items, err := w.st.ClaimOutbox(ctx, w.cfg.Owner, w.cfg.Batch, w.cfg.Lease)
	if err != nil {
		return 0, 0, err
	}
	for _, it := range items {
		if w.deliver(ctx, it) {
			delivered++
		} else {
			failed++
		}
	}
	return delivered, failed, nil
}

// DeliverTimeout bounds one delivery to kg. kg gives the ingest of a large
// document up to eight times its graph timeout (8 s by default), so the kg client
// of the outbox must wait that long too: with the kgapi client's default 10 s, a
// 500-chunk page timed out at every attempt and never reached the graph.
const DeliverTimeout = 90 * time.Second

func (w *Worker) deliver(ctx context.Context, it store.OutboxItem) bool {
	cctx, cancel := context.WithTimeout(ctx, DeliverTimeout)
	defer cancel()
	err := w.send(cctx, it)
	if err == nil {
		if err := w.retryStore(ctx, func(ctx context.Context) error { return w.st.AckOutbox(ctx, it.ID, w.cfg.Owner) }); err != nil {
			w.log.Warn("ack outbox", "id", it.ID, "err", err)
		}
		w.delivered.WithLabelValues(it.Kind).Inc()
		return true
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
		return false
	}
	var se *kgapi.StatusError
	if errors.As(err, &se) {
		w.log.Error("kg refused outbox row", "id", it.ID, "kind", it.Kind, "document", it.DocumentID, "attempts", it.Attempts, "retry_at", next, "err", err)
	} else if it.Attempts <= 1 {
		w.log.Warn("kg unavailable, outbox row kept for retry", "id", it.ID, "kind", it.Kind, "document", it.DocumentID, "attempts", it.Attempts, "retry_at", next, "err", err)
	} else {
		w.log.Debug("kg still unavailable", "id", it.ID, "kind", it.Kind, "attempts", it.Attempts, "retry_at", next, "err", err)
	}
	return false
}

func (w *Worker) send(ctx context.Context, it store.OutboxItem) error {
	switch it.Kind {
	case store.OutboxUpsert:
		var doc kgapi.Document
		if err := json.Unmarshal(it.Payload, &doc); err != nil {
			return fmt.Errorf("decode outbox payload %d: %w", it.ID, err)
		}
		_, err := w.kg.Ingest(ctx, doc)
		return err
	case store.OutboxDelete:
		p, err := it.DeletePayload()
		if err != nil {
			return err
		}
		return w.kg.DeleteDocument(ctx, p.ID)
	default:
		return fmt.Errorf("outbox row %d has unknown kind %q", it.ID, it.Kind)
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
