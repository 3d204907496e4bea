// Package app wires the search service together from its configuration: embedder,
// MariaDB store, Bleve BM25 index and its change-feed indexer, query parser with the
// live gazetteer, kg client, ranker, pipeline and HTTP API, and runs them until the
// context ends. Reindex is the offline rebuild behind the -reindex flag.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"

	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/openapi"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/admission"
	"github.com/kgsearch/kgsearch/services/search/internal/api"
	"github.com/kgsearch/kgsearch/services/search/internal/bm25"
	"github.com/kgsearch/kgsearch/services/search/internal/chunkcache"
	"github.com/kgsearch/kgsearch/services/search/internal/config"
	"github.com/kgsearch/kgsearch/services/search/internal/entities"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
	"github.com/kgsearch/kgsearch/services/search/internal/tokens"
	"github.com/kgsearch/kgsearch/services/search/internal/web"
)

// Run starts the search service and blocks until ctx is cancelled or a part fails.
func Run(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	// Until the service is built, /readyz answers 503 with what it is waiting for.
	boot, err := httpserver.Starting(cfg.Addr, "search", cfg.APIKeys, logger)
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
	// The service waits for MariaDB as long as it takes (kg waits for Neo4j the
	// same way): started during an outage, it comes up when the database does.
	st, err := openStore(ctx, cfg, store.Model{Name: model.Name, Dims: model.Dims}, logger, 0,
		boot.WaitingFor("MariaDB (KGS_MARIADB_DSN)"))
	if err != nil {
		return err
	}
	boot.Set("opening the BM25 index")
	defer st.Close()

	ix, err := openIndex(ctx, cfg.IndexDir, st, logger)
	if err != nil {
		return err
	}
	defer ix.Close()

	srv := httpserver.New("search", cfg.HTTP(), logger)
	lag := prometheus.NewGauge(prometheus.GaugeOpts{Namespace: "kgsearch", Subsystem: "search", Name: "index_lag",
		Help: "Changes in the store not yet applied to the BM25 index (store seq - index watermark)."})
	srv.Registry().MustRegister(lag)
	// Hydration reads chunk rows through a cache that follows the index's change feed.
	var chunks pipeline.Store = st
	icfg := indexer.Config{Interval: cfg.SyncInterval}
	var cache *chunkcache.Cache
	if cfg.ChunkCache > 0 {
		cache = chunkcache.New(st, cfg.ChunkCache)
		chunks, icfg.OnChange = chunkcache.Wrap(st, cache), cache.Forget
	}
	idx := indexer.New(st, ix, icfg, logger, func(n int64) { lag.Set(float64(n)) })
	srv.Registry().MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "kgsearch", Subsystem: "search",
		Name: "index_watermark", Help: "Last change sequence number applied to the BM25 index."},
		func() float64 { return float64(ix.Watermark()) }))

	finder, err := entities.NewFinder()
	if err != nil {
		return err
	}
	kg := kgapi.NewClient(cfg.KGURL, kgHTTPClient(), cfg.KGAPIKey)
	rk, err := ranker.New(ranker.Options{PreviewChars: cfg.PreviewChars})
	if err != nil {
		return fmt.Errorf("start ranker: %w", err)
	}
	tc, err := tokens.New()
	if err != nil {
		return err
	}
	po := cfg.PipelineOptions()
	po.Tokens = tc.Count
	pipe := pipeline.New(queryparse.New(finder), embedder, chunks, kg, ix, idx, rk, po, logger, pipeline.NewMetrics(srv.Registry()))
	// Every search, from the API, the MCP tool (through the API) and the web pages,
	// passes admission control first.
	limited := admission.Limited{Next: pipe, L: admission.New(cfg.AdmissionOptions(), srv.Registry())}

	api.New(srv, api.Deps{
		Search: limited, Index: idx, KG: kg, Reindex: api.ReindexFunc(func(ctx context.Context) error {
			err := ix.Rebuild(ctx, indexer.Fill(st, logger))
			if cache != nil {
				cache.Clear() // the rebuilt index skipped the feed's changes up to its watermark
			}
			return err
		}),
		// No file system paths: the status is public with KGS_PUBLIC_SEARCH; the
		// index directory is in the start-up log.
		Info: map[string]any{"model": model.Name, "dims": model.Dims},
	}).Register()
	// One client of the crawler's API for the MCP tools and the pages; the pages
	// bound each call by their own timeout.
	crawler := apiclient.NewCrawler(cfg.CrawlerURL, nil, cfg.CrawlerAPIKey)
	MountMCP(srv, kg, crawler, cfg.APIKeys, logger)
	if err := openapi.Mount(srv.Engine(), "search", api.OpenAPI); err != nil {
		return err
	}
	pages, err := web.New(web.Deps{Search: limited, Chunks: st, Docs: idx, Graph: kg,
		Crawler: crawler, APIKeys: cfg.APIKeys, PrivateReads: !cfg.PublicSearch, Logger: logger})
	if err != nil {
		return err
	}
	pages.Register(srv.Engine())
	srv.SetNotFoundPage(pages.NotFoundPage)
	srv.SetErrorPage(pages.ErrorPage)
	srv.AddReadyCheck("mariadb", st.Ping)
	// Search answers without kg (graph signal dropped, reported as degraded), so kg
	// is reported by /readyz but does not make the service unready.
	srv.AddInfoCheck("kg", kg.Ready)
	srv.AddReadyCheck("index", func(context.Context) error {
		_, err := ix.DocCount()
		return err
	})
	srv.SetReady(true)

	boot.Stop()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return srv.Run(gctx) })
	g.Go(func() error { return idx.Run(gctx) })
	g.Go(func() error {
		finder.RunRefresh(gctx, kg, cfg.GazetteerRefresh, cfg.GazetteerLimit, logger)
		return nil
	})
	return g.Wait()
}

