package projection

import (
	"context"
	"log/slog"
	"time"

	"github.com/kgsearch/kgsearch/pkg/graph"
)

// Backend is the graph store the kg service uses (*graph.Store).
type Backend interface {
	UpsertDocument(ctx context.Context, d graph.Doc) (graph.UpsertResult, error)
	DeleteDocument(ctx context.Context, id string) error
	MatchEntities(ctx context.Context, entityIDs []string, limit int) (graph.MatchResult, error)
	Expand(ctx context.Context, q graph.ExpandQuery) (graph.ExpandResult, error)
	EntitiesByPrefix(ctx context.Context, prefix, typ string, limit int) ([]graph.EntityStats, error)
	Entity(ctx context.Context, id string) (graph.EntityDetail, error)
	Stats(ctx context.Context) (graph.Stats, error)
}

// Graph is the Backend with match, expand and the entity list served from the
// projection once it is loaded (from Neo4j before). Writes go to the Backend, and
// the follower then syncs at once, so that a process's own write is visible to its
// next query; other processes see it at their next poll.
type Graph struct {
	Backend
	F   *Follower
	Log *slog.Logger
}

// MatchEntities answers from the projection when it is loaded.
func (g *Graph) MatchEntities(ctx context.Context, entityIDs []string, limit int) (graph.MatchResult, error) {
	if g.F.P.Loaded() {
		return g.F.P.MatchEntities(ctx, entityIDs, limit)
	}
	return g.Backend.MatchEntities(ctx, entityIDs, limit)
}

// Expand answers from the projection when it is loaded.
func (g *Graph) Expand(ctx context.Context, q graph.ExpandQuery) (graph.ExpandResult, error) {
	if g.F.P.Loaded() {
		return g.F.P.Expand(ctx, q)
	}
	return g.Backend.Expand(ctx, q)
}

// EntitiesByPrefix answers from the projection when it is loaded.
func (g *Graph) EntitiesByPrefix(ctx context.Context, prefix, typ string, limit int) ([]graph.EntityStats, error) {
	if g.F.P.Loaded() {
		return g.F.P.EntitiesByPrefix(ctx, prefix, typ, limit)
	}
	return g.Backend.EntitiesByPrefix(ctx, prefix, typ, limit)
}

// UpsertDocument writes through the Backend, then syncs the projection.
func (g *Graph) UpsertDocument(ctx context.Context, d graph.Doc) (graph.UpsertResult, error) {
	res, err := g.Backend.UpsertDocument(ctx, d)
	if err == nil {
		g.follow(ctx)
	}
	return res, err
}

// DeleteDocument deletes through the Backend, then syncs the projection.
func (g *Graph) DeleteDocument(ctx context.Context, id string) error {
	err := g.Backend.DeleteDocument(ctx, id)
	if err == nil {
		g.follow(ctx)
	}
	return err
}

// follow syncs the projection after a write; a failure is only logged (the write
// succeeded, and the follower's loop retries).
func (g *Graph) follow(ctx context.Context) {
	if !g.F.P.Loaded() {
		return // the follower's loop loads it
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := g.F.Sync(sctx); err != nil && g.Log != nil {
		g.Log.Warn("graph projection not synced after a write; the follower retries", "err", err)
	}
}
