package bm25

import (
	"context"
	"math"
	"path/filepath"
	"testing"
)

// bm25Term is the standard BM25 contribution of one term in one field, written out
// independently of scoring.go.
func bm25Term(n, df, tf, dl, avgdl float64) float64 {
	idf := math.Log(1 + (n-df+0.5)/(df+0.5))
	return idf * tf * 2.2 / (tf + 1.2*(0.25+0.75*dl/avgdl))
}

func TestStandardBM25Scores(t *testing.T) {
	ix := openTest(t)
	apply(t, ix,
		upsertDoc(1, "d1", Chunk{ID: "c1", Title: "Alpha", Text: "alpha beta gamma delta"}),
		upsertDoc(2, "d2", Chunk{ID: "c2", Title: "Zeta", Text: "beta beta"}),
		upsertDoc(3, "d3", Chunk{ID: "c3", Title: "Kappa", Text: "gamma"}),
	)
	score := func(q, id string) float64 {
		t.Helper()
		hits, err := ix.Search(context.Background(), q, 10, Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range hits {
			if h.ChunkID == id {
				return h.Score
			}
		}
		t.Fatalf("%q: chunk %s not found in %+v", q, id, hits)
		return 0
	}
	avgText, avgTitle := 7.0/3, 1.0
	tests := []struct {
		q, id string
		want  float64
	}{
		// tf 2 of a 2-token text, df 2 of 3 chunks.
		{"beta", "c2", bm25Term(3, 2, 2, 2, avgText)},
		// A match in the title and in the text: the two field scores summed, with no
		// coordination factor (Bleve's disjunction would multiply by 2/3 here).
		{"alpha", "c1", bm25Term(3, 1, 1, 1, avgTitle) + bm25Term(3, 1, 1, 4, avgText)},
		// Two query terms, one matching: the term's score alone (no 1/2 factor).
		{"gamma omega", "c3", bm25Term(3, 2, 1, 1, avgText)},
		// A term repeated in the query counts once.
		{"gamma gamma", "c3", bm25Term(3, 2, 1, 1, avgText)},
	}
	for _, tt := range tests {
		if got := score(tt.q, tt.id); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%q, chunk %s: score %.12f, want %.12f", tt.q, tt.id, got, tt.want)
		}
	}
	// ScoreIDs scores under the same query.
	hits, err := ix.ScoreIDs(context.Background(), "beta", []string{"c2", "c3"})
	if err != nil || len(hits) != 1 || hits[0].ChunkID != "c2" || math.Abs(hits[0].Score-bm25Term(3, 2, 2, 2, avgText)) > 1e-9 {
		t.Errorf("ScoreIDs: %+v, %v", hits, err)
	}
}

func TestFieldLengthTotals(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "bm25")
	ix, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	stats := func() fieldStats { return *ix.stats.Load() }
	two := upsertDoc(1, "d", Chunk{ID: "a", Title: "Connection pools", Headings: []string{"Pooling", "Sizes of pools"}, Text: "reuse the connections"},
		Chunk{ID: "b", Title: "Connection pools", Text: "one two three four"})
	apply(t, ix, two)
	// The English analyzer drops stop words ("the", "of"): title 2, headings 1+2, text 2 and 4.
	want := fieldStats{Chunks: 2, Sum: [numScored]uint64{4, 3, 6}}
	if got := stats(); got != want {
		t.Fatalf("after upsert: %+v, want %+v", got, want)
	}
	apply(t, ix, two) // re-applying changes nothing
	if got := stats(); got != want {
		t.Errorf("after re-applying: %+v, want %+v", got, want)
	}
	apply(t, ix, upsertDoc(2, "d", Chunk{ID: "b", Title: "Pools", Text: "one"}))
	want = fieldStats{Chunks: 1, Sum: [numScored]uint64{1, 0, 1}}
	if got := stats(); got != want {
		t.Errorf("after replacing the document with one chunk: %+v, want %+v", got, want)
	}
	// Chunks added and deleted within one batch count once or not at all.
	apply(t, ix,
		Op{Seq: 3, Kind: UpsertChunk, Chunks: []Chunk{{ID: "c", DocumentID: "e", Title: "x", Text: "alpha beta"}}},
		Op{Seq: 3, Kind: UpsertChunk, Chunks: []Chunk{{ID: "c", DocumentID: "e", Title: "x", Text: "alpha"}}},
		Op{Seq: 4, Kind: UpsertChunk, Chunks: []Chunk{{ID: "g", DocumentID: "e", Text: "gone"}}},
		Op{Seq: 4, Kind: DeleteChunk, ChunkIDs: []string{"g", "never-indexed"}},
	)
	want = fieldStats{Chunks: 2, Sum: [numScored]uint64{2, 0, 2}}
	if got := stats(); got != want {
		t.Errorf("after a mixed batch: %+v, want %+v", got, want)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(dir) // kept in the index
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got := stats(); got != want {
		t.Errorf("after reopening: %+v, want %+v", got, want)
	}
	apply(t, ix, Op{Seq: 5, Kind: DeleteDocument, DocumentID: "d"}, Op{Seq: 5, Kind: DeleteDocument, DocumentID: "e"})
	if got := stats(); got != (fieldStats{}) {
		t.Errorf("after deleting everything: %+v, want zero", got)
	}
}
