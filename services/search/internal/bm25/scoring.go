package bm25

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/mapping"
	bsearch "github.com/blevesearch/bleve/v2/search"
	index "github.com/blevesearch/bleve_index_api"
)

// Standard BM25 (Robertson/Spärck Jones, as Lucene, Elasticsearch and tantivy score
// it), computed here rather than by Bleve. Bleve 2.5's "bm25" scoring model differs
// from the standard in four ways, which together made our BM25-only ranking clearly
// worse than a standard engine's on the same chunks (issue 14):
//
//   - the average field length is ceil(distinct terms in the field / documents) — the
//     size of the field's dictionary, not its token count (for chunk text about 4
//     instead of about 150 tokens), so a long field is penalised dozens of times over
//     and a short one (the title) barely at all: a common word in a page title
//     outscored the body that answers the question;
//   - term frequency enters as its square root;
//   - the idf is applied twice (once in the term score, once in the query weight);
//   - every disjunction multiplies the sum by a coordination factor (matched clauses /
//     clauses), per field and again across fields, favouring chunks that match in
//     several fields — every chunk of a page whose title has a query word.
//
// Here a chunk's score is Σ over query terms t and fields f of
//
//	boost_f · idf(t,f) · tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl_f))
//
// with idf(t,f) = ln(1 + (N − n + 0.5)/(n + 0.5)), N the chunks in the index, n those
// with t in f, tf the term's frequency in the chunk's field, dl the field's length in
// tokens (Bleve keeps it in each posting's norm) and avgdl_f the mean length of f over
// all chunks, which the index keeps itself (fieldStats, updated in every Apply batch).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// scoredFields are the analysed fields, in fieldStats order.
var scoredFields = [numScored]string{fieldTitle, fieldHeadings, fieldText}

const numScored = 3

// fieldLengths are the token counts of a chunk's analysed fields (title, headings,
// text), as the English analyzer produces them (stop words removed).
type fieldLengths [numScored]uint32

// fieldStats are the totals the average field lengths come from: the number of
// chunks counted and the sum of each field's length.
type fieldStats struct {
	Chunks uint64
	Sum    [numScored]uint64
}

func (s fieldStats) avg(f int) float64 {
	if s.Chunks == 0 || s.Sum[f] == 0 {
		return 1
	}
	return float64(s.Sum[f]) / float64(s.Chunks)
}

func (s *fieldStats) add(l fieldLengths, sign int) {
	if sign > 0 {
		s.Chunks++
		for i, n := range l {
			s.Sum[i] += uint64(n)
		}
		return
	}
	if s.Chunks > 0 {
		s.Chunks--
	}
	for i, n := range l {
		s.Sum[i] -= min(s.Sum[i], uint64(n))
	}
}

func (s fieldStats) encode() []byte {
	b := make([]byte, 8*(1+numScored))
	binary.BigEndian.PutUint64(b, s.Chunks)
	for i, n := range s.Sum {
		binary.BigEndian.PutUint64(b[8*(i+1):], n)
	}
	return b
}

func decodeFieldStats(b []byte) (fieldStats, error) {
	var s fieldStats
	if len(b) == 0 {
		return s, nil
	}
	if len(b) != 8*(1+numScored) {
		return s, fmt.Errorf("field length totals: %d bytes, want %d", len(b), 8*(1+numScored))
	}
	s.Chunks = binary.BigEndian.Uint64(b)
	for i := range s.Sum {
		s.Sum[i] = binary.BigEndian.Uint64(b[8*(i+1):])
	}
	return s, nil
}

func (l fieldLengths) encode() []byte {
	b := make([]byte, 4*numScored)
	for i, n := range l {
		binary.BigEndian.PutUint32(b[4*i:], n)
	}
	return b
}

func decodeFieldLengths(b []byte) (fieldLengths, bool) {
	var l fieldLengths
	if len(b) != 4*numScored {
		return l, false
	}
	for i := range l {
		l[i] = binary.BigEndian.Uint32(b[4*i:])
	}
	return l, true
}

// lengthsOf analyses a chunk's fields as the index does and counts their tokens.
func lengthsOf(a analysis.Analyzer, c Chunk) fieldLengths {
	count := func(s string) uint32 {
		if s == "" {
			return 0
		}
		return uint32(len(a.Analyze([]byte(s))))
	}
	var l fieldLengths
	l[0] = count(c.Title)
	for _, h := range c.Headings {
		l[1] += count(h)
	}
	l[2] = count(c.Text)
	return l
}

