package entitygraph

import (
	"cmp"
	"math"
	"slices"

	"github.com/kgsearch/kgsearch/pkg/graph"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/pkg/ranker"
)

// Specificity is the IDF-like weight of an entity mentioned by chunkFreq of
// totalChunks chunks: ln(1 + N/cf) / ln(1 + N), in (0, 1].
func Specificity(chunkFreq, totalChunks int64) float64 {
	n := float64(max(totalChunks, 1))
	cf := float64(min(max(chunkFreq, 1), max(totalChunks, 1)))
	return math.Log1p(n/cf) / math.Log1p(n)
}

// Score computes the graph relevance of the matched chunks (see the package
// documentation) and returns the best limit of them.
func Score(res graph.MatchResult, limit int) []kgapi.ChunkMatch {
	q := len(res.Entities)
	if q == 0 {
		return []kgapi.ChunkMatch{}
	}
	w := make(map[string]float64, q)
	for _, e := range res.Entities {
		w[e.ID] = Specificity(e.ChunkFreq, res.TotalChunks)
	}
	out := make([]kgapi.ChunkMatch, 0, len(res.Chunks))
	for _, ch := range res.Chunks {
		m := kgapi.ChunkMatch{ChunkID: ch.ChunkID, DocumentID: ch.DocumentID, Ordinal: int(ch.Ordinal), Matched: []string{}}
		sum := 0.0
		for _, mn := range ch.Mentions {
			we, ok := w[mn.EntityID]
			if !ok {
				continue
			}
			sum += ranker.Clamp01(mn.Confidence) * we
			m.Matched = append(m.Matched, mn.EntityID)
		}
		if len(m.Matched) == 0 {
			continue
		}
		m.Score = sum / float64(q)
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b kgapi.ChunkMatch) int {
		if c := cmp.Compare(b.Score, a.Score); c != 0 {
			return c
		}
		if c := cmp.Compare(len(b.Matched), len(a.Matched)); c != 0 {
			return c
		}
		return cmp.Compare(a.ChunkID, b.ChunkID)
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
