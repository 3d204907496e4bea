// Package app wires the kg service together from its configuration: the
// extractor with its corpus learner, the Neo4j graph store, the service's logic
// (entitygraph), the HTTP API and the background work (schema set-up while Neo4j
// is not reachable yet, the learner's saver, the live gazetteer refresh), and
// runs them until the context ends.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/graph/profile"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/openapi"
	"github.com/kgsearch/kgsearch/services/kg/internal/api"
	"github.com/kgsearch/kgsearch/services/kg/internal/config"
	"github.com/kgsearch/kgsearch/services/kg/internal/corpus"
	"github.com/kgsearch/kgsearch/services/kg/internal/entitygraph"
	"github.com/kgsearch/kgsearch/services/kg/internal/projection"
)

// Parts are the service's components, built by Build and run by Run.
type Parts struct {
	Server *httpserver.Server
	Graph  *entitygraph.Service
	Store  *graph.Store
	// Access is how the service reaches the graph: the Store, with match, expand
	// and the entity list served by the projection when KG_PROJECTION is on.
	Access    projection.Backend
	Follower  *projection.Follower // nil when KG_PROJECTION is off
	Extractor *extract.Extractor
	Learner   *extract.Learner
	Profiles  *profile.Store
	cfg       config.Config
	log       *slog.Logger
}

// Build creates the components without contacting Neo4j (it may be down).
func Build(cfg config.Config, logger *slog.Logger) (*Parts, error) {
	learner, err := corpus.LoadLearner(cfg.LearnerFile, extract.LearnerConfig{}, logger)
	if err != nil {
		return nil, fmt.Errorf("KG_LEARNER_FILE: %w", err)
	}
	x, err := extract.New(
		extract.WithLearner(learner),
		extract.WithCooccurrence(cfg.CooccurMinSupport, cfg.CooccurMinNPMI),
		extract.WithMinConfidence(cfg.MinConfidence),
		extract.WithMaxChunkBytes(cfg.MaxChunkBytes),
		extract.WithMaxDocumentPairs(cfg.MaxRelations),
	)
	if err != nil {
		return nil, fmt.Errorf("start extractor: %w", err)
	}
	st, err := graph.New(graph.Config{
		URI: cfg.Neo4jURI, User: cfg.Neo4jUser, Password: cfg.Neo4jPassword, Database: cfg.Neo4jDatabase, Logger: logger,
		MaxRetryTime: cfg.Neo4jRetry,
	})
	if err != nil {
		return nil, fmt.Errorf("start graph store (KGS_NEO4J_*): %w", err)
	}
	// One connection attempt before anything runs concurrently: the driver
	// (v5.28.4) initialises its dialer lazily on the first Connect without a lock,
	// and concurrent first connections (a /readyz probe and EnsureSchema) race on it
	// (found by -race). The outcome does not matter; Background retries.
	pctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	if err := st.Ping(pctx); err != nil {
		logger.Warn("neo4j not reachable yet", "uri", cfg.Neo4jURI, "err", err)
	}
	cancel()
	srv := httpserver.New("kg", cfg.HTTP(), logger)
	profiles := profile.New()
	var access projection.Backend = st
	var follower *projection.Follower
	if cfg.Projection {
		follower = &projection.Follower{P: projection.New(), Src: st, Log: logger,
			Every: cfg.ProjectionPoll, MinReload: cfg.ProjectionMinReload}
		access = &projection.Graph{Backend: st, F: follower, Log: logger}
	}
	svc := entitygraph.New(entitygraph.Limits{
		MaxChunkBytes: cfg.MaxChunkBytes, MaxChunks: cfg.MaxChunks, MaxLinks: cfg.MaxLinks, MaxQueryBytes: cfg.MaxQueryBytes,
		MaxRelations: cfg.MaxRelations,
		GraphTimeout: cfg.GraphTimeout,
	}, entitygraph.Deps{Extractor: x, Learner: learner, Writer: access, Reader: access, Lookup: access, Logger: logger,
		Profiles: profiles, ProfileSource: st})
	srv.Registry().MustRegister(svc.Collectors()...)
	api.New(srv, api.Deps{Ingest: svc, Query: svc, Browse: svc}).Register()
	if err := openapi.Mount(srv.Engine(), "kg", api.OpenAPI); err != nil {
		return nil, err
	}
	srv.AddReadyCheck("neo4j", st.Ping)
	return &Parts{Server: srv, Graph: svc, Store: st, Access: access, Follower: follower, Extractor: x, Learner: learner, Profiles: profiles, cfg: cfg, log: logger}, nil
}

// Run serves until ctx is cancelled, then saves the learner and closes the store.
func Run(ctx context.Context, cfg config.Config, logger *slog.Logger) error {
	// Until the service is built, /readyz answers 503 with what it is waiting for.
	boot, err := httpserver.Starting(cfg.Addr, "kg", cfg.APIKeys, logger)
	if err != nil {
		return err
	}
	defer boot.Stop()
	boot.Set("loading the extractor and the corpus learner, connecting to Neo4j")
	p, err := Build(cfg, logger)
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := p.Store.Close(cctx); err != nil {
			logger.Warn("close graph store", "err", err)
		}
	}()

	boot.Stop()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return p.Server.Run(gctx) })
	g.Go(func() error { return p.Background(gctx) })
	g.Go(func() error {
		return corpus.Saver{Path: cfg.LearnerFile, Learner: p.Learner, Interval: cfg.LearnerSave, Changes: p.Graph.Changes, Logger: logger}.Run(gctx)
	})
	return g.Wait()
}

