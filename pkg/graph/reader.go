package graph

import (
	"context"
	"fmt"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"
)

// MatchReader is what MatchEntities reads. The Store reads it with Cypher in one
// read transaction; an in-memory projection of the graph (the kg service's) reads
// it from memory. MatchWith runs the same algorithm over either, so both answer
// alike.
type MatchReader interface {
	// Totals counts the chunks and the ingested documents (placeholders excluded).
	Totals(ctx context.Context) (chunks, docs int64, err error)
	// EntityStats returns the entities of ids that exist, by id.
	EntityStats(ctx context.Context, ids []string) (map[string]EntityStats, error)
	// MatchChunks returns up to limit chunks mentioning any of the entities ids
	// (all exist), ordered by the number of matched entities (most first), then
	// Score (highest first), then chunk id; Score is
	// Σ confidence × ln(1 + totalChunks/max(chunk_freq, 1)) over the matched
	// entities, and each chunk's Mentions are sorted by entity id.
	MatchChunks(ctx context.Context, ids []string, totalChunks int64, limit int) ([]ChunkMatch, error)
}

// ExpandReader is what Expand reads (see MatchReader).
type ExpandReader interface {
	// EntityRefs returns the entities of ids that exist, by id.
	EntityRefs(ctx context.Context, ids []string) (map[string]EntityRef, error)
	// Neighbours returns, for each source in order, its best perSource neighbours
	// not in exclude: the relations between the source and a neighbour are grouped
	// by (neighbour, type, direction) and aggregated over their documents (see
	// "Evidence is kept per document" in the package documentation); groups whose
	// type is not in types (when types is not empty) or whose confidence is below
	// minConf are left out; the best are those of highest confidence, then weight,
	// then lowest neighbour id.
	Neighbours(ctx context.Context, sources, exclude, types []string, minConf float64, perSource int) ([]Neighbour, error)
}

// Neighbour is one aggregated edge between a source entity and a neighbour.
type Neighbour struct {
	Source string
	Target EntityRef
	Edge   Edge
}

// MatchWith answers MatchEntities from r.
func MatchWith(ctx context.Context, r MatchReader, entityIDs []string, limit int) (MatchResult, error) {
	ids, limit, err := checkMatch(entityIDs, limit)
	if err != nil {
		return MatchResult{}, fmt.Errorf("match entities: %w", err)
	}
	res, err := matchRead(ctx, r, ids, limit)
	if err != nil {
		return MatchResult{}, fmt.Errorf("match entities: %w", err)
	}
	return res, nil
}

// ExpandWith answers Expand from r.
func ExpandWith(ctx context.Context, r ExpandReader, q ExpandQuery) (ExpandResult, error) {
	q, err := q.normalise()
	if err != nil {
		return ExpandResult{}, fmt.Errorf("expand entities: %w", err)
	}
	res, err := expandRead(ctx, r, q)
	if err != nil {
		return ExpandResult{}, fmt.Errorf("expand entities: %w", err)
	}
	return res, nil
}

func checkMatch(entityIDs []string, limit int) ([]string, int, error) {
	ids, err := checkIDList("entity ids", entityIDs, maxMatchIDs)
	if err != nil {
		return nil, 0, err
	}
	if limit == 0 {
		limit = defaultLimit
	}
	if limit < 0 || limit > maxMatchLimit {
		return nil, 0, invalid("limit is %d, want 1..%d", limit, maxMatchLimit)
	}
	return ids, limit, nil
}

func matchRead(ctx context.Context, r MatchReader, ids []string, limit int) (MatchResult, error) {
	var out MatchResult
	var err error
	if out.TotalChunks, out.TotalDocuments, err = r.Totals(ctx); err != nil {
		return out, err
	}
	stats, err := r.EntityStats(ctx, ids)
	if err != nil {
		return out, err
	}
	present := make([]string, 0, len(ids))
	for _, id := range ids {
		if st, ok := stats[id]; ok {
			out.Entities = append(out.Entities, st)
			present = append(present, id)
		} else {
			out.Missing = append(out.Missing, id)
		}
	}
	if len(out.Entities) == 0 {
		return out, nil
	}
	out.Chunks, err = r.MatchChunks(ctx, present, out.TotalChunks, limit)
	return out, err
}

func expandRead(ctx context.Context, r ExpandReader, q ExpandQuery) (ExpandResult, error) {
	var out ExpandResult
	found, err := r.EntityRefs(ctx, q.EntityIDs)
	if err != nil {
		return out, err
	}
	for _, id := range q.EntityIDs {
		if ref, ok := found[id]; ok {
			out.Found = append(out.Found, ref)
		} else {
			out.Missing = append(out.Missing, id)
		}
	}
	if len(found) == 0 {
		return out, nil
	}
	out.Related, err = expandPaths(ctx, r, q)
	return out, err
}

// txReader reads with Cypher in one transaction.
type txReader struct{ tx neo4j.ManagedTransaction }