// kgHTTPClient is the HTTP client for kg calls. Each search makes up to three kg
// calls at once, and searches run concurrently: the default transport keeps only two
// idle connections per host, so under load most calls would open (and close) a new
// connection. The admission limit bounds how many are needed.
func kgHTTPClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 256
	t.MaxIdleConnsPerHost = 256
	return &http.Client{Timeout: 10 * time.Second, Transport: t}
}

// Reindex rebuilds the Bleve index at cfg.IndexDir from the store and returns. The
// service must not be running on the same directory (Bleve locks it; Open reports
// bm25.ErrLocked after 2 s).
func Reindex(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	st, err := openStore(ctx, cfg, store.Model{}, logger, time.Minute, nil)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := os.MkdirAll(filepath.Dir(cfg.IndexDir), 0o750); err != nil {
		return fmt.Errorf("create SEARCH_INDEX_DIR parent: %w", err)
	}
	// bm25.Rebuild swaps directories without opening the index; a running service
	// holding it would keep serving from unlinked files. Take its lock first to refuse.
	if _, err := os.Stat(cfg.IndexDir); err == nil {
		held, err := bm25.Open(cfg.IndexDir)
		if errors.Is(err, bm25.ErrLocked) {
			return fmt.Errorf("reindex %s: a running search service holds the index; stop it first (scripts/services.sh reindex does) or use POST /api/v1/admin/reindex: %w", cfg.IndexDir, err)
		}
		if err == nil {
			_ = held.Close()
		}
	}
	start := time.Now()
	if err := bm25.Rebuild(ctx, cfg.IndexDir, indexer.Fill(st, logger)); err != nil {
		return err
	}
	ix, err := bm25.Open(cfg.IndexDir)
	if err != nil {
		return fmt.Errorf("open rebuilt index: %w", err)
	}
	defer ix.Close()
	n, _ := ix.DocCount()
	logger.Info("reindex finished", "chunks", n, "watermark", ix.Watermark(), "took_ms", time.Since(start).Milliseconds())
	return nil
}

// openIndex opens the Bleve index, rebuilding it from the store when it cannot be
// opened (another mapping version, a damaged directory), unless another process holds it.
func openIndex(ctx context.Context, dir string, st *store.Store, logger *slog.Logger) (*bm25.Index, error) {
	if err := os.MkdirAll(filepath.Dir(dir), 0o750); err != nil {
		return nil, fmt.Errorf("create SEARCH_INDEX_DIR parent: %w", err)
	}
	ix, err := bm25.Open(dir)
	if err != nil && !errors.Is(err, bm25.ErrLocked) {
		// The index is derived from the store: one that cannot be opened (another
		// mapping version, a damaged directory) is rebuilt rather than fatal.
		logger.Warn("bm25 index unusable; rebuilding it from the store", "dir", dir, "err", err)
		if err := bm25.Rebuild(ctx, dir, indexer.Fill(st, logger)); err != nil {
			return nil, err
		}
		ix, err = bm25.Open(dir)
	}
	if errors.Is(err, bm25.ErrLocked) {
		return nil, fmt.Errorf("open bm25 index (SEARCH_INDEX_DIR=%s): another search process holds it: %w", dir, err)
	}
	if err != nil {
		return nil, fmt.Errorf("open bm25 index (SEARCH_INDEX_DIR=%s): %w", dir, err)
	}
	logger.Info("bm25 index open", "dir", dir)
	return ix, nil
}

// openStore opens MariaDB, retrying while it is not reachable (a stack starting
// up, a database down for a while) for at most wait (0: until ctx ends), and
// gives up with a clear error on a model mismatch.
func openStore(ctx context.Context, cfg config.Config, m store.Model, logger *slog.Logger, wait time.Duration, onWait func(error)) (*store.Store, error) {
	st, err := store.OpenRetry(ctx, store.Config{DSN: cfg.MariaDBDSN, Model: m, EfSearch: cfg.EfSearch}, logger, wait, onWait)
	if err != nil {
		return nil, fmt.Errorf("open MariaDB (KGS_MARIADB_DSN): %w", err)
	}
	return st, nil
}
