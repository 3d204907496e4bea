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

// SearchVectors returns the k chunks nearest to vec by cosine distance, through the
// HNSW index (ORDER BY VEC_DISTANCE_COSINE(embedding, ?) LIMIT k) at the store's
// mhnsw_ef_search. Filters are applied to the index's candidates in distance order;
// a very selective filter makes MariaDB walk further through the graph (or, when the
// optimizer prefers, scan the filtered rows exactly).
func (s *Store) SearchVectors(ctx context.Context, vec []float32, k int, f Filter) ([]Hit, error) {
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
	// ef is a validated integer: SET STATEMENT takes no placeholder for its value.
	q := fmt.Sprintf(`SET STATEMENT mhnsw_ef_search = %d FOR
SELECT %s, d.url, d.title, d.domain, d.published_at, VEC_DISTANCE_COSINE(c.embedding, ?) AS dist
FROM chunks c JOIN documents d ON d.id = c.document_id%s
ORDER BY VEC_DISTANCE_COSINE(c.embedding, ?)
LIMIT ?`, ef, chunkColumns, where)
	all := append([]any{qv}, args...)
	all = append(all, qv, k)
	rows, err := s.db.QueryContext(ctx, q, all...)
	if err != nil {
		return nil, fmt.Errorf("search vectors: %w", err)
	}
	defer rows.Close()
	hits := make([]Hit, 0, k)
	for rows.Next() {
		var h Hit
		var published sql.NullTime
		c, err := scanChunk(rows, &h.URL, &h.Title, &h.Domain, &published, &h.Distance)
		if err != nil {
			return nil, fmt.Errorf("search vectors: %w", err)
		}
		h.Chunk, h.PublishedAt = c, published.Time
		hits = append(hits, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search vectors: %w", err)
	}
	return hits, nil
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
