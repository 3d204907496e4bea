// Command kgregraph rebuilds the knowledge graph from the stored documents: it
// re-delivers every document in MariaDB to the kg service, re-extracting each page
// exactly as the crawl did (same chunks and chunk ids, code spans and links), so kg
// ingests it with its current extractor. Nothing is embedded and the store is not
// written. Use it after an extractor change (`make regraph`).
//
// Configuration is the crawler's (KGS_MARIADB_DSN, KGS_KG_URL, KGS_EMBED_*,
// CRAWLER_CHUNK_TOKENS, CRAWLER_CHUNK_OVERLAP, CRAWLER_ALLOW_HOSTS, …; see the
// crawler README). Flags: -domain (only that site), -workers, -dry-run (check
// that every page still matches the store, send nothing). It prints a JSON
// report and exits 1 when a document failed, 0 otherwise (pages that changed since
// they were stored are listed and skipped: recrawl them).
//
// The outbox's parked rows (documents kg refused for good: 400, 413, 422) are
// handled here too, without the embedder or a fetch: -parked lists them with kg's
// reason, -requeue-parked makes them due again so the running crawler delivers
// them (after kg was fixed, e.g. its body limit raised).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/envconf"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/app"
	"github.com/kgsearch/kgsearch/services/crawler/internal/config"
	"github.com/kgsearch/kgsearch/services/crawler/internal/outbox"
	"github.com/kgsearch/kgsearch/services/crawler/internal/regraph"
)

func main() {
	domain := flag.String("domain", "", "only re-deliver documents of this domain (e.g. 127.0.0.1)")
	workers := flag.Int("workers", 2, "documents in flight")
	dry := flag.Bool("dry-run", false, "rebuild and check every payload (same content and chunks as stored), send nothing")
	listParked := flag.Bool("parked", false, "list the outbox rows kg refused for good (parked), with kg's reason; send nothing")
	requeue := flag.Bool("requeue-parked", false, "make the parked outbox rows due again; the running crawler delivers them")
	flag.Parse()
	var err error
	if *listParked || *requeue {
		err = parked(*requeue)
	} else {
		err = run(regraph.Options{Domain: *domain, Workers: *workers, DryRun: *dry})
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "kgregraph: %v\n", err)
		os.Exit(1)
	}
}

// setup reads the crawler's configuration from the environment and returns it with
// a JSON logger at its level and a context that ends on an interrupt or SIGTERM.
func setup() (config.Config, *slog.Logger, context.Context, context.CancelFunc, error) {
	cfg, err := config.FromEnv(envconf.New())
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		return cfg, nil, nil, nil, fmt.Errorf("bad configuration:\n%w", err)
	}
	logger := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: cfg.LogLevel}))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	return cfg, logger, ctx, stop, nil
}

func run(opt regraph.Options) error {
	cfg, logger, ctx, stop, err := setup()
	if err != nil {
		return err
	}
	defer stop()

	// The embedder is only asked for its model: the content hash that tells an
	// unchanged page includes the model name, and the store checks it.
	embedder, model, err := embed.Start(ctx, cfg.Embed, logger)
	if err != nil {
		return err
	}
	defer embedder.Close()
	st, err := store.Open(ctx, store.Config{DSN: cfg.MariaDBDSN, Model: store.Model{Name: model.Name, Dims: model.Dims}}, logger)
	if err != nil {
		return fmt.Errorf("open MariaDB (KGS_MARIADB_DSN): %w", err)
	}
	defer st.Close()
	parts, err := app.NewPageParts(cfg, st, embedder)
	if err != nil {
		return err
	}
	kg := kgapi.NewClient(cfg.KGURL, &http.Client{Timeout: outbox.DeliverTimeout}, cfg.KGAPIKey)

	rep, err := regraph.Run(ctx, st, parts.Fetcher, parts.Pipe, kg, opt, logger)
	out, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Println(string(out))
	if err != nil {
		return err
	}
	if len(rep.Failed) > 0 {
		return fmt.Errorf("%d of %d documents failed", len(rep.Failed), rep.Documents)
	}
	return nil
}

// parkedRow is a parked outbox row in the report.
type parkedRow struct {
	ID         int64     `json:"id"`
	Kind       string    `json:"kind"`
	DocumentID string    `json:"document_id"`
	Status     int       `json:"status"`
	Reason     string    `json:"reason"`
	ParkedAt   time.Time `json:"parked_at"`
	Attempts   int       `json:"attempts"`
	CreatedAt  time.Time `json:"created_at"`
}

// parked lists the parked outbox rows and, with requeue, makes them due again.
// It needs MariaDB only.
func parked(requeue bool) error {
	cfg, logger, ctx, stop, err := setup()
	if err != nil {
		return err
	}
	defer stop()
	st, err := store.Open(ctx, store.Config{DSN: cfg.MariaDBDSN}, logger)
	if err != nil {
		return fmt.Errorf("open MariaDB (KGS_MARIADB_DSN): %w", err)
	}
	defer st.Close()
	items, err := st.ParkedOutbox(ctx, 10000)
	if err != nil {
		return err
	}
	rep := struct {
		Parked   []parkedRow `json:"parked"`
		Requeued *int64      `json:"requeued,omitempty"`
	}{Parked: make([]parkedRow, 0, len(items))}
	for _, it := range items {
		rep.Parked = append(rep.Parked, parkedRow{ID: it.ID, Kind: it.Kind, DocumentID: it.DocumentID, Status: it.ParkedStatus,
			Reason: it.ParkedReason, ParkedAt: it.ParkedAt, Attempts: it.Attempts, CreatedAt: it.CreatedAt})
	}
	if requeue {
		n, err := st.RequeueOutbox(ctx)
		if err != nil {
			return err
		}
		rep.Requeued = &n
	}
	out, _ := json.MarshalIndent(rep, "", "  ")
	fmt.Println(string(out))
	return nil
}
