package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/queryparse"
	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/bm25"
)

// retriever is one entry of the retriever table.
type retriever struct {
	timeout func(o *Options) time.Duration
	// applies reports whether the retriever runs for this search: false with a nil
	// error when it does not apply, false with an error when it should but cannot
	// (its signal is then degraded).
	applies func(p *Pipeline, s *search) (bool, error)
	// run retrieves into s and returns the number of hits.
	run func(p *Pipeline, ctx context.Context, s *search) (int, error)
	// merge adds the hits to the candidates; called only when run succeeded.
	merge func(s *search)
}

// retrievers is the retriever table, indexed by the signal each retriever feeds.
var retrievers = [...]retriever{
	ranker.Vector: {
		timeout: func(o *Options) time.Duration { return o.VectorTimeout },
		applies: func(*Pipeline, *search) (bool, error) { return true, nil },
		run:     (*Pipeline).retrieveVector,
		merge:   (*search).mergeVector,
	},
	ranker.Graph: {
		timeout: func(o *Options) time.Duration { return o.GraphTimeout },
		applies: func(p *Pipeline, s *search) (bool, error) {
			if len(s.keys) == 0 {
				return false, nil // no query entity: the graph signal does not apply
			}
			if p.kg == nil {
				return false, errors.New("no kg service configured")
			}
			return true, nil
		},
		run:   (*Pipeline).retrieveGraph,
		merge: (*search).mergeGraph,
	},
	ranker.BM25: {
		timeout: func(o *Options) time.Duration { return o.BM25Timeout },
		applies: func(p *Pipeline, _ *search) (bool, error) {
			if p.docs != nil && !p.docs.CaughtUp() {
				return false, errors.New("the index is catching up with the store")
			}
			return true, nil
		},
		run:   (*Pipeline).retrieveBM25,
		merge: (*search).mergeBM25,
	},
}

// mergeOrder is the order the retrievers' hits become candidates: it decides the
// candidates' order (ties in ranking) and whose document fields a candidate keeps.
var mergeOrder = [...]ranker.Signal{ranker.Vector, ranker.BM25, ranker.Graph}

// retrieve is phase 2: the retrievers run in parallel under ctx (the search's
// deadline), each with its own timeout; a failing retriever never stops the others.
// Their hits are then merged into the candidates.
func (p *Pipeline) retrieve(ctx context.Context, s *search) {
	t := time.Now()
	var wg sync.WaitGroup
	for sig, r := range retrievers {
		ok, err := r.applies(p, s)
		if !ok {
			s.out[sig] = outcome{ran: err != nil, err: err}
			continue
		}
		wg.Go(func() {
			s.out[sig] = p.timed(ctx, ranker.Signal(sig).String(), r.timeout(&p.opt), func(ctx context.Context) (int, error) {
				return r.run(p, ctx, s)
			})
		})
	}
	wg.Wait()
	for _, sig := range mergeOrder {
		if s.out[sig].ok() {
			retrievers[sig].merge(s)
		}
	}
	s.took.retrieve = time.Since(t) // hydrate adds its own time
}

// timed runs fn under its own timeout, logs and counts its failure or recovery, and
// returns its outcome.
func (p *Pipeline) timed(ctx context.Context, name string, timeout time.Duration,
	fn func(ctx context.Context) (int, error)) outcome {
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	st := time.Now()
	n, err := fn(rctx)
	o := outcome{took: time.Since(st), hits: n, err: err, ran: true}
	if err != nil {
		p.retrieverError(name, err)
	} else {
		p.recovered(name)
	}
	return o
}

func (p *Pipeline) retrieveVector(ctx context.Context, s *search) (int, error) {
	vec, err := p.embedQuery(ctx, s.q.Normalized)
	if err != nil {
		return 0, err
	}
	s.qvec = vec
	hits, err := p.st.SearchVectorIDs(ctx, s.qvec, p.opt.Candidates, storeFilter(s.req))
	s.vecHits = hits
	if err != nil {
		err = fmt.Errorf("%w: %w", errStore, err)
	}
	return len(hits), err
}

