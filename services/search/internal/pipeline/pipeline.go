package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

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
	SearchVectors(ctx context.Context, vec []float32, k int, f store.Filter) ([]store.Hit, error)
	ChunksByIDs(ctx context.Context, ids []int64) ([]store.Chunk, error)
	GetDocument(ctx context.Context, id string) (store.Document, error)
}

// Graph is the part of the kg service the pipeline calls.
type Graph interface {
	Match(ctx context.Context, req kgapi.MatchRequest) (*kgapi.MatchResponse, error)
	Expand(ctx context.Context, req kgapi.ExpandRequest) (*kgapi.ExpandResponse, error)
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

// Options tunes the pipeline. Zero values take the defaults.
type Options struct {
	Candidates          int           // per retriever; default 100
	Deadline            time.Duration // whole retrieval + expansion; default 800ms
	VectorTimeout       time.Duration // embed + HNSW search; default 500ms
	GraphTimeout        time.Duration // one kg match; default 300ms
	BM25Timeout         time.Duration // default 300ms
	ExpandTimeout       time.Duration // kg expand; default 300ms
	ExpandMinConfidence float64       // related entities below it are not used; default 0.3
	ExpandLimit         int           // related entities used; default 8
	ExpandHops          int           // default 2
	// Tokens counts cl100k tokens; nil leaves the tokens field zero.
	Tokens func(b []byte) int
}

func (o Options) withDefaults() Options {
	if o.Candidates <= 0 {
		o.Candidates = 100
	}
	if o.Deadline <= 0 {
		o.Deadline = 800 * time.Millisecond
	}
	if o.VectorTimeout <= 0 {
		o.VectorTimeout = 500 * time.Millisecond
	}
	if o.GraphTimeout <= 0 {
		o.GraphTimeout = 300 * time.Millisecond
	}
	if o.BM25Timeout <= 0 {
		o.BM25Timeout = 300 * time.Millisecond
	}
	if o.ExpandTimeout <= 0 {
		o.ExpandTimeout = 300 * time.Millisecond
	}
	if o.ExpandMinConfidence <= 0 {
		o.ExpandMinConfidence = 0.3
	}
	if o.ExpandLimit <= 0 {
		o.ExpandLimit = 8
	}
	if o.ExpandHops <= 0 {
		o.ExpandHops = 2
	}
	return o
}

// Pipeline runs the five phases. It is safe for concurrent use.
type Pipeline struct {
	parser *queryparse.Parser
	emb    embed.Embedder
	st     Store
	kg     Graph
	text   Text
	docs   Docs
	rank   *ranker.Ranker
	opt    Options
	log    *slog.Logger
	met    *Metrics
	state  sync.Map // retriever name → *atomic.Bool failing
}

// New builds a pipeline. kg may be nil (the graph signal is then always degraded);
// met may be nil.
func New(parser *queryparse.Parser, emb embed.Embedder, st Store, kg Graph, text Text, docs Docs,
	rk *ranker.Ranker, opt Options, logger *slog.Logger, met *Metrics) *Pipeline {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Pipeline{parser: parser, emb: emb, st: st, kg: kg, text: text, docs: docs, rank: rk,
		opt: opt.withDefaults(), log: logger, met: met}
}

// cand is a candidate chunk being assembled from the retrievers.
type cand struct {
	id       int64
	c        ranker.Candidate
	hydrated bool // text, offsets and embedding known
	docKnown bool
	domain   string
	sources  uint8
	mentions []string
}

const (
	srcVector uint8 = 1 << iota
	srcGraph
	srcBM25
	srcExpanded
)

// outcome is what one retriever produced.
type outcome struct {
	took time.Duration
	err  error
	hits int
	ran  bool
}

// Search runs a search. Errors: *FieldError for a bad request, *UnavailableError when
// every retriever failed, context errors when the caller went away.
func (p *Pipeline) Search(ctx context.Context, req Request) (*Response, error) {
	start := time.Now()
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.K == 0 {
		req.K = DefaultK
	}
	resp := &Response{}

	// Phase 1: parse.
	t0 := time.Now()
	q, err := p.parser.Parse(req.Query)
	if err != nil {
		var tl *queryparse.TooLongError
		switch {
		case errors.Is(err, queryparse.ErrEmpty):
			return nil, &FieldError{Field: "q", Reason: "the query is empty: give at least one word to search for"}
		case errors.As(err, &tl):
			return nil, &FieldError{Field: "q", Reason: tl.Error()}
		}
		return nil, &FieldError{Field: "q", Reason: err.Error()}
	}
	resp.Query = queryInfo(q)
	entityKeys := entityKeys(q.Entities)
	resp.PhaseMS.Parse = ms(time.Since(t0))
	p.observe("parse", time.Since(t0))

	// Phase 2: retrieve in parallel under one deadline.
	t1 := time.Now()
	dctx, cancel := context.WithTimeout(ctx, p.opt.Deadline)
	defer cancel()
	var (
		vecHits  []store.Hit
		qvec     []float32
		bmHits   []bm25.Hit
		match    *kgapi.MatchResponse
		expanded *kgapi.ExpandResponse
		expMatch *kgapi.MatchResponse // chunks of the related entities used
		explored Response             // its Exploration, filled by the expansion
		out      = map[string]*outcome{"vector": {}, "graph": {}, "bm25": {}, "expansion": {}}
	)
	var g errgroup.Group
	run := func(name string, timeout time.Duration, fn func(ctx context.Context) (int, error)) {
		o := out[name]
		o.ran = true
		g.Go(func() error {
			rctx, cancel := context.WithTimeout(dctx, timeout)
			defer cancel()
			st := time.Now()
			n, err := fn(rctx)
			o.took, o.hits, o.err = time.Since(st), n, err
			if err != nil {
				p.retrieverError(name, err)
			} else {
				p.recovered(name)
			}
			return nil // a failing retriever never cancels the others
		})
	}
	run("vector", p.opt.VectorTimeout, func(ctx context.Context) (int, error) {
		vs, err := p.emb.Embed(ctx, []string{q.Normalized})
		if err != nil {
			return 0, fmt.Errorf("embed query: %w", err)
		}
		if len(vs) != 1 {
			return 0, fmt.Errorf("embed query: got %d vectors, want 1", len(vs))
		}
		qvec = vs[0]
		hits, err := p.st.SearchVectors(ctx, qvec, p.opt.Candidates, storeFilter(req))
		vecHits = hits
		return len(hits), err
	})
	if len(entityKeys) > 0 && p.kg != nil {
		run("graph", p.opt.GraphTimeout, func(ctx context.Context) (int, error) {
			m, err := p.kg.Match(ctx, kgapi.MatchRequest{Entities: entityKeys, Limit: p.opt.Candidates})
			if err != nil {
				return 0, err
			}
			match = m
			return len(m.Chunks), nil
		})
		if req.Expand {
			// Expansion needs only the parse, so it runs beside the retrievers, match of
			// the related entities included: phase 3 then only merges its chunks.
			run("expansion", p.opt.ExpandTimeout+p.opt.GraphTimeout, func(ctx context.Context) (int, error) {
				ectx, cancel := context.WithTimeout(ctx, p.opt.ExpandTimeout)
				e, err := p.kg.Expand(ectx, kgapi.ExpandRequest{Entities: entityKeys, MaxHops: p.opt.ExpandHops,
					Limit: 4 * p.opt.ExpandLimit, MinConfidence: p.opt.ExpandMinConfidence})
				cancel()
				if err != nil {
					return 0, err
				}
				expanded = e
				used := p.exploration(&explored, q, e)
				if len(used) == 0 {
					return 0, nil
				}
				m, err := p.kg.Match(ctx, kgapi.MatchRequest{Entities: used, Limit: p.opt.Candidates})
				if err != nil {
					return 0, err
				}
				expMatch = m
				return len(m.Chunks), nil
			})
		}
	} else if len(entityKeys) > 0 {
		out["graph"].ran, out["graph"].err = true, errors.New("no kg service configured")
	}
	bmReady := p.docs == nil || p.docs.CaughtUp()
	if bmReady {
		run("bm25", p.opt.BM25Timeout, func(ctx context.Context) (int, error) {
			hits, err := p.text.SearchIDs(ctx, bm25Text(q), p.opt.Candidates, bm25Filter(req))
			bmHits = hits
			return len(hits), err
		})
	} else {
		out["bm25"].ran, out["bm25"].err = true, errors.New("the index is catching up with the store")
	}
	_ = g.Wait()

	cands := map[string]*cand{}
	var order []string // insertion order, for deterministic processing
	get := func(id string) *cand {
		if c, ok := cands[id]; ok {
			return c
		}
		n, err := strconv.ParseInt(id, 10, 64)
		if err != nil || n < 0 {
			return nil // not a store chunk id
		}
		c := &cand{id: n, c: ranker.Candidate{ChunkID: id}}
		cands[id] = c
		order = append(order, id)
		return c
	}
	if out["vector"].err == nil {
		for _, h := range vecHits {
			c := get(strconv.FormatInt(h.ID, 10))
			if c == nil {
				continue
			}
			c.sources |= srcVector
			c.c.VectorSimilarity, c.c.HasVector = ranker.SimilarityFromDistance(h.Distance), true
			fillFromChunk(c, h.Chunk)
			c.c.DocumentID, c.c.URL, c.c.Title, c.c.Published = h.DocumentID, h.URL, h.Title, h.PublishedAt
		}
	}
	if out["bm25"].ran && out["bm25"].err == nil {
		for _, h := range bmHits {
			c := get(h.ChunkID)
			if c == nil {
				continue
			}
			c.sources |= srcBM25
			c.c.BM25Score, c.c.HasBM25 = h.Score, true
			if c.c.DocumentID == "" {
				c.c.DocumentID, c.c.URL, c.c.Title, c.c.Published = h.DocumentID, h.URL, h.Title, h.Published
			}
		}
	}
	if out["graph"].ran && out["graph"].err == nil && match != nil {
		qconf := entityConfidence(q.Entities)
		for _, m := range match.Chunks {
			c := get(m.ChunkID)
			if c == nil || !finite(m.Score) || m.Score < 0 {
				continue
			}
			c.sources |= srcGraph
			score := m.Score * matchedConfidence(qconf, m.Matched)
			if !c.c.HasGraph || score > c.c.GraphScore {
				c.c.GraphScore, c.c.HasGraph = score, true
			}
			c.mentions = appendUnique(c.mentions, m.Matched...)
			if c.c.DocumentID == "" {
				c.c.DocumentID = m.DocumentID
			}
		}
	}
	retrieveTook := time.Since(t1)

	// Phase 3: expansion through the graph.
	t2 := time.Now()
	graphOK := out["graph"].ran && out["graph"].err == nil
	if graphOK && out["expansion"].ran && expanded != nil {
		resp.Exploration = explored.Exploration
	}
	if graphOK && out["expansion"].ran && out["expansion"].err == nil && expMatch != nil {
		for _, mc := range expMatch.Chunks {
			c := get(mc.ChunkID)
			if c == nil || !finite(mc.Score) || mc.Score < 0 {
				continue
			}
			c.mentions = appendUnique(c.mentions, mc.Matched...)
			if c.sources&srcGraph != 0 {
				continue // reached directly: the direct score stands
			}
			c.sources |= srcExpanded
			if !c.c.HasGraph || mc.Score > c.c.GraphScore {
				c.c.GraphScore, c.c.HasGraph = mc.Score, true
			}
			c.c.GraphExpandedOnly = true
			if c.c.DocumentID == "" {
				c.c.DocumentID = mc.DocumentID
			}
		}
	}
	resp.Exploration.OriginalEntityCount = len(q.Entities)
	if resp.Exploration.ExpansionRelationships == nil {
		resp.Exploration.ExpansionRelationships = []Relationship{}
	}
	if resp.Exploration.DiscoveredEntities == nil {
		resp.Exploration.DiscoveredEntities = []DiscoveredEntity{}
	}
	// The expansion ran beside the retrievers: its own time plus this merge is the
	// expand phase, which therefore overlaps retrieve.
	expandTook := time.Since(t2)
	if o := out["expansion"]; o.ran {
		expandTook += o.took
	}

	// Hydrate: chunk text, offsets and embeddings in one store call; document metadata
	// from the indexer's table (the store for the few it does not know).
	t3 := time.Now()
	// BM25 score completion: candidates found only by the vector or graph retrievers
	// get their real BM25 score instead of 0 (their vector similarity is likewise
	// computed for BM25-only candidates by the ranker), so the fusion compares every
	// candidate on every signal. It needs only the candidate ids, so it runs beside
	// the hydration (they write different fields of the candidates).
	var completion sync.WaitGroup
	if out["bm25"].ran && out["bm25"].err == nil {
		var ids []string
		for _, id := range order {
			if c := cands[id]; !c.c.HasBM25 {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			completion.Add(1)
			go func() {
				defer completion.Done()
				sctx, scancel := context.WithTimeout(dctx, p.opt.BM25Timeout)
				hits, err := p.text.ScoreIDs(sctx, bm25Text(q), ids)
				scancel()
				if err != nil {
					p.log.Warn("bm25 score completion failed; those candidates score 0 on bm25", "err", err)
				}
				for _, h := range hits {
					if c, ok := cands[h.ChunkID]; ok && finite(h.Score) && h.Score > 0 {
						c.c.BM25Score, c.c.HasBM25 = h.Score, true
					}
				}
			}()
		}
	}
	hydrateErr := p.hydrate(dctx, cands, order)
	completion.Wait()
	if hydrateErr != nil {
		p.retrieverError("hydrate", hydrateErr)
	}
	retrieveTook += time.Since(t3)
	resp.PhaseMS.Retrieve = ms(retrieveTook)
	resp.PhaseMS.Expand = ms(expandTook)
	p.observe("retrieve", retrieveTook)
	p.observe("expand", expandTook)

	// Which signals are unavailable.
	var unavailable []ranker.Signal
	degraded := []string{}
	if out["vector"].err != nil {
		unavailable = append(unavailable, ranker.Vector)
		degraded = append(degraded, "vector")
	}
	if out["graph"].err != nil {
		unavailable = append(unavailable, ranker.Graph)
		degraded = append(degraded, "graph")
	} else if out["expansion"].ran && out["expansion"].err != nil {
		degraded = append(degraded, "expansion")
	}
	if out["bm25"].err != nil {
		unavailable = append(unavailable, ranker.BM25)
		degraded = append(degraded, "bm25")
	}
	resp.Degraded = degraded
	for _, d := range degraded {
		p.degradedInc(d)
	}
	working := 0
	for _, name := range []string{"vector", "graph", "bm25"} {
		if o := out[name]; o.ran && o.err == nil {
			working++
		}
	}
	if working == 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		ue := &UnavailableError{Reasons: map[string]string{}}
		for _, name := range []string{"vector", "graph", "bm25"} {
			if o := out[name]; o.err != nil {
				ue.Reasons[name] = reason(o.err)
			}
		}
		return nil, ue
	}

	// Phase 4: rank.
	t4 := time.Now()
	var notes []string
	weights := req.Weights
	if weights == (ranker.Weights{}) {
		weights = ranker.DefaultWeights()
	}
	off := unavailable
	if len(entityKeys) == 0 && !slices.Contains(off, ranker.Graph) {
		// No query entity: the graph signal is 0 for every candidate, so its weight
		// would only shrink every score. Not degraded, just not applicable.
		off = append(off, ranker.Graph)
		notes = append(notes, "the query has no entities, so the graph signal does not apply")
	}
	w, err := weights.Renormalize(off...)
	if err != nil {
		w, err = ranker.DefaultWeights().Renormalize(off...)
		if err != nil {
			return nil, fmt.Errorf("renormalize default weights: %w", err)
		}
		notes = append(notes, "every weighted signal was unavailable; the default weights were used for the rest")
	}
	list := make([]ranker.Candidate, 0, len(order))
	byID := make(map[string]*cand, len(order))
	for _, id := range order {
		c := cands[id]
		if !c.hydrated || !p.matchesFilter(req, c) {
			continue
		}
		c.c.Source = sourceString(c.sources)
		c.c.EntityMentions = c.mentions
		list = append(list, c.c)
		byID[id] = c
	}
	ents := make([]string, 0, len(q.Entities))
	for _, e := range q.Entities {
		ents = append(ents, e.Text)
	}
	ranked, err := p.rank.Rank(ranker.Request{
		Query:   ranker.Query{Text: q.Normalized, Entities: ents, Embedding: qvec},
		Weights: w, Fusion: req.Fusion, MMR: req.MMR, Lambda: req.Lambda, Limit: req.Offset + req.K,
	}, list)
	if err != nil {
		if errors.Is(err, ranker.ErrBadRequest) {
			return nil, &FieldError{Field: "weights", Reason: err.Error()}
		}
		return nil, fmt.Errorf("rank: %w", err)
	}
	if req.Offset < len(ranked) {
		ranked = ranked[req.Offset:]
	} else {
		ranked = nil
	}
	resp.PhaseMS.Rank = ms(time.Since(t4))
	p.observe("rank", time.Since(t4))

	// Phase 5: format.
	t5 := time.Now()
	resp.Results = make([]Result, len(ranked))
	for i, r := range ranked {
		resp.Results[i] = result(req.Offset+i+1, r)
	}
	resp.ResultCount = len(resp.Results)
	resp.RelatedEntities = relatedEntities(q, expanded, ranked)
	resp.SuggestedQueries = suggestions(q, resp.RelatedEntities, ranked)
	if req.Explain {
		ex := &Explain{Weights: w.String(), Fusion: string(orDefault(req.Fusion)), MMR: req.MMR, Candidates: len(list),
			Retrievers: map[string]RetrieverInfo{}, Notes: notes}
		if req.MMR {
			ex.Lambda = req.Lambda
		}
		for name, o := range out {
			if !o.ran {
				continue
			}
			ri := RetrieverInfo{Hits: o.hits, TookMS: ms(o.took)}
			if o.err != nil {
				ri.Error = reason(o.err)
			}
			ex.Retrievers[name] = ri
		}
		if hydrateErr != nil {
			ex.Notes = append(ex.Notes, "some candidates could not be read from the store: "+reason(hydrateErr))
		}
		resp.Explain = ex
	}
	resp.PhaseMS.Format = ms(time.Since(t5)) // before token counting, which is included below
	resp.TotalTimeMS = ms(time.Since(start))
	p.countTokens(resp)
	resp.PhaseMS.Format = ms(time.Since(t5))
	resp.TotalTimeMS = ms(time.Since(start))
	p.observe("format", time.Since(t5))
	p.observe("total", time.Since(start))
	return resp, nil
}

// exploration fills resp.Exploration from the expansion and returns the keys of the
// related entities whose chunks are used.
func (p *Pipeline) exploration(resp *Response, q queryparse.Query, ex *kgapi.ExpandResponse) []string {
	queryIDs := map[string]bool{}
	for _, e := range q.Entities {
		queryIDs[e.ID] = true
	}
	for _, r := range ex.Resolved {
		queryIDs[r.ID] = true
	}
	rels := []Relationship{}
	seenRel := map[Relationship]bool{}
	var used []string
	for _, r := range ex.Related {
		if queryIDs[r.ID] {
			continue
		}
		d := DiscoveredEntity{Name: r.Name, Type: r.Type, Confidence: round(r.Confidence, 3), Hops: r.Hops}
		path := make([]string, 0, len(r.Path))
		for _, st := range r.Path {
			path = append(path, fmt.Sprintf("%s -%s-> %s", st.From, st.Relation, st.To))
		}
		switch {
		case !finite(r.Confidence) || r.Confidence < p.opt.ExpandMinConfidence:
			d.Reason = fmt.Sprintf("confidence %.2f is below the threshold %.2f", r.Confidence, p.opt.ExpandMinConfidence)
		case len(used) >= p.opt.ExpandLimit:
			d.Reason = fmt.Sprintf("beyond the %d best related entities", p.opt.ExpandLimit)
		default:
			d.Used = true
			d.Reason = strings.Join(path, ", ")
			if d.Reason == "" {
				d.Reason = "related to the query entities"
			}
			key := r.ID
			if key == "" {
				key = r.Name
			}
			used = append(used, key)
			for _, st := range r.Path {
				rel := Relationship{From: st.From, Relation: st.Relation, To: st.To}
				if !seenRel[rel] {
					seenRel[rel] = true
					rels = append(rels, rel)
				}
			}
		}
		resp.Exploration.DiscoveredEntities = append(resp.Exploration.DiscoveredEntities, d)
	}
	resp.Exploration.ExpandedEntityCount = len(used)
	resp.Exploration.ExpansionRelationships = rels
	return used
}

// hydrate reads the text, offsets and embedding of candidates the vector retriever did
// not return (one ChunksByIDs call) and the document metadata of every candidate.
// Candidates whose chunk no longer exists stay unhydrated and are dropped.
func (p *Pipeline) hydrate(ctx context.Context, cands map[string]*cand, order []string) error {
	var ids []int64
	for _, id := range order {
		if c := cands[id]; !c.hydrated {
			ids = append(ids, c.id)
		}
	}
	var errs []error
	if len(ids) > 0 {
		chunks, err := p.st.ChunksByIDs(ctx, ids)
		if err != nil {
			errs = append(errs, fmt.Errorf("read %d chunks: %w", len(ids), err))
		}
		for _, ch := range chunks {
			if c, ok := cands[strconv.FormatInt(ch.ID, 10)]; ok {
				fillFromChunk(c, ch)
				if c.c.DocumentID == "" {
					c.c.DocumentID = ch.DocumentID
				}
			}
		}
	}
	missing := map[string]bool{}
	for _, id := range order {
		c := cands[id]
		if !c.hydrated {
			continue
		}
		if p.docs != nil {
			if d, ok := p.docs.Doc(c.c.DocumentID); ok {
				applyDoc(c, d)
				continue
			}
		}
		missing[c.c.DocumentID] = true
	}
	if len(missing) > 0 {
		ids := make([]string, 0, len(missing))
		for id := range missing {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		got := map[string]indexer.Doc{}
		for i, id := range ids {
			if i >= 64 { // the indexer's table knows nearly all; do not let a cold table stall a query
				errs = append(errs, fmt.Errorf("%d documents not looked up", len(ids)-i))
				break
			}
			d, err := p.st.GetDocument(ctx, id)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				errs = append(errs, err)
				break
			}
			got[id] = indexer.DocFromStore(d)
		}
		for _, id := range order {
			c := cands[id]
			if c.hydrated && !c.docKnown {
				if d, ok := got[c.c.DocumentID]; ok {
					applyDoc(c, d)
				} else if c.c.URL == "" {
					c.hydrated = false // nothing to show for it
				}
			}
		}
	}
	return errors.Join(errs...)
}

func fillFromChunk(c *cand, ch store.Chunk) {
	c.c.Text = ch.Text
	c.c.Headings = ch.HeadingPath
	c.c.Start, c.c.End = ch.StartOffset, ch.EndOffset
	c.c.Embedding = ch.Embedding
	if c.c.DocumentID == "" {
		c.c.DocumentID = ch.DocumentID
	}
	c.hydrated = true
}

func applyDoc(c *cand, d indexer.Doc) {
	c.docKnown = true
	c.c.URL, c.c.Title, c.c.Tags = d.URL, d.Title, d.Tags
	// Only the page's own date counts for recency and the timestamp: the store's
	// updated_at is when the crawler last wrote the row, which says nothing about the
	// content's age (every freshly crawled page would look a day old).
	c.c.Published = d.Published
	c.domain = d.Domain
}

// matchesFilter applies the request's filters to every candidate (the vector and BM25
// retrievers filter already; the graph retriever does not).
func (p *Pipeline) matchesFilter(req Request, c *cand) bool {
	if req.Domain != "" && c.docKnown && !strings.EqualFold(c.domain, req.Domain) {
		return false
	}
	if req.Domain != "" && !c.docKnown && c.sources&(srcVector|srcBM25) == 0 {
		return false
	}
	for _, t := range req.Tags {
		if !slices.ContainsFunc(c.c.Tags, func(x string) bool { return strings.EqualFold(x, t) }) {
			if c.docKnown || c.sources&(srcVector|srcBM25) == 0 {
				return false
			}
		}
	}
	if !req.PublishedAfter.IsZero() || !req.PublishedBefore.IsZero() {
		pub := c.c.Published
		if pub.IsZero() {
			return false
		}
		if !req.PublishedAfter.IsZero() && pub.Before(req.PublishedAfter) {
			return false
		}
		if !req.PublishedBefore.IsZero() && !pub.Before(req.PublishedBefore) {
			return false
		}
	}
	return true
}

// bm25Text is the BM25 query: the normalised query plus each entity's canonical name
// when that is one word the query does not already contain after stemming
// (postgres → postgresql, k8s → kubernetes, but not pods → pod).
//
// The entities are not repeated for emphasis: the graph signal and the title's entity
// overlap already reward them, and doubling them here counted the same evidence twice
// ("stable ip address for a set of pods" ranked the page about pods above the one about
// stable addresses). Multi-word canonical names are left out: the expansion of an
// acronym (wal → write-ahead log) matches its common words (write, log) in every title,
// boosted three times, and pulled unrelated pages up; the graph and vector signals
// cover those entities instead.
func bm25Text(q queryparse.Query) string {
	var b strings.Builder
	b.WriteString(q.Normalized)
	have := map[string]bool{}
	for _, t := range ranker.Terms(q.Normalized) {
		have[t] = true
	}
	for _, e := range q.Entities {
		name := strings.ToLower(e.Name)
		if name == "" || strings.ContainsAny(name, " -_/") {
			continue
		}
		terms := ranker.Terms(name)
		if len(terms) == 1 && !have[terms[0]] {
			have[terms[0]] = true
			b.WriteByte(' ')
			b.WriteString(name)
		}
	}
	return b.String()
}

func storeFilter(req Request) store.Filter {
	f := store.Filter{Tags: req.Tags, PublishedAfter: req.PublishedAfter, PublishedBefore: req.PublishedBefore}
	if req.Domain != "" {
		f.Domains = []string{strings.ToLower(req.Domain)}
	}
	return f
}

func bm25Filter(req Request) bm25.Filter {
	return bm25.Filter{Domain: req.Domain, Tags: req.Tags, PublishedAfter: req.PublishedAfter, PublishedBefore: req.PublishedBefore}
}

func queryInfo(q queryparse.Query) QueryInfo {
	qi := QueryInfo{Original: q.Original, Normalized: q.Normalized, Intent: string(q.Intent), Confidence: q.Confidence,
		Variants: Variants{Original: q.Variants.Original, EntityEmphasised: q.Variants.EntityEmphasised, EntityOnly: q.Variants.EntityOnly},
		Entities: make([]QueryEntity, len(q.Entities))}
	for i, e := range q.Entities {
		qi.Entities[i] = QueryEntity{Text: e.Text, Type: e.Type, Confidence: round(e.Confidence, 3)}
	}
	return qi
}

// entityKeys returns the ids the kg service knows the query entities by (their
// normalised keys; the name when a finder gave no id).
func entityKeys(ents []queryparse.Entity) []string {
	out := make([]string, 0, len(ents))
	for _, e := range ents {
		k := e.ID
		if k == "" {
			k = e.Name
		}
		if k == "" {
			k = e.Text
		}
		if k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// entityConfidence maps each query entity's keys (id, name, text) to the parser's
// confidence in it, the highest when several entities share a key.
func entityConfidence(ents []queryparse.Entity) map[string]float64 {
	out := make(map[string]float64, 3*len(ents))
	for _, e := range ents {
		c := e.Confidence
		if !finite(c) || c <= 0 || c > 1 {
			c = 1
		}
		for _, k := range []string{e.ID, e.Name, e.Text} {
			if k != "" {
				out[k] = max(out[k], c)
			}
		}
	}
	return out
}

// matchedConfidence is the mean parser confidence of the query entities a chunk
// matched (kg entity ids); ids the parser did not name count as 1. The graph score of
// the chunk is scaled by it: a chunk matched only through an entity the parser was
// unsure of ("sorted" in "a sorted list", 0.7) gets less graph credit than one
// matched through a sure entity. With one query entity this is exactly kg's score
// with each entity's specificity weighted by the query's confidence in it.
func matchedConfidence(conf map[string]float64, matched []string) float64 {
	if len(matched) == 0 {
		return 1
	}
	sum := 0.0
	for _, id := range matched {
		if c, ok := conf[id]; ok {
			sum += c
		} else {
			sum++
		}
	}
	return sum / float64(len(matched))
}

func result(rank int, r ranker.Result) Result {
	c := r.Candidate
	res := Result{
		Rank: rank, URL: c.URL, Title: c.Title, Preview: r.Preview, Score: round(r.Score, 4),
		ScoreBreakdown: ScoreBreakdown{Vector: round(r.Breakdown.Vector, 4), Graph: round(r.Breakdown.Graph, 4),
			BM25: round(r.Breakdown.BM25, 4), Recency: round(r.Breakdown.Recency, 4), Title: round(r.Breakdown.Title, 4)},
		Tags: nonNil(c.Tags), Source: c.Source, EntityMentions: nonNil(c.EntityMentions),
		ChunkID: c.ChunkID, Start: c.Start, End: c.End,
	}
	if t := latest(c.Published, c.Updated); !t.IsZero() {
		res.Timestamp = t.UTC().Format(time.RFC3339)
	}
	return res
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func sourceString(s uint8) string {
	var parts []string
	if s&srcVector != 0 {
		parts = append(parts, "vector")
	}
	if s&srcBM25 != 0 {
		parts = append(parts, "bm25")
	}
	if s&srcGraph != 0 {
		parts = append(parts, "graph")
	}
	if s&srcExpanded != 0 {
		parts = append(parts, "expansion")
	}
	return strings.Join(parts, "+")
}

func appendUnique(dst []string, vals ...string) []string {
	for _, v := range vals {
		if v != "" && !slices.Contains(dst, v) {
			dst = append(dst, v)
		}
	}
	return dst
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func orDefault(f ranker.Fusion) ranker.Fusion {
	if f == "" {
		return ranker.Weighted
	}
	return f
}

// reason is a short, client-safe description of a retriever failure.
func reason(err error) string {
	switch {
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
