package pipeline

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/indexer"
)

// hydrate completes the candidates for ranking, between expand and rank: their chunk
// text, offsets, embeddings and document metadata (hydrateChunks), and, beside that,
// their BM25 scores (completeBM25). Its time is reported under retrieve, so it
// records the retrieve and expand phase metrics once both are final.
func (p *Pipeline) hydrate(ctx context.Context, s *search) {
	t := time.Now()
	var completion sync.WaitGroup
	if s.out[ranker.BM25].ok() {
		completion.Go(func() { p.completeBM25(ctx, s) })
	}
	err := p.hydrateChunks(ctx, s.cands, s.order)
	completion.Wait()
	if err != nil {
		p.retrieverError("hydrate", err)
	}
	s.hydrateErr = err
	s.took.retrieve += time.Since(t)
	p.observe("retrieve", s.took.retrieve)
	p.observe("expand", s.took.expand)
}

// completeBM25 gives candidates found only by the vector or graph retrievers their
// real BM25 score instead of 0 (their vector similarity is likewise computed for
// BM25-only candidates by the ranker), so the fusion compares every candidate on every
// signal. It needs only the candidate ids, so it runs beside hydrateChunks (they write
// different fields of the candidates).
func (p *Pipeline) completeBM25(ctx context.Context, s *search) {
	var ids []string
	for _, id := range s.order {
		if c := s.cands[id]; !c.c.HasBM25 {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return
	}
	sctx, cancel := context.WithTimeout(ctx, p.opt.BM25Timeout)
	hits, err := p.text.ScoreIDs(sctx, bm25Text(s.q), ids)
	cancel()
	if err != nil {
		p.log.Warn("bm25 score completion failed; those candidates score 0 on bm25", "err", err)
	}
	for _, h := range hits {
		if c, ok := s.cands[h.ChunkID]; ok && finite(h.Score) && h.Score > 0 {
			c.c.BM25Score, c.c.HasBM25 = h.Score, true
		}
	}
}

// errLookupCap marks the documents hydrateChunks left unread to keep a query from
// stalling on a cold document table: a limit this process sets, not a store failure.
var errLookupCap = errors.New("document lookups capped")

// storeFailed reports whether a hydration error holds a failure of the store itself
// (anything but errLookupCap).
func storeFailed(err error) bool {
	if err == nil {
		return false
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range j.Unwrap() {
			if storeFailed(e) {
				return true
			}
		}
		return false
	}
	return !errors.Is(err, errLookupCap)
}

// hydrateChunks reads the text, offsets and embedding of the candidates (one
// ChunksByIDs call; the vector retriever returns ids only) and the document metadata
// of every candidate. Candidates whose chunk no longer exists stay unhydrated and are dropped.
func (p *Pipeline) hydrateChunks(ctx context.Context, cands map[string]*cand, order []string) error {
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
			errs = append(errs, fmt.Errorf("%w: read %d chunks: %w", errStore, len(ids), err))
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
	// Each document is looked up once: a recrawl that the indexer applies meanwhile
	// must not give two chunks of one page different content keys (two results).
	known := map[string]indexer.Doc{}
	missing := map[string]bool{}
	for _, id := range order {
		c := cands[id]
		if !c.hydrated {
			continue
		}
		if d, ok := known[c.c.DocumentID]; ok {
			applyDoc(c, d)
			continue
		}
		if p.docs != nil && !missing[c.c.DocumentID] {
			if d, ok := p.docs.Doc(c.c.DocumentID); ok {
				known[c.c.DocumentID] = d
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
				errs = append(errs, fmt.Errorf("%w: %d documents not looked up", errLookupCap, len(ids)-i))
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
	c.c.History, c.c.Generated = d.History, d.Generated
	c.c.ContentKey = d.ContentHash // copies of one page at several URLs make one result
	// Only the page's own date counts for recency and the timestamp: the store's
	// updated_at is when the crawler last wrote the row, which says nothing about the
	// content's age (every freshly crawled page would look a day old).
	c.c.Published = d.Published
	c.domain = d.Domain
}
