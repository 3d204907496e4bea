package ranker

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"syscall"
	"testing"
	"time"
)

// benchCandidates builds n candidates shaped like a real query's: 100 from each
// retriever with overlaps, 384-dimension embeddings, ~800-byte texts, 3 chunks per
// document (sharing the document's title).
func benchCandidates(n, dim int) ([]Candidate, Query) {
	rng := rand.New(rand.NewPCG(1, 2))
	vocab := strings.Fields("sqlite connection cursor database module python row factory " +
		"transaction commit rollback index query table column schema type adapter converter " +
		"thread lock timeout journal backup blob function aggregate collation trace")
	sentence := func(k int) string {
		ws := make([]string, k)
		for i := range ws {
			ws[i] = vocab[rng.IntN(len(vocab))]
		}
		return strings.Join(ws, " ") + "."
	}
	emb := func() []float32 {
		v := make([]float32, dim)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	cands := make([]Candidate, n)
	var title string
	for i := range cands {
		if i%3 == 0 {
			title = sentence(4) // chunks of one document share its title
		}
		var text strings.Builder
		for range 10 {
			text.WriteString(sentence(12))
			text.WriteByte(' ')
		}
		c := Candidate{
			ChunkID:    fmt.Sprintf("c%04d", i),
			DocumentID: fmt.Sprintf("d%04d", i/3),
			URL:        fmt.Sprintf("https://docs.test/p%d", i/3),
			Title:      title,
			Headings:   []string{sentence(3), sentence(2)},
			Text:       text.String(),
			Published:  testNow.Add(-time.Duration(rng.IntN(800)) * 24 * time.Hour),
			Embedding:  emb(),
		}
		switch i % 3 {
		case 0:
			c.VectorSimilarity, c.HasVector = 0.3+0.6*rng.Float64(), true
		case 1:
			c.BM25Score, c.HasBM25 = 20*rng.Float64(), true
		default:
			c.GraphScore, c.HasGraph, c.GraphExpandedOnly = rng.Float64(), true, rng.IntN(2) == 0
			c.BM25Score, c.HasBM25 = 20*rng.Float64(), true
		}
		cands[i] = c
	}
	return cands, Query{Text: "how to commit a sqlite transaction", Entities: []string{"SQLite", "transaction"}, Embedding: emb()}
}

func BenchmarkRank(b *testing.B) {
	cands, q := benchCandidates(300, 384)
	r, err := New(Options{Now: func() time.Time { return testNow }, PreviewChars: 240})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		req  Request
	}{
		{"weighted", Request{Query: q, Limit: 10}},
		{"rrf", Request{Query: q, Fusion: RRF, Limit: 10}},
		{"weighted_mmr", Request{Query: q, MMR: true, Lambda: 0.7, Limit: 10}},
	} {
		b.Run(fmt.Sprintf("%s/n=300", bc.name), func(b *testing.B) {
			b.ReportAllocs()
			c0 := cpuTime()
			for b.Loop() {
				if _, err := r.Rank(bc.req, cands); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64((cpuTime()-c0).Nanoseconds())/float64(b.N), "cpu-ns/op")
		})
	}
}

func BenchmarkPreview(b *testing.B) {
	cands, q := benchCandidates(1, 8)
	terms := append(Terms(q.Text), q.Entities...)
	b.ReportAllocs()
	for b.Loop() {
		Preview(cands[0].Text, terms, 240)
	}
}

// cpuTime returns the user+system CPU time the process has used so far. Benchmarks
// report CPU per operation next to wall time because the shared benchmark machine is
// often oversubscribed, which inflates wall time but not CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
