package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/bm25"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
)

// Store is the part of the MariaDB store the pipeline reads.
type Store interface {
	// SearchVectorIDs finds the nearest chunks; their rows come from ChunksByIDs with
	// the other candidates' (hydration, through the chunk cache in the service).
	SearchVectorIDs(ctx context.Context, vec []float32, k int, f store.Filter) ([]store.VectorHit, error)
	ChunksByIDs(ctx context.Context, ids []int64) ([]store.Chunk, error)
	GetDocument(ctx context.Context, id string) (store.Document, error)
}

// Graph is the part of the kg service the pipeline calls.
type Graph interface {
	Match(ctx context.Context, req kgapi.MatchRequest) (*kgapi.MatchResponse, error)
	Expand(ctx context.Context, req kgapi.ExpandRequest) (*kgapi.ExpandResponse, error)
	Feedback(ctx context.Context, req kgapi.FeedbackRequest) (*kgapi.FeedbackResponse, error)
}

// Text is the BM25 index. SearchIDs returns hits with chunk ids and scores only; the
// pipeline reads the chunks from the store and the documents from Docs anyway.
type Text interface {
	SearchIDs(ctx context.Context, text string, k int, f bm25.Filter) ([]bm25.Hit, error)
	// ScoreIDs scores the listed chunks under the same query (score completion).
	ScoreIDs(ctx context.Context, text string, ids []string) ([]bm25.Hit, error)
}

// Docs gives document metadata known locally (the indexer's table) and whether the
// BM25 index has caught up with the store.
type Docs interface {
	Doc(id string) (indexer.Doc, bool)
	CaughtUp() bool
}

// Options tunes the pipeline. Zero values take the defaults (DefaultOptions).
type Options struct {
	Candidates          int           // per retriever
	Deadline            time.Duration // whole retrieval + expansion
	VectorTimeout       time.Duration // embed + HNSW search
	GraphTimeout        time.Duration // one kg match
	BM25Timeout         time.Duration
	ExpandTimeout       time.Duration // kg expand
	ExpandMinConfidence float64       // related entities below it are not used
	// RelatedMinConfidence: a related entity (and the suggestion naming it) is shown
	// only when the confidence model gives it at least this probability of being
	// useful; negative shows every entity the selection's rules keep.
	RelatedMinConfidence float64
	// SuggestMinConfidence: a related entity is also a suggested query only when
	// its confidence is at least this; negative: every related entity shown may be.
	SuggestMinConfidence float64
	ExpandLimit          int // related entities used
	ExpandHops           int
	// BreakerFailures consecutive kg failures open the circuit; BreakerCooldown later
	// one probe call is let through (breaker.go).
	BreakerFailures int
	BreakerCooldown time.Duration
	// QueryCache is the number of recent query vectors kept (qcache.go); < 0: none.
	QueryCache int
	// Tokens counts cl100k tokens; nil leaves the tokens field zero.
	Tokens func(b []byte) int
}

// DefaultOptions returns the pipeline's defaults, the one place they are written
// (the service's configuration starts from them).
//
// The budgets are for real failure, a dependency that is down or stuck, not for a
// busy machine: a search starts only once admission control (package admission) gave
// it a slot, so its calls are not queued behind an unbounded crowd, and a call that
// takes ten times its usual few milliseconds is still an answer worth waiting for.
// A kg that refuses connections fails at once; one that hangs costs BreakerFailures
// searches a GraphTimeout each, then the circuit opens and the rest fail at once.
func DefaultOptions() Options {
	return Options{
		Candidates:           100,
		Deadline:             3 * time.Second,
		VectorTimeout:        2 * time.Second,
		GraphTimeout:         time.Second,
		BM25Timeout:          2 * time.Second,
		ExpandTimeout:        time.Second,
		ExpandMinConfidence:  0.3,
		RelatedMinConfidence: defaultRelatedMinConfidence,
		SuggestMinConfidence: defaultSuggestMinConfidence,
		ExpandLimit:          8,
		ExpandHops:           2,
		BreakerFailures:      3,
		BreakerCooldown:      time.Second,
		QueryCache:           1024,
	}
}