// Background sets up the graph schema, retrying while Neo4j is not reachable,
// loads the graph projection (or warms Neo4j up when it is off), marks the
// service ready, then follows the graph's change feed and refreshes the live
// gazetteer and prunes the feed periodically.
func (p *Parts) Background(ctx context.Context) error {
	wait := time.Second
	for {
		sctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		err := p.Store.EnsureSchema(sctx)
		cancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil
		}
		p.log.Warn("graph schema not ready, retrying (is Neo4j running? see KGS_NEO4J_URI)", "retry_in", wait.String(), "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 30*time.Second)
	}
	if p.Follower != nil {
		followed := make(chan struct{})
		go func() { defer close(followed); _ = p.Follower.Run(ctx) }() // its first sync loads the snapshot
		defer func() { <-followed }()                                  // Run ends with ctx
		p.awaitProjection(ctx)
	} else {
		p.warmUp(ctx)
	}
	p.loadProfiles(ctx)
	p.Graph.SetReady(true)
	p.Server.SetReady(true)
	p.log.Info("graph ready")
	p.refresh(ctx)
	var gazetteer, prune <-chan time.Time
	if p.cfg.GazetteerEvery > 0 {
		t := time.NewTicker(p.cfg.GazetteerEvery)
		defer t.Stop()
		gazetteer = t.C
	}
	if p.Follower != nil {
		t := time.NewTicker(pruneEvery)
		defer t.Stop()
		prune = t.C
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-gazetteer:
			p.refresh(ctx)
		case <-prune:
			p.prune(ctx)
		}
	}
}

// pruneEvery is how often a kg process prunes the graph's change feed.
const pruneEvery = 10 * time.Minute

// awaitProjection waits up to KG_PROJECTION_READY_WAIT for the projection's
// first load before the service reports ready, so that the first searches are
// answered from memory rather than by a cold Neo4j. A larger graph takes longer:
// the service then becomes ready answering from Neo4j until the load completes.
func (p *Parts) awaitProjection(ctx context.Context) {
	deadline := time.Now().Add(p.cfg.ProjectionReadyWait)
	for !p.Follower.P.Loaded() && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
	if !p.Follower.P.Loaded() {
		p.log.Info("graph projection still loading; answering from Neo4j meanwhile", "waited", p.cfg.ProjectionReadyWait.String())
	}
}

// prune removes graph changes older than KG_FEED_RETAIN from the feed.
func (p *Parts) prune(ctx context.Context) {
	pctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	n, err := p.Store.PruneChanges(pctx, time.Now().Add(-p.cfg.FeedRetain), 10000)
	if err != nil {
		p.log.Warn("graph change feed not pruned", "err", err)
		return
	}
	if n > 0 {
		p.log.Info("graph change feed pruned", "removed", n)
	}
}

// warmUp runs the match and expand queries once on frequent entities before the
// service reports ready: right after Neo4j starts, its page cache and query plans are
// cold and the first searches' kg calls overran search's expansion budget (17 of 44
// answers degraded in the first pass of an evaluation, none in the second). Failures
// are logged only; an empty graph has nothing to warm.
func (p *Parts) warmUp(ctx context.Context) {
	start := time.Now()
	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	top, err := p.Store.EntitiesByPrefix(wctx, "", "", 50)
	if err != nil || len(top) == 0 {
		if err != nil {
			p.log.Warn("graph warm-up skipped", "err", err)
		}
		return
	}
	ids := make([]string, 0, len(top))
	for _, e := range top {
		ids = append(ids, e.ID)
	}
	for i := 0; i < len(ids); i += 5 {
		batch := ids[i:min(i+5, len(ids))]
		if _, err := p.Store.MatchEntities(wctx, batch, 100); err != nil {
			p.log.Warn("graph warm-up match", "err", err)
			return
		}
		for hops := 1; hops <= 2; hops++ {
			if _, err := p.Store.Expand(wctx, graph.ExpandQuery{EntityIDs: batch, MaxHops: hops}); err != nil {
				p.log.Warn("graph warm-up expand", "err", err)
				return
			}
		}
	}
	p.log.Info("graph warmed up", "entities", len(ids), "took_ms", time.Since(start).Milliseconds())
}

func (p *Parts) refresh(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	n, err := corpus.RefreshGazetteer(rctx, p.Access, p.Extractor, p.cfg.GazetteerSize, p.cfg.GazetteerMinDoc)
	if err != nil {
		p.log.Warn("live gazetteer not refreshed", "err", err)
		return
	}
	p.log.Debug("live gazetteer refreshed", "added", n)
}

// profileReload is how often the entity profiles are reloaded from Neo4j, which
// brings in what other kg processes wrote (this process's own writes apply at once).
const profileReload = 2 * time.Minute

// loadProfiles loads the documents' entity profiles before the service reports
// ready, then keeps them reloaded in the background. A failed first load is retried
// by the reloads; until one succeeds, feedback answers 503.
func (p *Parts) loadProfiles(ctx context.Context) {
	start := time.Now()
	if err := p.Profiles.Load(ctx, p.Store); err != nil {
		p.log.Warn("entity profiles not loaded; retrying in the background", "err", err)
	} else {
		d, e := p.Profiles.Size()
		p.log.Info("entity profiles loaded", "documents", d, "entities", e, "took_ms", time.Since(start).Milliseconds())
	}
	go p.Profiles.Keep(ctx, p.Store, profileReload, p.log)
}
