package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Filter restricts SearchVectors. Zero fields do not filter.
type Filter struct {
	Domains         []string  // document domain is one of these
	Tags            []string  // document carries every one of these tags
	Lang            string    // document language
	PublishedAfter  time.Time // published_at >= PublishedAfter
	PublishedBefore time.Time // published_at < PublishedBefore
	// EfSearch overrides the store's mhnsw_ef_search for this query (0: the store's).
	EfSearch int
}

// Hit is one vector search result: the chunk (with its embedding), a few fields of
// its document, and the cosine distance to the query (0 identical .. 2 opposite).
type Hit struct {
	Chunk
	URL         string
	Title       string
	Domain      string
	PublishedAt time.Time
	Distance    float64
}

// Similarity is 1 - Distance/2, in [0,1].
func (h Hit) Similarity() float64 { return 1 - h.Distance/2 }

// MaxK bounds SearchVectors' k.
const MaxK = 1000

// maxCandidates bounds how many nearest chunks a filtered search takes from the
// HNSW index before it falls back to an exact scan of the filtered rows.
const maxCandidates = 4000

// SearchVectors returns the k chunks nearest to vec by cosine distance.
//
// Without a filter it is one HNSW index read at the store's mhnsw_ef_search:
// ORDER BY VEC_DISTANCE_COSINE(embedding, ?) LIMIT k on chunks alone (joining
// documents in the same SELECT makes MariaDB walk the whole index, so documents
// are joined to the k rows afterwards). With a filter, the index yields a growing
// candidate set (10·k rows, then four times as many, up to 4000) that the filter is applied to, until
// k hits match; a filter so selective that 4000 candidates hold fewer than k
// matches is answered by an exact scan of the filtered rows instead, so filtered
// results are never silently short.
func (s *Store) SearchVectors(ctx context.Context, vec []float32, k int, f Filter) ([]Hit, error) {
	return searchVectors(ctx, s, vec, k, f, hitShape)
}

// VectorHit is a SearchVectorIDs result: a chunk, its document and the cosine
// distance to the query.
type VectorHit struct {
	ID         int64
	DocumentID string
	Distance   float64
}

// SearchVectorIDs is SearchVectors without the rows: the same chunks in the same
// order, as ids, documents and distances. Reading the text and embedding columns of
// the candidates was about two thirds of the query's cost in MariaDB; a caller that
// has the rows elsewhere (search's hydration, through its chunk cache) asks for ids.
func (s *Store) SearchVectorIDs(ctx context.Context, vec []float32, k int, f Filter) ([]VectorHit, error) {
	return searchVectors(ctx, s, vec, k, f, idShape)
}

// shape is what a vector search selects and how a row is scanned.
type shape[T any] struct {
	ann, exact func(where string) string
	scan       func(r scanner) (T, error)
}

var hitShape = shape[Hit]{ann: annSQL, exact: exactSQL, scan: func(r scanner) (Hit, error) {
	var h Hit
	var published sql.NullTime
	c, err := scanChunk(r, &h.URL, &h.Title, &h.Domain, &published, &h.Distance)
	h.Chunk, h.PublishedAt = c, published.Time
	return h, err
}}

var idShape = shape[VectorHit]{ann: annIDsSQL, exact: exactIDsSQL, scan: func(r scanner) (VectorHit, error) {
	var h VectorHit
	err := r.Scan(&h.ID, &h.DocumentID, &h.Distance)
	return h, err
}}

func searchVectors[T any](ctx context.Context, s *Store, vec []float32, k int, f Filter, sh shape[T]) ([]T, error) {
	m, err := s.Model(ctx)
	if err != nil {
		return nil, fmt.Errorf("search vectors: %w", err)
	}
	if err := checkVector(m, vec, "query"); err != nil {
		return nil, fmt.Errorf("search vectors: %w", err)
	}
	if k < 1 || k > MaxK {
		return nil, fmt.Errorf("search vectors: %w", invalid("k", "%d is outside 1..%d", k, MaxK))
	}
	ef := s.EfSearch()
	if f.EfSearch != 0 {
		if f.EfSearch < 1 || f.EfSearch > 10000 {
			return nil, fmt.Errorf("search vectors: %w", invalid("ef_search", "%d is outside 1..10000", f.EfSearch))
		}
		ef = f.EfSearch
	}
	where, args, err := f.where()
	if err != nil {
		return nil, fmt.Errorf("search vectors: %w", err)
	}
	qv := EncodeVector(vec)
	if where == "" {
		hits, err := queryHits(ctx, s, ef, sh.ann(""), qv, k, nil, k, sh.scan)
		if err != nil {
			return nil, fmt.Errorf("search vectors: %w", err)
		}
		if len(hits) == k {
			return hits, nil
		}
		// Fewer than k: the table holds fewer than k chunks (an exact scan is then
		// cheap) or the HNSW walk missed some; either way the exact answer is the
		// complete one, so the result is never silently short.
		if hits, err = queryHits(ctx, s, ef, sh.exact(""), qv, 0, nil, k, sh.scan); err != nil {
			return nil, fmt.Errorf("search vectors (exact): %w", err)
		}
		return hits, nil
	}
	for limit := max(10*k, 100); ; limit *= 4 {
		limit = min(limit, max(maxCandidates, k))
		hits, err := queryHits(ctx, s, ef, sh.ann(where), qv, limit, args, k, sh.scan)
		if err != nil {
			return nil, fmt.Errorf("search vectors: %w", err)
		}
		if len(hits) == k {
			return hits, nil
		}
		if limit >= maxCandidates {
			break
		}
	}
	hits, err := queryHits(ctx, s, ef, sh.exact(where), qv, 0, args, k, sh.scan)
	if err != nil {
		return nil, fmt.Errorf("search vectors (exact): %w", err)
	}
	return hits, nil
}

