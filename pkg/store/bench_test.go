package store

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/kgsearch/kgsearch/internal/testenv"
)

// Benchmarks need the test server (KGS_TEST_MARIADB_DSN). Rerun with
//
//	eval "$(deploy/local/mariadb.sh env)"
//	go test -run '^$' -bench . -benchtime 200x -timeout 30m ./pkg/store
//	KGS_BENCH_100K=1 go test -run '^$' -bench 'Search/100k' -benchtime 500x -timeout 90m ./pkg/store
//
// The 100k search benchmark first loads 100k vectors (tens of minutes on two
// shared cores), so it runs only with KGS_BENCH_100K=1. KGS_BENCH_REUSE=1 keeps
// the loaded corpus in database kgsearch_test_bench_<n> and reuses it next time.

// BenchmarkUpsert stores documents of 20 chunks (384-d) into a store that already
// holds 5k chunks, and reports chunks/s.
func BenchmarkUpsert(b *testing.B) {
	s := openStore(b, freshDatabase(b), testModel)
	g := newClustered(99, 384, 500, 1.0)
	loadCorpus(b, s, g, 50, 100, oneDomain, noTags)
	const perDoc = 20
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
	b.ReportMetric(float64(b.N*perDoc)/time.Since(start).Seconds(), "chunks/s")
}

// BenchmarkDelete deletes documents of 20 chunks (384-d) from a store that
// also holds 5k other chunks, one transaction each as DELETE /documents does,
// and reports documents/s: what a bulk delete of a host costs per batch.
func BenchmarkDelete(b *testing.B) {
	s := openStore(b, freshDatabase(b), testModel)
	g := newClustered(99, 384, 500, 1.0)
	loadCorpus(b, s, g, 50, 100, oneDomain, noTags)
	const perDoc = 20
	ctx := context.Background()
	ids := make([]string, b.N)
	for i := range b.N {
		d := &Document{URL: fmt.Sprintf("https://bench.example/%d", i), Title: "bench"}
		if _, err := s.UpsertDocument(ctx, d, makeChunks(g, perDoc, "bench"), []byte(`{}`)); err != nil {
			b.Fatal(err)
		}
		ids[i] = d.ID
	}
	b.ResetTimer()
	start := time.Now()
	for _, id := range ids {
		if _, err := s.DeleteDocument(ctx, id, nil); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "docs/s")
}

// BenchmarkSearch measures top-10 vector search latency (p50, p99) and recall@10
// against brute force, at several mhnsw_ef_search values, at 10k and (opt-in)
// 100k chunks of clustered 384-d vectors (500 topics, noise 1.0).
func BenchmarkSearch(b *testing.B) {
	sizes := []int{10_000}
	if os.Getenv("KGS_BENCH_100K") == "1" {
		sizes = append(sizes, 100_000)
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("%dk", n/1000), func(b *testing.B) {
			s, c, g := benchCorpus(b, n)
			ctx := context.Background()
			const rq = 100
			queries := make([][]float32, rq)
			exact := make([][]int64, rq)
			for i := range queries {
				queries[i] = g.next()
				exact[i] = exactTopK(queries[i], c.ids, c.vecs, 10)
			}
			for _, ef := range benchEfs() {
				b.Run(fmt.Sprintf("ef=%d", ef), func(b *testing.B) {
					var sum float64
					for i, q := range queries {
						hits, err := s.SearchVectors(ctx, q, 10, Filter{EfSearch: ef})
						if err != nil {
							b.Fatal(err)
						}
						sum += recallAt(hits, exact[i])
					}
					lat := make([]time.Duration, 0, b.N)
					b.ResetTimer()
					for i := range b.N {
						t0 := time.Now()
						if _, err := s.SearchVectors(ctx, queries[i%rq], 10, Filter{EfSearch: ef}); err != nil {
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

// benchCorpus returns a store holding n clustered 384-d chunks (100 per document)
// and their vectors. With KGS_BENCH_REUSE=1 a complete corpus from an earlier run
// is reused: the generator is deterministic, so only the vectors are regenerated.
func benchCorpus(b *testing.B, n int) (*Store, corpus, *vecGen) {
	b.Helper()
	g := newClustered(uint64(n), 384, 500, 1.0)
	var dsn string
	if os.Getenv("KGS_BENCH_REUSE") == "1" {
		dsn = persistentDatabase(b, fmt.Sprintf("kgsearch_test_bench_%d", n))
	} else {
		dsn = freshDatabase(b)
	}
	s := openStore(b, dsn, testModel)
	ctx := context.Background()
	st, err := s.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	if st.Chunks == int64(n) {
		var c corpus
		for d := range n / 100 {
			chunks := makeChunks(g, 100, "")
			for i := range chunks {
				c.ids = append(c.ids, ChunkID(DocumentID(fmt.Sprintf("https://example.com/doc/%d", d)), i))
				c.vecs = append(c.vecs, chunks[i].Embedding)
			}
		}
		b.Logf("reusing %d chunks", n)
		return s, c, g
	}
	for _, q := range []string{"DELETE FROM chunks", "DELETE FROM documents"} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	start := time.Now()
	c := loadCorpus(b, s, g, n/100, 100, oneDomain, noTags)
	el := time.Since(start)
	b.Logf("loaded %d chunks in %s (%.0f chunks/s)", n, el.Round(time.Millisecond), float64(n)/el.Seconds())
	return s, c, g
}

// persistentDatabase creates (if missing) and returns a DSN for a test database
// that is not dropped afterwards.
func persistentDatabase(b *testing.B, name string) string {
	base := testenv.MariaDBDSN(b)
	mc, err := mysql.ParseDSN(base)
	if err != nil {
		b.Fatal(err)
	}
	admin, err := sql.Open("mysql", base)
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.Exec("CREATE DATABASE IF NOT EXISTS `" + name + "`"); err != nil {
		b.Fatal(err)
	}
	mc.DBName = name
	return mc.FormatDSN()
}

// benchEfs is the mhnsw_ef_search values measured; KGS_BENCH_EF="100,400" overrides.
func benchEfs() []int {
	v := os.Getenv("KGS_BENCH_EF")
	if v == "" {
		return []int{20, 40, DefaultEfSearch, 200, 400}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}
