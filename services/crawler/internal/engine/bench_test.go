package engine

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/embed/embedtest"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/crawler/internal/canon"
	"github.com/kgsearch/kgsearch/services/crawler/internal/chunk"
	"github.com/kgsearch/kgsearch/services/crawler/internal/fetch"
	"github.com/kgsearch/kgsearch/services/crawler/internal/netguard"
	"github.com/kgsearch/kgsearch/services/crawler/internal/pipeline"
)

// BenchmarkPythonDocs crawls the Python 3.11 manual served by
// deploy/local/pydocs.sh (KGS_PYDOCS_URL, e.g. http://127.0.0.1:8099/index.html)
// with the service's default settings, and reports pages/s and per-stage
// times: first without embedding (a hash embedder stands in), then the
// embedding throughput of all-MiniLM-L6-v2 on the chunks that crawl
// produced (the first KGS_PYDOCS_EMBED_SAMPLE of them, 2000), then the whole
// pipeline with the real model. Run with -benchtime=1x; KGS_PYDOCS_MAX_PAGES
// (300) and KGS_PYDOCS_DEPTH (3) size the crawls.
func BenchmarkPythonDocs(b *testing.B) {
	seed := os.Getenv("KGS_PYDOCS_URL")
	if seed == "" {
		b.Skip("KGS_PYDOCS_URL not set: start deploy/local/pydocs.sh and set it to $(deploy/local/pydocs.sh url)")
	}
	maxPages, depth := envInt("KGS_PYDOCS_MAX_PAGES", 300), envInt("KGS_PYDOCS_DEPTH", 3)
	allow := []string{"127.0.0.1:8099"}
	if u := os.Getenv("KGS_PYDOCS_ALLOW"); u != "" {
		allow = []string{u}
	}
	realModel := func(b *testing.B) embed.Embedder {
		dir, lib := os.Getenv("KGS_EMBED_MODEL_DIR"), os.Getenv("KGS_ORT_LIB")
		if dir == "" || lib == "" {
			b.Skip("KGS_EMBED_MODEL_DIR and KGS_ORT_LIB not set (deploy/local/model.sh env)")
		}
		e, err := embed.New(embed.Config{ModelDir: dir, ORTLib: lib}, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		return e
	}

	// The crawl without embedding leaves its chunks here for the embedding run.
	hashDSN := freshDatabase(b)
	crawled := false
	b.Run("pipeline-no-embedding", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			dsn := hashDSN
			if i > 0 {
				dsn = freshDatabase(b)
			}
			benchCrawl(b, dsn, embedtest.NewHash(384), seed, allow, maxPages, depth)
		}
		crawled = true
	})
	b.Run("embedding-minilm", func(b *testing.B) {
		if !crawled {
			b.Skip("needs the chunks of pipeline-no-embedding")
		}
		e := realModel(b)
		st, err := store.Open(context.Background(), store.Config{DSN: hashDSN}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer st.Close()
		var texts []string
		page, err := st.ListDocuments(context.Background(), store.ListOptions{Limit: 1000})
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range page.Documents {
			chunks, err := st.DocumentChunks(context.Background(), d.ID)
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range chunks {
				texts = append(texts, c.Text)
			}
		}
		if n := envInt("KGS_PYDOCS_EMBED_SAMPLE", 2000); len(texts) > n {
			texts = texts[:n]
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			start := time.Now()
			if _, err := e.Embed(context.Background(), texts); err != nil {
				b.Fatal(err)
			}
			el := time.Since(start)
			b.ReportMetric(float64(len(texts))/el.Seconds(), "chunks/s")
			b.ReportMetric(float64(len(texts)), "chunks")
			b.Logf("embedded %d chunks in %s: %.1f chunks/s", len(texts), el.Round(time.Millisecond), float64(len(texts))/el.Seconds())
		}
	})
	b.Run("end-to-end-minilm", func(b *testing.B) {
		e := realModel(b)
		for i := 0; i < b.N; i++ {
			benchCrawl(b, freshDatabase(b), e, seed, allow, maxPages, depth)
		}
	})
}

func envInt(key string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(key)); err == nil && n > 0 {
		return n
	}
	return def
}

// benchCrawl runs one crawl with the service's default settings and reports it.
func benchCrawl(b *testing.B, dsn string, e embed.Embedder, seed string, allow []string, maxPages, depth int) {
	b.Helper()
	m := e.Info()
	st, err := store.Open(context.Background(), store.Config{DSN: dsn, Model: store.Model{Name: m.Name, Dims: m.Dims}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	g, _ := netguard.New(netguard.Options{Allow: allow})
	f, err := fetch.New(fetch.Config{UserAgent: "kgsearch-crawler/1.0", Guard: g, Retries: 3})
	if err != nil {
		b.Fatal(err)
	}
	sp, err := chunk.New(chunk.Options{MaxTokens: 256, Overlap: 32, MinTokens: 48})
	if err != nil {
		b.Fatal(err)
	}
	eng := New(Config{Workers: 4, Limits: Limits{MaxPages: 100000, MaxDepth: 20}, Canon: canon.DefaultOptions(), Poll: 50 * time.Millisecond},
		Deps{Store: st, Fetcher: f, Guard: g, Indexer: pipeline.New(st, e, pipeline.ChunkSplitter{S: sp}, "256/32")}, nil, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = eng.Run(ctx) }()
	defer func() { cancel(); <-done }()

	id := createJob(b, st, Spec{URL: seed, MaxDepth: &depth, MaxPages: maxPages})
	start := time.Now()
	status := waitJob(b, eng, id, 2*time.Hour)
	wall := time.Since(start)
	c := status.Counters
	pages := float64(c.Stored + c.Unchanged + c.Empty)
	b.ReportMetric(pages/wall.Seconds(), "pages/s")
	b.ReportMetric(float64(c.Chunks)/wall.Seconds(), "chunks/s")
	b.ReportMetric(pages, "pages")
	b.ReportMetric(float64(c.Chunks), "chunks")
	per := func(ms float64) float64 { return ms / pages }
	s := status.Stages
	b.ReportMetric(per(s.Fetch), "fetch-ms/page")
	b.ReportMetric(per(s.Extract), "extract-ms/page")
	b.ReportMetric(per(s.Chunk), "chunk-ms/page")
	b.ReportMetric(per(s.Embed), "embed-ms/page")
	b.ReportMetric(per(s.Store), "store-ms/page")
	b.Logf("%s: %s in %s; counters %+v; stage totals (ms, summed over %d workers) %+v; bytes %d",
		m.Name, status.Status, wall.Round(time.Millisecond), c, 4, s, c.Bytes)
	for _, e := range status.LastErrors {
		b.Logf("error: %s", e)
	}
	fmt.Fprintf(os.Stderr, "BENCH %s pages=%d chunks=%d wall_ms=%d fetch=%.0f extract=%.0f chunk=%.0f embed=%.0f store=%.0f failed=%d skipped=%v\n",
		m.Name, int(pages), c.Chunks, wall.Milliseconds(), s.Fetch, s.Extract, s.Chunk, s.Embed, s.Store, c.Failed, c.Skipped)
}