// queryTerms analyses the query text with the index's analyzer: its distinct terms,
// in order of first occurrence.
func queryTerms(a analysis.Analyzer, text string) [][]byte {
	seen := map[string]bool{}
	var out [][]byte
	for _, tok := range a.Analyze([]byte(text)) {
		t := string(tok.Term)
		if t == "" || seen[t] {
			continue
		}
		seen[t] = true
		out = append(out, []byte(t))
	}
	return out
}

// standardQuery is a Bleve query scoring the terms with standard BM25 over the
// analysed fields, summed without coordination factors (see the top of this file).
type standardQuery struct {
	terms  [][]byte
	boosts [numScored]float64
	stats  fieldStats
}

// Searcher implements query.Query.
func (q *standardQuery) Searcher(ctx context.Context, r index.IndexReader, _ mapping.IndexMapping, opt bsearch.SearcherOptions) (bsearch.Searcher, error) {
	n, err := r.DocCount()
	if err != nil {
		return nil, fmt.Errorf("bm25: count chunks: %w", err)
	}
	s := &sumSearcher{score: opt.Score != "none"}
	for f, field := range scoredFields {
		if q.boosts[f] <= 0 {
			continue
		}
		for _, t := range q.terms {
			tfr, err := r.TermFieldReader(ctx, t, field, true, true, false)
			if err != nil {
				_ = s.Close()
				return nil, fmt.Errorf("bm25: read postings of %s:%q: %w", field, t, err)
			}
			df := tfr.Count()
			if df == 0 {
				_ = tfr.Close()
				continue
			}
			idf := math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
			s.cursors = append(s.cursors, &cursor{r: tfr, weight: q.boosts[f] * idf, avgdl: q.stats.avg(f), count: df})
		}
	}
	return s, nil
}

// cursor walks the postings of one term in one field.
type cursor struct {
	r      index.TermFieldReader
	weight float64 // boost × idf
	avgdl  float64
	count  uint64
	doc    index.TermFieldDoc
	cur    *index.TermFieldDoc // nil: not started or exhausted
	done   bool
}

func (c *cursor) score() float64 {
	tf := float64(c.cur.Freq)
	dl := 1.0
	if c.cur.Norm > 0 {
		dl = math.Round(1 / (c.cur.Norm * c.cur.Norm)) // Bleve's norm is 1/sqrt(length)
	}
	return c.weight * tf * (bm25K1 + 1) / (tf + bm25K1*(1-bm25B+bm25B*dl/c.avgdl))
}

func (c *cursor) next() error {
	d, err := c.r.Next(c.doc.Reset())
	c.cur, c.done = d, d == nil
	return err
}

func (c *cursor) advance(id index.IndexInternalID) error {
	d, err := c.r.Advance(id, c.doc.Reset())
	c.cur, c.done = d, d == nil
	return err
}

// sumSearcher merges the cursors in document order and sums their scores.
type sumSearcher struct {
	cursors []*cursor
	started bool
	score   bool
}

func (s *sumSearcher) start() error {
	if s.started {
		return nil
	}
	s.started = true
	for _, c := range s.cursors {
		if err := c.next(); err != nil {
			return err
		}
	}
	return nil
}

// Next returns the next matching chunk in index order.
func (s *sumSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	if err := s.start(); err != nil {
		return nil, err
	}
	var lowest index.IndexInternalID
	for _, c := range s.cursors {
		if !c.done && (lowest == nil || bytes.Compare(c.cur.ID, lowest) < 0) {
			lowest = c.cur.ID
		}
	}
	if lowest == nil {
		return nil, nil
	}
	dm := ctx.DocumentMatchPool.Get()
	dm.IndexInternalID = append(dm.IndexInternalID[:0], lowest...)
	var sum float64
	for _, c := range s.cursors {
		if c.done || !bytes.Equal(c.cur.ID, dm.IndexInternalID) {
			continue
		}
		if s.score {
			sum += c.score()
		}
		if err := c.next(); err != nil {
			return nil, err
		}
	}
	dm.Score = sum
	return dm, nil
}

// Advance moves to the first matching chunk at or after id.
func (s *sumSearcher) Advance(ctx *bsearch.SearchContext, id index.IndexInternalID) (*bsearch.DocumentMatch, error) {
	if err := s.start(); err != nil {
		return nil, err
	}
	for _, c := range s.cursors {
		if !c.done && bytes.Compare(c.cur.ID, id) < 0 {
			if err := c.advance(id); err != nil {
				return nil, err
			}
		}
	}
	return s.Next(ctx)
}

