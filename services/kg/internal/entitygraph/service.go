package entitygraph

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/graph/profile"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
)

// Writer changes the durable graph (*graph.Store).
type Writer interface {
	UpsertDocument(ctx context.Context, d graph.Doc) (graph.UpsertResult, error)
	DeleteDocument(ctx context.Context, id string) error
}

// Reader answers the per-query reads of match and expand: the chunks that mention
// entities, and the entities around them. *graph.Store answers from Neo4j; an
// in-memory projection of the graph can take its place without other changes.
type Reader interface {
	MatchEntities(ctx context.Context, entityIDs []string, limit int) (graph.MatchResult, error)
	Expand(ctx context.Context, q graph.ExpandQuery) (graph.ExpandResult, error)
}

// Lookup answers the browsing reads: autocomplete, one entity, counts (*graph.Store).
type Lookup interface {
	EntitiesByPrefix(ctx context.Context, prefix, typ string, limit int) ([]graph.EntityStats, error)
	Entity(ctx context.Context, id string) (graph.EntityDetail, error)
	Stats(ctx context.Context) (graph.Stats, error)
}

// Limits bound what one request may carry.
type Limits struct {
	MaxChunkBytes int // text of one chunk
	MaxChunks     int // chunks of one document
	MaxLinks      int // links of one document
	// MaxRelations bounds the relations one document writes (0: no bound): the
	// strongest are kept. An index page naming thousands of entities gives
	// hundreds of thousands of co-occurrences, a write that does not fit in
	// Neo4j's transaction memory or the graph timeout, so the document never
	// reached the graph.
	MaxRelations  int
	MaxQueryBytes int // text of a parse request
	// GraphTimeout bounds each call's graph work (0: 8s), so a client with a 10 s
	// timeout hears 503 rather than nothing while Neo4j is unreachable.
	GraphTimeout time.Duration
}

// Request limits that are not configurable.
const (
	maxIDBytes    = 1024 // document, chunk and entity ids (the graph's limit)
	maxNameBytes  = 512  // entity names in match/expand requests and prefixes
	maxURLBytes   = 8192
	maxTitleBytes = 64 << 10
	maxQueryNames = 256 // entities per match/expand request (the graph's limit)
	// DefaultLimit is the number of results when a request gives no limit.
	DefaultLimit    = 20
	maxMatchLimit   = 1000
	maxExpandLimit  = 1000
	maxListLimit    = kgapi.MaxEntityList
	matchWindowMult = 4
	minMatchWindow  = 100
)

// ErrStarting is returned by every graph operation before SetReady(true): the
// graph schema is not in place yet (Neo4j not reachable at start).
var ErrStarting = errors.New("graph schema not initialised yet")

// Deps are the Service's collaborators.
type Deps struct {
	Extractor *extract.Extractor
	Learner   *extract.Learner // the extractor's learner, or nil when it has none
	Writer    Writer
	Reader    Reader
	Lookup    Lookup
	Logger    *slog.Logger
	// Profiles answers Feedback and is kept current by Ingest and DeleteDocument,
	// reading from ProfileSource; nil: Feedback returns ErrStarting.
	Profiles      Profiles
	ProfileSource profile.Source
}

// Service is the kg service's logic. Its methods take and return the kgapi
// contract types; bad input is a *fielderr.Error naming the request field, and
// graph failures are returned wrapped (graph.ErrUnavailable, ErrNotFound, ...).
type Service struct {
	lim      Limits
	d        Deps
	relTypes map[string]bool
	ready    atomic.Bool
	changes  atomic.Int64 // ingests and deletes, for the learner's saver

	ingestChunks prometheus.Counter
	ingestDocs   *prometheus.CounterVec
}

// New builds the Service. Call SetReady once the graph schema exists; until then
// graph operations return ErrStarting.
func New(lim Limits, d Deps) *Service {
	s := &Service{lim: lim, d: d, relTypes: map[string]bool{}}
	for _, t := range extract.RelationTypes() {
		s.relTypes[t] = true
	}
	s.ingestChunks = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "kgsearch", Subsystem: "kg", Name: "ingest_chunks_total", Help: "Chunks ingested into the graph.",
	})
	s.ingestDocs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "kgsearch", Subsystem: "kg", Name: "ingest_documents_total", Help: "Documents ingested, by result.",
	}, []string{"result"})
	return s
}

// Collectors are the Service's metrics, for the server's registry.
func (s *Service) Collectors() []prometheus.Collector {
	return []prometheus.Collector{s.ingestChunks, s.ingestDocs}
}

// SetReady says whether the graph schema is in place.
func (s *Service) SetReady(v bool) { s.ready.Store(v) }

// Changes counts the ingests and deletes served so far; the learner's saver
// compares it between saves.
func (s *Service) Changes() int64 { return s.changes.Load() }

// graphCtx bounds ctx by the graph timeout, or fails with ErrStarting before the
// schema exists.
func (s *Service) graphCtx(ctx context.Context) (context.Context, context.CancelFunc, error) {
	return s.graphCtxScaled(ctx, 1)
}

// graphCtxScaled is graphCtx with scale times the graph timeout.
func (s *Service) graphCtxScaled(ctx context.Context, scale int) (context.Context, context.CancelFunc, error) {
	if !s.ready.Load() {
		return nil, nil, ErrStarting
	}
	d := s.lim.GraphTimeout
	if d <= 0 {
		d = 8 * time.Second
	}
	ctx, cancel := context.WithTimeout(ctx, d*time.Duration(max(scale, 1)))
	return ctx, cancel, nil
}

// Ingest budgets: one graph timeout per IngestChunksPerTimeout chunks of the
// document, at most MaxIngestScale timeouts. Clients that ingest large documents
// (the crawler's outbox) wait at least MaxIngestScale times KG_GRAPH_TIMEOUT.
const (
	IngestChunksPerTimeout = 100
	MaxIngestScale         = 8
)

// ingestScale is how many graph timeouts the ingest of a document of n chunks gets.
func ingestScale(n int) int {
	return min(max(1, (n+IngestChunksPerTimeout-1)/IngestChunksPerTimeout), MaxIngestScale)
}