func (o Options) withDefaults() Options {
	d := DefaultOptions()
	orDefault(&o.Candidates, d.Candidates)
	orDefault(&o.Deadline, d.Deadline)
	orDefault(&o.VectorTimeout, d.VectorTimeout)
	orDefault(&o.GraphTimeout, d.GraphTimeout)
	orDefault(&o.BM25Timeout, d.BM25Timeout)
	orDefault(&o.ExpandTimeout, d.ExpandTimeout)
	orDefault(&o.ExpandMinConfidence, d.ExpandMinConfidence)
	if o.RelatedMinConfidence == 0 {
		o.RelatedMinConfidence = d.RelatedMinConfidence
	}
	if o.SuggestMinConfidence == 0 {
		o.SuggestMinConfidence = d.SuggestMinConfidence
	}
	orDefault(&o.ExpandLimit, d.ExpandLimit)
	orDefault(&o.ExpandHops, d.ExpandHops)
	orDefault(&o.BreakerFailures, d.BreakerFailures)
	orDefault(&o.BreakerCooldown, d.BreakerCooldown)
	if o.QueryCache == 0 {
		o.QueryCache = d.QueryCache
	}
	return o
}

// orDefault sets *v to def unless it is positive.
func orDefault[T int | float64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Pipeline runs the five phases. It is safe for concurrent use.
type Pipeline struct {
	parser *queryparse.Parser
	emb    embed.Embedder
	st     Store
	kg     Graph
	text   Text
	docs   Docs
	rk     *ranker.Ranker
	opt    Options
	log    *slog.Logger
	met    *Metrics
	state  sync.Map      // retriever name → *atomic.Bool failing
	qvecs  *queryVectors // nil: no cache
}

// New builds a pipeline. kg may be nil (the graph signal is then always degraded);
// met may be nil.
func New(parser *queryparse.Parser, emb embed.Embedder, st Store, kg Graph, text Text, docs Docs,
	rk *ranker.Ranker, opt Options, logger *slog.Logger, met *Metrics) *Pipeline {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	opt = opt.withDefaults()
	if kg != nil {
		kg = guarded(kg, opt)
	}
	p := &Pipeline{parser: parser, emb: emb, st: st, kg: kg, text: text, docs: docs, rk: rk,
		opt: opt, log: logger, met: met}
	if opt.QueryCache > 0 {
		p.qvecs = newQueryVectors(opt.QueryCache)
	}
	return p
}

// Search runs a search: parse, then retrieval with the expansion beside it, the
// expansion's merge, hydration of the candidates, rank and format. Errors: *FieldError
// for a bad request, *UnavailableError when every retriever failed, context errors when
// the caller went away.
func (p *Pipeline) Search(ctx context.Context, req Request) (*Response, error) {
	s, err := p.parse(req)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, p.opt.Deadline) // retrieval and expansion
	defer cancel()
	exp := p.startExpansion(dctx, s) // needs only the parse, so it runs beside retrieval
	p.retrieve(dctx, s)
	p.expand(s, exp) // awaits the expansion, merges its chunks
	p.hydrate(dctx, s)
	if err := p.checkAvailable(ctx, s); err != nil {
		return nil, err
	}
	p.graphFeedback(dctx, s) // expansion seeded by the first-pass results
	if err := p.rank(s); err != nil {
		return nil, err
	}
	return p.format(s), nil
}

func appendUnique(dst []string, vals ...string) []string {
	for _, v := range vals {
		if v != "" && !slices.Contains(dst, v) {
			dst = append(dst, v)
		}
	}
	return dst
}

// errStore marks the errors of reads from the store (MariaDB), so that reason
// can name it without repeating the driver's text.
var errStore = errors.New("store")

// reason is a short, client-safe description of a retriever failure: the
// driver's and the network's own texts name internal addresses, so they are
// logged (retrieverError) but not told.
func reason(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, ErrCircuitOpen):
		return "kg circuit open after repeated failures"
	case errors.Is(err, context.DeadlineExceeded):
		return "timed out"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.Is(err, kgapi.ErrUnavailable):
		return "kg service unavailable"
	case errors.Is(err, store.ErrNotReady):
		return "store not ready"
	case errors.Is(err, bm25.ErrClosed):
		return "index closed"
	case errors.Is(err, errStore) && store.Unavailable(err):
		return "the database (MariaDB) is not reachable"
	case errors.Is(err, errStore):
		return "the database (MariaDB) failed to answer"
	case errors.As(err, &ne):
		return "a service it needs is not reachable"
	}
	var se *kgapi.StatusError
	if errors.As(err, &se) {
		return fmt.Sprintf("kg service refused the request (%d)", se.Status)
	}
	s := err.Error()
	if len(s) > 160 {
		s = s[:160]
	}
	return s
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

func round(x float64, digits int) float64 {
	if !finite(x) {
		return 0
	}
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func ms(d time.Duration) float64 { return round(float64(d.Microseconds())/1000, 3) }
