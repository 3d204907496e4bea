package store

import (
	"context"
	"fmt"
	"os"
	"slices"

	"testing"
	"time"
)

// Benchmarks need the test server (KGS_TEST_MARIADB_DSN). Rerun with
//
//	eval "$(deploy/local/mariadb.sh env)"
//	go test -run '^$' -bench . -benchtime 200x ./pkg/store
//	KGS_BENCH_100K=1 go test -run '^$' -bench 'Search/100k' -benchtime 500x -timeout 60m ./pkg/store
//
// The 100k search benchmark loads 100k vectors first (several minutes on two
// cores), so it runs only with KGS_BENCH_100K=1.

// BenchmarkUpsert stores documents of 20 chunks (384-d) and reports chunks/s.
func BenchmarkUpsert(b *testing.B) {
	for _, perDoc := range []int{20} {
		b.Run(fmt.Sprintf("chunks=%d", perDoc), func(b *testing.B) {
			s := openStore(b, freshDatabase(b), testModel)
			g := newClustered(99, 384, 100, 1.0)
			docs := make([][]Chunk, b.N)
			for i := range docs {
				docs[i] = makeChunks(g, perDoc, "bench")
			}
			ctx := context.Background()
			b.ResetTimer()
			start := time.Now()
			for i := range b.N {
				d := &Document{URL: fmt.Sprintf("https://bench.example/%d", i), Title: "bench"}
				if _, err := s.UpsertDocument(ctx, d, docs[i], []byte(`{}`)); err != nil {
					b.Fatal(err)
				}
			}
			el := time.Since(start)
			b.ReportMetric(float64(b.N*perDoc)/el.Seconds(), "chunks/s")
		})
	}
}

// BenchmarkSearch measures top-10 vector search latency (p50, p99) and recall@10
// against brute force at the default ef_search, at 10k and (opt-in) 100k chunks.
func BenchmarkSearch(b *testing.B) {
	sizes := []int{10_000}
	if os.Getenv("KGS_BENCH_100K") == "1" {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			s, c, g := benchCorpus(b, n)
			ctx := context.Background()
			for _, ef := range []int{20, DefaultEfSearch, 128} {
				b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
					// Recall over a fixed query set, outside the timer.
					const rq = 50
					var sum float64
					for range rq {
						q := g.next()
						hits, err := s.SearchVectors(ctx, q, 10, Filter{EfSearch: ef})
						if err != nil {
							b.Fatal(err)
						}
						sum += recallAt(hits, exactTopK(q, c.ids, c.vecs, 10))
					}
					queries := make([][]float32, 256)
					for i := range queries {
						queries[i] = g.next()
					}
					lat := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for i := range b.N {
						t0 := time.Now()
						if _, err := s.SearchVectors(ctx, queries[i%len(queries)], 10, Filter{EfSearch: ef}); err != nil {
							b.Fatal(err)
						}
						lat = append(lat, time.Since(t0))
					}
					b.StopTimer()
					slices.Sort(lat)
					b.ReportMetric(float64(pct(lat, 50).Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(pct(lat, 99).Microseconds())/1000, "p99-ms")
					b.ReportMetric(sum/rq, "recall@10")
				})
			}
		})
	}
}

func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := (len(sorted)*p + 99) / 100
	return sorted[max(0, min(i, len(sorted))-1)]
}

// benchCorpus loads n clustered 384-d chunks (100 per document) into a fresh database.
func benchCorpus(b *testing.B, n int) (*Store, corpus, *vecGen) {
	b.Helper()
	s := openStore(b, freshDatabase(b), testModel)
	g := newClustered(uint64(n), 384, 500, 1.0)
	start := time.Now()
	c := loadCorpus(b, s, g, n/100, 100, oneDomain, noTags)
	b.Logf("loaded %d chunks in %s (%.0f chunks/s)", n, time.Since(start).Round(time.Millisecond), float64(n)/time.Since(start).Seconds())
	return s, c, g
}