func (p *Pipeline) retrieveGraph(ctx context.Context, s *search) (int, error) {
	if e := s.exp; e != nil && e.graphReady != nil {
		// The expansion's Retrieve call brings the match too (one round trip).
		select {
		case <-e.graphReady:
		case <-ctx.Done():
			return 0, fmt.Errorf("kg retrieve: %w", ctx.Err())
		}
		if e.graphErr != nil {
			return 0, e.graphErr
		}
		s.match = e.graph
		return len(e.graph.Chunks), nil
	}
	m, err := p.kg.Match(ctx, kgapi.MatchRequest{Entities: s.keys, Limit: p.opt.Candidates})
	if err != nil {
		return 0, err
	}
	s.match = m
	return len(m.Chunks), nil
}

func (p *Pipeline) retrieveBM25(ctx context.Context, s *search) (int, error) {
	hits, err := p.text.SearchIDs(ctx, bm25Text(s.q), p.opt.Candidates, bm25Filter(s.req))
	s.bmHits = hits
	return len(hits), err
}

// embedQuery returns the query's vector, from the cache of recent query vectors
// when it is there.
func (p *Pipeline) embedQuery(ctx context.Context, text string) ([]float32, error) {
	var key string
	if p.qvecs != nil {
		m := p.emb.Info()
		key = m.Name + "\x00" + strconv.Itoa(m.Dims) + "\x00" + text
		if v, ok := p.qvecs.get(key); ok {
			p.queryCacheInc(true)
			return v, nil
		}
		p.queryCacheInc(false)
	}
	vs, err := p.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	if len(vs) != 1 {
		return nil, fmt.Errorf("embed query: got %d vectors, want 1", len(vs))
	}
	if p.qvecs != nil {
		p.qvecs.put(key, vs[0])
	}
	return vs[0], nil
}

func (s *search) mergeVector() {
	for _, h := range s.vecHits {
		c := s.candidate(strconv.FormatInt(h.ID, 10))
		if c == nil {
			continue
		}
		c.sources |= srcVector
		c.c.VectorSimilarity, c.c.HasVector = ranker.SimilarityFromDistance(h.Distance), true
		c.c.DocumentID = h.DocumentID // text, embedding and document fields: hydrate
	}
}

func (s *search) mergeBM25() {
	for _, h := range s.bmHits {
		c := s.candidate(h.ChunkID)
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

func (s *search) mergeGraph() {
	if s.match == nil {
		return
	}
	qconf := entityConfidence(s.q.Entities)
	for _, m := range s.match.Chunks {
		c := s.candidate(m.ChunkID)
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

// checkAvailable lists the signals lost to failing retrievers (and a failed expansion)
// in degraded, and fails the search when no retriever answered.
func (p *Pipeline) checkAvailable(ctx context.Context, s *search) error {
	degraded := []string{}
	working := 0
	for sig := range retrievers {
		o := &s.out[sig]
		if o.ok() {
			working++
		}
		switch {
		case o.err != nil:
			s.unavailable = append(s.unavailable, ranker.Signal(sig))
			degraded = append(degraded, ranker.Signal(sig).String())
		case ranker.Signal(sig) == ranker.Graph && s.exp != nil && s.exp.out.err != nil:
			degraded = append(degraded, expansionName)
		}
	}
	// The candidates' text comes from the store (hydrate): when reading it failed, the
	// answer lacks what could not be read, and without any of it there is nothing to
	// show, which is an outage, not an empty answer.
	storeDown := false
	if storeFailed(s.hydrateErr) {
		if hydratedAny(s) {
			degraded = append(degraded, storeName)
		} else {
			storeDown, working = true, 0
		}
	}
	s.resp.Degraded = degraded
	for _, d := range degraded {
		p.degradedInc(d)
	}
	if working > 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	ue := &UnavailableError{Reasons: map[string]string{}}
	for sig := range retrievers {
		if err := s.out[sig].err; err != nil {
			ue.Reasons[ranker.Signal(sig).String()] = reason(err)
		}
	}
	if storeDown {
		ue.Reasons[storeName] = reason(s.hydrateErr)
	}
	return ue
}

// storeName names the document store (MariaDB) in degraded and in an
// UnavailableError's reasons: the candidates' text and metadata are read from it.
const storeName = "store"

// hydratedAny reports whether any candidate has its text, so it can be shown.
func hydratedAny(s *search) bool {
	for _, id := range s.order {
		if s.cands[id].hydrated {
			return true
		}
	}
	return false
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
