package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/httpserver"
	"github.com/kgsearch/kgsearch/pkg/toon"
)

// Graph is what the API needs from the graph store (*graph.Store).
type Graph interface {
	UpsertDocument(ctx context.Context, d graph.Doc) (graph.UpsertResult, error)
	DeleteDocument(ctx context.Context, id string) error
	MatchEntities(ctx context.Context, entityIDs []string, limit int) (graph.MatchResult, error)
	Expand(ctx context.Context, q graph.ExpandQuery) (graph.ExpandResult, error)
	EntitiesByPrefix(ctx context.Context, prefix, typ string, limit int) ([]graph.EntityStats, error)
	Entity(ctx context.Context, id string) (graph.EntityDetail, error)
	Stats(ctx context.Context) (graph.Stats, error)
}

// Limits bound what one request may carry.
type Limits struct {
	MaxChunkBytes int // text of one chunk
	MaxChunks     int // chunks of one document
	MaxLinks      int // links of one document
	MaxQueryBytes int // text of a parse request
	// GraphTimeout bounds each request's graph work (0: 8s), so a client with a
	// 10 s timeout hears 503 rather than nothing while Neo4j is unreachable.
	GraphTimeout time.Duration
}

// Request limits that are not configurable.
const (
	maxIDBytes      = 1024 // document, chunk and entity ids (the graph's limit)
	maxNameBytes    = 512  // entity names in match/expand requests and prefixes
	maxURLBytes     = 8192
	maxTitleBytes   = 64 << 10
	maxQueryNames   = 256 // entities per match/expand request (the graph's limit)
	defaultLimit    = 20
	maxMatchLimit   = 1000
	maxExpandLimit  = 1000
	maxListLimit    = 1000
	matchWindowMult = 4
	minMatchWindow  = 100
)

// Service serves the kg API.
type Service struct {
	lim      Limits
	x        *extract.Extractor
	learner  *extract.Learner // nil when the extractor has none
	g        Graph
	log      *slog.Logger
	srv      *httpserver.Server
	relTypes map[string]bool
	ready    atomic.Bool
	changes  atomic.Int64 // ingests and deletes, for the learner's saver

	ingestChunks prometheus.Counter
	ingestDocs   *prometheus.CounterVec
}

// New builds the API. learner is the Learner attached to x (or nil). Call
// SetGraphReady once the graph schema exists; until then graph endpoints answer 503.
func New(lim Limits, x *extract.Extractor, learner *extract.Learner, g Graph, logger *slog.Logger) *Service {
	s := &Service{lim: lim, x: x, learner: learner, g: g, log: logger, relTypes: map[string]bool{}}
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

// Register mounts the routes on srv and registers the service's metrics.
func (s *Service) Register(srv *httpserver.Server) {
	s.srv = srv
	srv.Registry().MustRegister(s.ingestChunks, s.ingestDocs)
	// Match routes on the escaped path so an id holding "/" (sent as %2F, as the
	// kgapi client does) is one path parameter; parameters are unescaped.
	srv.Engine().UseRawPath = true
	srv.Engine().UnescapePathValues = true
	v1 := srv.API("/api/v1")
	v1.POST("/ingest", srv.Handle(s.ingest))
	v1.POST("/entities/match", srv.Handle(s.match))
	v1.POST("/expand/entities", srv.Handle(s.expand))
	v1.GET("/entities", srv.Handle(s.listEntities))
	v1.GET("/entities/:id", srv.Handle(s.entity))
	v1.GET("/stats", srv.Handle(s.stats))
	v1.DELETE("/documents/:id", srv.Handle(s.deleteDocument))
	v1.POST("/parse", srv.Handle(s.parse))
}

// SetGraphReady says whether the graph schema is in place.
func (s *Service) SetGraphReady(v bool) { s.ready.Store(v) }

// Changes counts the ingests and deletes served so far; the learner's saver
// compares it between saves.
func (s *Service) Changes() int64 { return s.changes.Load() }

// errStarting answers graph requests before the schema exists.
var errStarting = errors.New("graph schema not initialised yet")

// graphCtx is the request's context bounded by the graph timeout.
func (s *Service) graphCtx(c *gin.Context) (context.Context, context.CancelFunc) {
	d := s.lim.GraphTimeout
	if d <= 0 {
		d = 8 * time.Second
	}
	return context.WithTimeout(c.Request.Context(), d)
}

func (s *Service) needGraph() error {
	if !s.ready.Load() {
		return httpserver.Unavailable("the kg service is starting: the graph database (Neo4j) is not reachable or its schema is not initialised yet; retry later", errStarting)
	}
	return nil
}

// graphError maps a graph store error to what the client is told.
func graphError(err error) error {
	switch {
	case errors.Is(err, graph.ErrUnavailable), errors.Is(err, graph.ErrNoSchema):
		return httpserver.Unavailable("the graph database (Neo4j) is unavailable; retry later", err)
	case errors.Is(err, context.DeadlineExceeded):
		return httpserver.Timeout("the graph database (Neo4j) did not answer in time; retry later", err)
	case errors.Is(err, graph.ErrNotFound):
		return &httpserver.Error{Status: http.StatusNotFound, Title: "not found", Detail: "not found", Err: err}
	case errors.Is(err, graph.ErrInvalid):
		msg := err.Error()
		if i := strings.Index(msg, graph.ErrInvalid.Error()+": "); i >= 0 {
			msg = msg[i+len(graph.ErrInvalid.Error())+2:]
		}
		e := httpserver.BadRequest("", "the graph store refused the request: "+msg)
		e.Err = err
		return e
	}
	return httpserver.Internal(err)
}

// reply writes v as JSON, or TOON when the client asks for it (Accept: text/toon
// or ?format=toon).
func reply(c *gin.Context, status int, v any) error {
	if err := toon.WriteHTTP(c.Writer, c.Request, status, v, toon.FormatJSON); err != nil {
		return fmt.Errorf("encode response: %w", err)
	}
	return nil
}
