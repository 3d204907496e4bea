package engine

import (
	"context"
	"net/url"
	"time"

	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// The engine's seams: what it needs from the parts around it, declared here
// where they are used so that tests can put fakes in their place.

// Jobs is the job queue in MariaDB (store.Store).
type Jobs interface {
	ClaimJob(ctx context.Context, owner string, lease time.Duration) (store.Job, bool, error)
	HeartbeatJob(ctx context.Context, id, owner string, lease time.Duration, p store.JobProgress) (store.JobStatus, error)
	FinishJob(ctx context.Context, id, owner string, status store.JobStatus, p store.JobProgress) (store.Job, error)
	GetJob(ctx context.Context, id string) (store.Job, error)
}

// FrontierStore is the crawl frontier in MariaDB (store.Store): the URLs of
// each job with their state, claimed by the engines working the job.
type FrontierStore interface {
	EnqueueURLs(ctx context.Context, jobID string, urls []store.FrontierURL) (int, error)
	ClaimURLs(ctx context.Context, req store.ClaimRequest) ([]store.FrontierItem, error)
	CompleteURL(ctx context.Context, jobID, urlHash, owner string, state store.FrontierState, reason string) error
	FrontierCounts(ctx context.Context, jobID string) (store.FrontierCounts, error)
	FrontierReasons(ctx context.Context, jobID string) (map[store.FrontierState]map[string]int64, error)
	RequeueExpired(ctx context.Context, jobID string) (int64, error)
	ReleaseClaims(ctx context.Context, jobID, owner string) (int64, error)
	ReleaseClaimsExcept(ctx context.Context, jobID, owner string, keep []string) (int64, error)
	FrontierMissing(ctx context.Context, jobID string, urls []string) ([]string, error)
	FrontierStartURLs(ctx context.Context, jobID string) ([]string, error)
}

// Documents are the stored pages the engine reads and removes (store.Store);
// it writes them through the Indexer. DeleteDocumentInJob is DeleteDocument
// with the removal recorded in a job's frontier in the same transaction
// (prune).
type Documents interface {
	DocumentByURL(ctx context.Context, canonicalURL string) (store.Document, error)
	ListDocuments(ctx context.Context, o store.ListOptions) (store.DocumentPage, error)
	DeleteDocument(ctx context.Context, id string, del *store.DeletePayload) (int64, error)
	DeleteDocumentInJob(ctx context.Context, id string, del *store.DeletePayload, jobID, reason string) (int64, error)
}

// Blocklist is the domain blocklist (store.Store).
type Blocklist interface {
	BlockedDomains(ctx context.Context) ([]store.BlockedDomain, error)
}

// Store is everything the engine keeps in MariaDB (store.Store).
type Store interface {
	Jobs
	FrontierStore
	Documents
	Blocklist
}

// Fetcher fetches pages, robots.txt and sitemaps (fetch.Fetcher, which dials
// through the SSRF guard).
type Fetcher interface {
	Fetch(ctx context.Context, req fetch.Request) (*fetch.Response, error)
	RobotsSitemaps(ctx context.Context, site *url.URL) ([]string, error)
	Sitemap(ctx context.Context, urls []string, respectRobots bool, maxFiles, maxURLs int) ([]string, []error)
}

// Guard refuses URLs of internal addresses before they are queued or fetched
// (netguard.Guard: the same guard the fetcher dials through).
type Guard interface {
	CheckURL(u *url.URL) error
}

// Indexer chunks, embeds and stores an extracted page with its kg outbox row
// (pipeline.Pipeline).
type Indexer interface {
	Index(ctx context.Context, p pipeline.Page) (pipeline.Result, error)
	// Retag gives an unchanged stored page new tags (pipeline.Pipeline.Retag).
	Retag(ctx context.Context, prev *store.Document, tags []string) (store.Document, string, error)
}

// Deps are the parts an Engine works with.
type Deps struct {
	Store   Store
	Fetcher Fetcher
	Guard   Guard // nil: no check before queueing (the fetcher still dials through its guard)
	Indexer Indexer
}