// queryHits runs an ann query (candidates > 0) or an exact one (candidates == 0).
func queryHits[T any](ctx context.Context, s *Store, ef int, query string, qv []byte, candidates int, filterArgs []any, k int,
	scan func(scanner) (T, error)) ([]T, error) {
	var all []any
	if candidates > 0 {
		all = append(all, qv, qv, candidates)
	} else {
		all = append(all, qv)
	}
	all = append(all, filterArgs...)
	if candidates == 0 {
		all = append(all, qv)
	}
	all = append(all, k)
	// ef is a validated integer: SET STATEMENT takes no placeholder for its value.
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf("SET STATEMENT mhnsw_ef_search = %d FOR\n", ef)+query, all...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	hits := make([]T, 0, k)
	for rows.Next() {
		h, err := scan(rows)
		if err != nil {
			return nil, err
		}
		hits = append(hits, h)
	}
	return hits, rows.Err()
}

// The query vector is cast to binary: a bound []byte arrives as a character
// string, which VECTOR columns and VEC_DISTANCE_COSINE refuse.
const (
	tColumns      = "t.id, t.document_id, t.ordinal, t.text, t.token_count, t.start_offset, t.end_offset, t.heading_path, t.embedding"
	docHitColumns = "d.url, d.title, d.domain, d.published_at"
)

// annInner reads the nearest chunks through the HNSW index.
// Arguments: vector, vector, candidate limit.
const annInner = `SELECT ` + chunkColumns + `, VEC_DISTANCE_COSINE(c.embedding, CAST(? AS BINARY)) AS dist
  FROM chunks c
  ORDER BY VEC_DISTANCE_COSINE(c.embedding, CAST(? AS BINARY))
  LIMIT ?`

// annSQL joins the index's candidates to their documents and filters them.
// Arguments: vector, vector, candidate limit, filter args, k.
func annSQL(where string) string {
	return `SELECT ` + tColumns + `, ` + docHitColumns + `, t.dist
FROM (` + annInner + `) t
JOIN documents d ON d.id = t.document_id` + where + `
ORDER BY t.dist
LIMIT ?`
}

// exactSQL scans the filtered rows without the vector index.
// Arguments: vector, filter args, vector, k.
func exactSQL(where string) string {
	return `SELECT ` + chunkColumns + `, ` + docHitColumns + `, VEC_DISTANCE_COSINE(c.embedding, CAST(? AS BINARY)) AS dist
FROM documents d
JOIN chunks c IGNORE INDEX FOR ORDER BY (chunks_embedding) ON c.document_id = d.id` + where + `
ORDER BY VEC_DISTANCE_COSINE(c.embedding, CAST(? AS BINARY))
LIMIT ?`
}

// annIDsSQL is annSQL selecting ids, documents and distances only. Arguments as
// annSQL's.
func annIDsSQL(where string) string {
	return `SELECT t.id, t.document_id, t.dist
FROM (SELECT c.id, c.document_id, VEC_DISTANCE_COSINE(c.embedding, CAST(? AS BINARY)) AS dist
  FROM chunks c
  ORDER BY VEC_DISTANCE_COSINE(c.embedding, CAST(? AS BINARY))
  LIMIT ?) t
JOIN documents d ON d.id = t.document_id` + where + `
ORDER BY t.dist
LIMIT ?`
}

// exactIDsSQL is exactSQL selecting ids, documents and distances only. Arguments as
// exactSQL's.
func exactIDsSQL(where string) string {
	return `SELECT c.id, c.document_id, VEC_DISTANCE_COSINE(c.embedding, CAST(? AS BINARY)) AS dist
FROM documents d
JOIN chunks c IGNORE INDEX FOR ORDER BY (chunks_embedding) ON c.document_id = d.id` + where + `
ORDER BY VEC_DISTANCE_COSINE(c.embedding, CAST(? AS BINARY))
LIMIT ?`
}

// where builds the filter's WHERE clause with placeholders only.
func (f Filter) where() (string, []any, error) {
	var conds []string
	var args []any
	if len(f.Domains) > 100 {
		return "", nil, invalid("filter domains", "%d domains, at most 100", len(f.Domains))
	}
	if len(f.Tags) > maxTags {
		return "", nil, invalid("filter tags", "%d tags, at most %d", len(f.Tags), maxTags)
	}
	if len(f.Domains) > 0 {
		conds = append(conds, "d.domain IN ("+placeholders(len(f.Domains))+")")
		for _, d := range f.Domains {
			args = append(args, strings.ToLower(d))
		}
	}
	for _, t := range f.Tags {
		conds = append(conds, "JSON_CONTAINS(d.tags, JSON_QUOTE(?))")
		args = append(args, t)
	}
	if f.Lang != "" {
		conds = append(conds, "d.lang = ?")
		args = append(args, f.Lang)
	}
	if !f.PublishedAfter.IsZero() {
		conds = append(conds, "d.published_at >= ?")
		args = append(args, f.PublishedAfter.UTC())
	}
	if !f.PublishedBefore.IsZero() {
		conds = append(conds, "d.published_at < ?")
		args = append(args, f.PublishedBefore.UTC())
	}
	if !f.PublishedAfter.IsZero() && !f.PublishedBefore.IsZero() && !f.PublishedAfter.Before(f.PublishedBefore) {
		return "", nil, invalid("filter published range", "after %s is not before %s", f.PublishedAfter, f.PublishedBefore)
	}
	if len(conds) == 0 {
		return "", nil, nil
	}
	return "\nWHERE " + strings.Join(conds, " AND "), args, nil
}
