package ranker_test

import (
	"fmt"
	"time"

	"github.com/kgsearch/kgsearch/pkg/ranker"
)

func Example() {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r, err := ranker.New(ranker.Options{Now: func() time.Time { return now }, PreviewChars: 60})
	if err != nil {
		panic(err)
	}
	// The kg service is down: drop the graph signal and renormalise the rest.
	w, err := ranker.DefaultWeights().Renormalize(ranker.Graph)
	if err != nil {
		panic(err)
	}
	cands := []ranker.Candidate{
		{ChunkID: "1", DocumentID: "a", Title: "Using SQLite transactions", Published: now.AddDate(0, 0, -3),
			Text:             "Transactions group statements. Call commit to make a transaction durable.",
			VectorSimilarity: 0.82, HasVector: true, BM25Score: 7.5, HasBM25: true},
		{ChunkID: "2", DocumentID: "b", Title: "Cursor objects",
			Text:             "A cursor runs statements and fetches rows.",
			VectorSimilarity: 0.64, HasVector: true},
	}
	res, err := r.Rank(ranker.Request{Query: ranker.Query{Text: "commit a transaction"}, Weights: w, Limit: 10}, cands)
	if err != nil {
		panic(err)
	}
	for _, x := range res {
		b := x.Breakdown
		fmt.Printf("%d %s %.3f vector=%.2f bm25=%.2f recency=%.1f title=%.2f %q\n",
			x.Rank, x.Candidate.ChunkID, x.Score, b.Vector, b.BM25, b.Recency, b.Title, x.Preview)
	}
	// Default weights without graph: vector 7/13, bm25 4/13, recency 2/13, title 0
	// (its signal is computed and shown: 1 of 2 terms).
	// Vector is min-max over the retriever's hits: .82 → 1, .64 → 0.
	// 1: (7·1 + 4·1 + 2·1)/13 = 1
	// 2: (2·.2)/13 = .031 (undated: recency .2)

	// Output:
	// 1 1 1.000 vector=1.00 bm25=1.00 recency=1.0 title=0.50 "Call commit to make a transaction durable."
	// 2 2 0.031 vector=0.00 bm25=0.00 recency=0.2 title=0.00 "A cursor runs statements and fetches rows."
}
