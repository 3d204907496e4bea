package api

import (
	"context"
	"encoding/json"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/engine"
)

// The API's seams: what the handlers need, declared here where they are used
// so that tests can put fakes in their place.

// Crawls are the crawl jobs as the engine runs them (engine.Engine).
type Crawls interface {
	Limits() engine.Limits
	CanonOptions() canon.Options
	CheckSeed(ctx context.Context, seed string) error
	Wake()
	Status(ctx context.Context, id string) (engine.Status, error)
	Subscribe(jobID string) (<-chan engine.Event, func())
}

// Pages indexes one page synchronously through the crawl's page step
// (engine.Engine).
type Pages interface {
	CrawlPage(ctx context.Context, rawURL string, tags []string) (engine.PageResult, error)
}

// Jobs is the job table (store.Store).
type Jobs interface {
	CreateJob(ctx context.Context, spec json.RawMessage, key string) (store.Job, error)
	ListJobs(ctx context.Context, status store.JobStatus, limit int) ([]store.Job, error)
	CancelJob(ctx context.Context, id string) (store.Job, error)
}

// Documents are the stored documents (store.Store).
type Documents interface {
	ListDocuments(ctx context.Context, o store.ListOptions) (store.DocumentPage, error)
	GetDocument(ctx context.Context, id string) (store.Document, error)
	DocumentChunks(ctx context.Context, documentID string) ([]store.Chunk, error)
	ChunksByIDs(ctx context.Context, ids []int64) ([]store.Chunk, error)
	DeleteDocument(ctx context.Context, id string, del *store.DeletePayload) (int64, error)
}

// Blocklist is the domain blocklist (store.Store); Invalidate tells the
// engine's cache that it changed (engine.Engine.InvalidateBlocklist).
type Blocklist interface {
	BlockedDomains(ctx context.Context) ([]store.BlockedDomain, error)
	BlockDomain(ctx context.Context, domain, reason string) (store.BlockedDomain, error)
	UnblockDomain(ctx context.Context, domain string) error
}

// Deps are the parts the handlers work with.
type Deps struct {
	Crawls    Crawls
	Pages     Pages
	Jobs      Jobs
	Documents Documents
	Blocklist Blocklist
	// BlocklistChanged is called after the blocklist changed (the engine
	// caches it); nil: nothing to tell.
	BlocklistChanged func()
}
