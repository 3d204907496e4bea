// Package app wires the crawler service together from its configuration:
// embedder, MariaDB store, fetcher behind the SSRF guard, chunker, pipeline,
// crawl engine, kg outbox worker and the HTTP API, and runs them until the
// context ends.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"

	"golang.org/x/sync/errgroup"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/openapi"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/api"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/config"
	"github.com/kgsearch/kgsearch/services/crawler/internal/engine"
	"github.com/kgsearch/kgsearch/services/crawler/internal/outbox"
)

// Run starts the crawler and blocks until ctx is cancelled or a part fails.
func Run(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	// Until the service is built, /readyz answers 503 with what it is waiting for.
	boot, err := httpserver.Starting(cfg.Addr, "crawler", cfg.APIKeys, logger)
	if err != nil {
		return err
	}
	defer boot.Stop()
	boot.Set("loading the embedding model")
	embedder, model, err := embed.Start(ctx, cfg.Embed, logger)
	if err != nil {
		return err
	}
	defer embedder.Close()

	boot.Set("connecting to MariaDB")
	// Wait for MariaDB as long as it takes (0): a crawler started during an
	// outage comes up when the database does, as kg does with Neo4j.
	st, err := store.OpenRetry(ctx, store.Config{DSN: cfg.MariaDBDSN, Model: store.Model{Name: model.Name, Dims: model.Dims}}, logger,
		0, boot.WaitingFor("MariaDB (KGS_MARIADB_DSN)"))
	if err != nil {
		return fmt.Errorf("open MariaDB (KGS_MARIADB_DSN): %w", err)
	}
	defer st.Close()

	// One SSRF guard: the fetcher dials through it, the engine checks URLs
	// with it before queueing them.
	parts, err := NewPageParts(cfg, st, embedder)
	if err != nil {
		return err
	}

	srv := httpserver.New("crawler", cfg.HTTP(), logger)
	copts := canon.DefaultOptions()
	copts.StripWWW = cfg.StripWWW
	eng := engine.New(engine.Config{
		JobSlots: cfg.JobSlots, Workers: cfg.Concurrency, Lease: cfg.Lease,
		Limits: engine.Limits{MaxPages: cfg.MaxPagesCap, MaxDepth: cfg.MaxDepthCap}, Canon: copts,
	}, engine.Deps{Store: st, Fetcher: parts.Fetcher, Guard: parts.Guard, Indexer: parts.Pipe}, logger, srv.Registry())
	capi := api.New(srv, api.Deps{Crawls: eng, Pages: eng, Jobs: st, Documents: st, Blocklist: st, BlocklistChanged: eng.InvalidateBlocklist})
	capi.StoreTimeout = cfg.StoreTimeout
	capi.Register()
	if err := openapi.Mount(srv.Engine(), "crawler", api.OpenAPI); err != nil {
		return err
	}
	srv.AddReadyCheck("mariadb", st.Ping)
	var ob *outbox.Worker
	if cfg.OutboxWorkers > 0 {
		kg := kgapi.NewClient(cfg.KGURL, &http.Client{Timeout: outbox.DeliverTimeout}, cfg.KGAPIKey)
		ob = outbox.New(outbox.Config{Owner: eng.Owner() + "-outbox", Workers: cfg.OutboxWorkers, Poll: cfg.OutboxPoll}, st, kg, logger, srv.Registry())
		// Parked rows (documents kg refused) show on /readyz without making the crawler unready.
		srv.AddInfoCheck("kg_outbox", ob.ParkedCheck)
	}
	srv.SetReady(true)

	boot.Stop()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(gctx) })
	g.Go(func() error { return eng.Run(gctx) })
	if ob != nil {
		g.Go(func() error { return ob.Run(gctx) })
	}
	return g.Wait()
}