// Close closes the postings readers.
func (s *sumSearcher) Close() error {
	var first error
	for _, c := range s.cursors {
		if err := c.r.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Weight and SetQueryNorm: the scores are not normalised by the query (Bleve's
// queryNorm only matters for its TF-IDF model).
func (s *sumSearcher) Weight() float64        { return 1 }
func (s *sumSearcher) SetQueryNorm(_ float64) {}

// Count is an upper bound of the matching chunks.
func (s *sumSearcher) Count() uint64 {
	var n uint64
	for _, c := range s.cursors {
		n += c.count
	}
	return n
}

func (s *sumSearcher) Min() int { return 0 }

func (s *sumSearcher) Size() int {
	n := 64
	for _, c := range s.cursors {
		n += 96 + c.r.Size()
	}
	return n
}

// DocumentMatchPoolSize: Next holds one match at a time.
func (s *sumSearcher) DocumentMatchPoolSize() int { return 1 }

// scoreIDsQuery scores the listed chunks under a standard BM25 query. A Bleve boolean
// query with a doc-id filter would walk the whole union of the terms' postings and
// test each chunk against the filter (Bleve 2.5 filters by callback); here the ids,
// in index order, drive the walk and the postings are advanced to each one, so the
// cost is per listed chunk. The scores are those of standardQuery's own searcher
// (the same cursors, summed in the same order).
type scoreIDsQuery struct {
	terms *standardQuery
	ids   []string
}

// Searcher implements query.Query.
func (q *scoreIDsQuery) Searcher(ctx context.Context, r index.IndexReader, m mapping.IndexMapping, opt bsearch.SearcherOptions) (bsearch.Searcher, error) {
	s, err := q.terms.Searcher(ctx, r, m, opt)
	if err != nil {
		return nil, err
	}
	ids, err := r.DocIDReaderOnly(q.ids)
	if err != nil {
		_ = s.Close()
		return nil, fmt.Errorf("bm25: look up %d chunk ids: %w", len(q.ids), err)
	}
	return &idsSearcher{sumSearcher: s.(*sumSearcher), ids: ids, n: len(q.ids)}, nil
}

// idsSearcher is a sumSearcher restricted to the chunks ids lists.
type idsSearcher struct {
	*sumSearcher
	ids index.DocIDReader
	n   int
}

// Next returns the next listed chunk that matches a term, in index order.
func (s *idsSearcher) Next(ctx *bsearch.SearchContext) (*bsearch.DocumentMatch, error) {
	id, err := s.ids.Next()
	for err == nil && id != nil {
		var dm *bsearch.DocumentMatch
		dm, err = s.sumSearcher.Advance(ctx, id) // the first matching chunk at or after id
		if err != nil || dm == nil {
			return nil, err
		}
		if bytes.Equal(dm.IndexInternalID, id) {
			return dm, nil
		}
		// dm is past id: skip the listed ids before it; one may be dm itself (its
		// postings have moved on, so it must be answered now or never).
		for {
			if id, err = s.ids.Next(); err != nil || id == nil {
				ctx.DocumentMatchPool.Put(dm)
				return nil, err
			}
			if c := bytes.Compare(id, dm.IndexInternalID); c == 0 {
				return dm, nil
			} else if c > 0 {
				ctx.DocumentMatchPool.Put(dm)
				break
			}
		}
	}
	return nil, err
}

// Advance moves to the first listed matching chunk at or after id.
func (s *idsSearcher) Advance(ctx *bsearch.SearchContext, id index.IndexInternalID) (*bsearch.DocumentMatch, error) {
	for {
		dm, err := s.Next(ctx)
		if err != nil || dm == nil || bytes.Compare(dm.IndexInternalID, id) >= 0 {
			return dm, err
		}
		ctx.DocumentMatchPool.Put(dm)
	}
}

// Count is an upper bound of the matching chunks.
func (s *idsSearcher) Count() uint64 { return min(uint64(s.n), s.sumSearcher.Count()) }

// Size adds the id reader to the postings readers.
func (s *idsSearcher) Size() int { return s.sumSearcher.Size() + s.ids.Size() }

// Close closes the postings readers and the id reader.
func (s *idsSearcher) Close() error {
	err := s.sumSearcher.Close()
	if cerr := s.ids.Close(); err == nil {
		err = cerr
	}
	return err
}
