package pipeline_test

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/embed"
	"github.com/kgsearch/kgsearch/pkg/store"
	"github.com/kgsearch/kgsearch/services/search/internal/pipeline"
	"github.com/kgsearch/kgsearch/services/search/internal/searchtest"
)

// BenchmarkSearch measures the full pipeline (parse; vector, graph and BM25 retrieval
// in parallel; expansion; hydration; ranking; formatting with both token counts) on a
// synthetic corpus, at 1 and 8 concurrent clients, next to a bare MariaDB vector top-10
// in the same run. It reports p50 and p99 latency (ms), throughput (qps) and the
// process's resident memory.
//
//	KGS_BENCH_CHUNKS=100000  corpus size in chunks (default 2000; 10 chunks a document)
//	KGS_BENCH_CANDIDATES=50  candidates per retriever (SEARCH_CANDIDATES; default 100)
//	KGS_BENCH_QUERY_WORDS=all  query words from the whole vocabulary (default: rarer half)
//	KGS_BENCH_REUSE=1        keep the corpus in kgsearch_test_searchbench_<n> and the
//	                         Bleve index in $TMPDIR/kgsearch-searchbench-<n> for reuse
//
// The corpus and the queries are embedded with the hash embedder (384 dimensions), so
// the numbers exclude the real model's query embedding; BenchmarkEmbedQuery
// measures that on its own.
// The kg service is the in-process fake on loopback HTTP.
func BenchmarkSearch(b *testing.B) {
	n := 2000
	if s := os.Getenv("KGS_BENCH_CHUNKS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 100 {
			b.Fatalf("KGS_BENCH_CHUNKS=%q: want an integer >= 100", s)
		}
		n = v
	}
	e, queries := benchEnv(b, n)
	ctx := context.Background()
	for _, clients := range []int{1, 8} {
		b.Run(fmt.Sprintf("pipeline/chunks=%d/clients=%d", n, clients), func(b *testing.B) {
			i := 0
			var mu sync.Mutex
			var phases pipeline.PhaseMS
			measure(b, clients, func() error {
				mu.Lock()
				q := queries[i%len(queries)]
				i++
				mu.Unlock()
				r, err := e.Pipeline.Search(ctx, pipeline.Request{Query: q, K: 10, Expand: true})
				if err == nil && len(r.Degraded) > 0 {
					err = fmt.Errorf("degraded %v", r.Degraded)
				}
				if err == nil {
					mu.Lock()
					phases.Parse += r.PhaseMS.Parse
					phases.Retrieve += r.PhaseMS.Retrieve
					phases.Expand += r.PhaseMS.Expand
					phases.Rank += r.PhaseMS.Rank
					phases.Format += r.PhaseMS.Format
					mu.Unlock()
				}
				return err
			})
			// Mean phase times (wall clock inside the pipeline, so they include waiting
			// for the CPU when clients > cores).
			n := float64(b.N)
			b.ReportMetric(phases.Retrieve/n, "retrieve_ms")
			b.ReportMetric(phases.Expand/n, "expand_ms")
			b.ReportMetric(phases.Rank/n, "rank_ms")
			b.ReportMetric(phases.Format/n, "format_ms")
		})
		vecs, err := e.Embedder.Embed(ctx, queries)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("vector-top10/chunks=%d/clients=%d", n, clients), func(b *testing.B) {
			i := 0
			var mu sync.Mutex
			measure(b, clients, func() error {
				mu.Lock()
				v := vecs[i%len(vecs)]
				i++
				mu.Unlock()
				_, err := e.Store.SearchVectors(ctx, v, 10, store.Filter{})
				return err
			})
		})
	}
}

// measure runs b.N calls spread over clients goroutines and reports latency
// percentiles, throughput and memory.
func measure(b *testing.B, clients int, call func() error) {
	lat := make([]time.Duration, b.N)
	var next int
	var mu sync.Mutex
	var wg sync.WaitGroup
	var failed error
	b.ResetTimer()
	start := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				k := next
				next++
				mu.Unlock()
				if k >= b.N {
					return
				}
				t0 := time.Now()
				err := call()
				lat[k] = time.Since(t0)
				if err != nil {
					mu.Lock()
					failed = err
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	b.StopTimer()
	if failed != nil {
		b.Fatal(failed)
	}
	slices.Sort(lat)
	pct := func(p int) float64 {
		i := (len(lat)*p + 99) / 100
		return float64(lat[max(0, min(i, len(lat))-1)].Microseconds()) / 1000
	}
	b.ReportMetric(pct(50), "p50_ms")
	b.ReportMetric(pct(99), "p99_ms")
	b.ReportMetric(float64(b.N)/el.Seconds(), "qps")
	b.ReportMetric(rssMB(), "rss_MB")
}

func rssMB() float64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && f[0] == "VmRSS:" {
				kb, _ := strconv.ParseFloat(f[1], 64)
				return kb / 1024
			}
		}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.Sys) / (1 << 20)
}

// Entities sprinkled over the corpus (names the query extractor knows).
var benchEntities = []string{"PostgreSQL", "Redis", "Kubernetes", "Docker", "Python", "MariaDB", "NGINX", "Kafka",
	"Elasticsearch", "Linux", "SQLite", "MongoDB", "GraphQL", "TensorFlow", "Terraform", "Ansible", "Prometheus", "Grafana", "RabbitMQ", "Cassandra"}

var benchWords = strings.Fields(`server client request response cache index query table column row schema replica
primary standby backup restore snapshot log write read commit transaction lock latency throughput memory disk network
socket thread process container image volume cluster node pod service deployment config file directory path user
password token session cookie header body payload message queue topic partition offset consumer producer stream
batch job task worker scheduler cron timer event handler callback promise future async await loop channel buffer
vector embedding model training inference tensor gradient layer neuron graph edge vertex path shortest tree heap
hash map set list array string integer float boolean null error exception retry timeout backoff circuit breaker
metric alert dashboard trace span sampling profile benchmark test mock fixture assert coverage lint format build
compile link binary package module import export version release tag branch merge rebase conflict patch diff`)

// benchEnv builds (or, with KGS_BENCH_REUSE=1, reuses) a corpus of n chunks and
// returns the environment and the queries.
func benchEnv(b *testing.B, n int) (*searchtest.Env, []string) {
	b.Helper()
	o := searchtest.Options{ManualKG: true, Dims: 384}
	if s := os.Getenv("KGS_BENCH_CANDIDATES"); s != "" {
		c, err := strconv.Atoi(s)
		if err != nil || c < 10 {
			b.Fatalf("KGS_BENCH_CANDIDATES=%q: want an integer >= 10", s)
		}
		o.Pipeline = func(po *pipeline.Options) { po.Candidates = c }
	}
	if os.Getenv("KGS_BENCH_REUSE") == "1" {
		o.DSN = persistentDB(b, fmt.Sprintf("kgsearch_test_searchbench_%d", n))
		o.IndexDir = filepath.Join(os.TempDir(), fmt.Sprintf("kgsearch-searchbench-%d", n))
	}
	e := searchtest.New(b, o)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(uint64(n), 7))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(uint64(n), 8)), 1.2, 4, uint64(len(benchWords)-1))
	docs := n / 10
	mentions := make([]map[string]float64, len(benchEntities))
	for i := range mentions {
		mentions[i] = map[string]float64{}
	}
	docOf := map[string]string{}
	st, err := e.Store.Stats(ctx)
	if err != nil {
		b.Fatal(err)
	}
	load := st.Chunks != int64(n)
	if load && st.Chunks > 0 {
		b.Fatalf("database %s holds %d chunks, want 0 or %d; drop it", o.DSN, st.Chunks, n)
	}
	start := time.Now()
	var wg sync.WaitGroup
	work := make(chan searchtest.Doc, 16)
	errc := make(chan error, 4)
	if load {
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for d := range work {
					if err := upsertBench(ctx, e, d); err != nil {
						select {
						case errc <- err:
						default:
						}
					}
				}
			}()
		}
	}
	for d := range docs {
		ent := rng.IntN(len(benchEntities))
		url := fmt.Sprintf("https://bench.example/%s/%d", strings.ToLower(benchEntities[ent]), d)
		doc := searchtest.Doc{URL: url, Title: benchEntities[ent] + " " + benchWords[zipf.Uint64()] + " " + benchWords[zipf.Uint64()],
			Tags: []string{strings.ToLower(benchEntities[ent])}, Published: searchtest.Now.AddDate(0, 0, -rng.IntN(500))}
		for c := range 10 {
			words := make([]string, 0, 64)
			for range 60 {
				words = append(words, benchWords[zipf.Uint64()])
			}
			id := strconv.FormatInt(store.ChunkID(store.DocumentID(url), c), 10)
			docOf[id] = store.DocumentID(url)
			for k := range 2 {
				if k == 0 || rng.IntN(3) == 0 {
					x := ent
					if k > 0 {
						x = rng.IntN(len(benchEntities))
					}
					words[rng.IntN(len(words))] = benchEntities[x]
					mentions[x][id]++
				}
			}
			doc.Chunks = append(doc.Chunks, searchtest.Chunk{Heading: benchWords[zipf.Uint64()], Text: strings.Join(words, " ")})
		}
		if load {
			work <- doc
		}
	}
	close(work)
	wg.Wait()
	select {
	case err := <-errc:
		b.Fatal(err)
	default:
	}
	if load {
		b.Logf("loaded %d chunks in %s", n, time.Since(start).Round(time.Second))
	}
	t0 := time.Now()
	e.Sync(b)
	// The service's indexer loads its document table at start (Indexer.Run); a
	// reused corpus has no change left for Sync to add, so load it here as well,
	// or hydration falls back to one MariaDB read per document.
	if err := e.Indexer.LoadDocs(ctx); err != nil {
		b.Fatal(err)
	}
	b.Logf("index synced in %s", time.Since(t0).Round(time.Millisecond))
	lookup := func(c string) string { return docOf[c] }
	ids := make([]string, len(benchEntities))
	for i, name := range benchEntities {
		found := e.Finder.Query(strings.ToLower(name))
		if len(found) == 0 {
			b.Fatalf("the query extractor does not know %s", name)
		}
		ids[i] = found[0].ID
		e.KG.AddEntity(ids[i], name, found[0].Type, mentions[i], lookup)
	}
	for i := range ids {
		e.KG.AddRelation(ids[i], "CO_OCCURS", ids[(i+1)%len(ids)], 0.6)
		e.KG.AddRelation(ids[i], "ALTERNATIVE_TO", ids[(i+7)%len(ids)], 0.4)
	}
	qrng := rand.New(rand.NewPCG(99, 1))
	// Query words: by default from the rarer half of the vocabulary. The corpus has
	// only ~190 distinct words, so a frequent one is in nearly every chunk (a real
	// 100k-chunk corpus has tens of thousands of words, and a query word is in well
	// under 1% of its chunks); even the rarer half is in several percent of them.
	// KGS_BENCH_QUERY_WORDS=all draws from the whole vocabulary (the worst case for BM25).
	lo := len(benchWords) / 2
	if os.Getenv("KGS_BENCH_QUERY_WORDS") == "all" {
		lo = 0
	}
	var queries []string
	for range 64 {
		var q []string
		if qrng.IntN(4) > 0 {
			q = append(q, strings.ToLower(benchEntities[qrng.IntN(len(benchEntities))]))
		}
		for range 1 + qrng.IntN(3) {
			q = append(q, benchWords[lo+qrng.IntN(len(benchWords)-lo)])
		}
		text := strings.Join(q, " ")
		// The hash embedder can cancel two words out (same bucket, opposite signs);
		// store.SearchVectors rightly refuses an all-zero vector.
		v, _ := e.Embedder.Embed(ctx, []string{text})
		if slices.ContainsFunc(v[0], func(x float32) bool { return x != 0 }) {
			queries = append(queries, text)
		}
	}
	return e, queries
}

func upsertBench(ctx context.Context, e *searchtest.Env, d searchtest.Doc) error {
	doc := store.Document{URL: d.URL, Title: d.Title, Tags: d.Tags, PublishedAt: d.Published}
	texts := make([]string, len(d.Chunks))
	for i, c := range d.Chunks {
		texts[i] = c.Text
	}
	vecs, err := e.Embedder.Embed(ctx, texts)
	if err != nil {
		return err
	}
	chunks := make([]store.Chunk, len(d.Chunks))
	off := 0
	for i, c := range d.Chunks {
		chunks[i] = store.Chunk{Text: c.Text, TokenCount: 60, StartOffset: off, EndOffset: off + len(c.Text),
			HeadingPath: []string{c.Heading}, Embedding: vecs[i]}
		off += len(c.Text) + 1
	}
	for attempt := 0; ; attempt++ {
		_, err = e.Store.UpsertDocument(ctx, &doc, chunks, nil)
		if err == nil || attempt == 5 || !strings.Contains(err.Error(), "Deadlock") {
			return err
		}
		time.Sleep(time.Duration(attempt+1) * 20 * time.Millisecond) // concurrent HNSW inserts can deadlock
	}
}

// persistentDB creates (if missing) a database that outlives the benchmark.
func persistentDB(b *testing.B, name string) string {
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
	if _, err := admin.Exec("CREATE DATABASE IF NOT EXISTS `" + name + "` CHARACTER SET utf8mb4"); err != nil {
		b.Fatal(err)
	}
	mc.DBName = name
	return mc.FormatDSN()
}

// BenchmarkEmbedQuery measures the query embedding with the real model (the part of
// the vector retriever BenchmarkSearch leaves out). It needs KGS_EMBED_MODEL_DIR and
// KGS_ORT_LIB (eval "$(deploy/local/model.sh env)").
func BenchmarkEmbedQuery(b *testing.B) {
	if os.Getenv("KGS_EMBED_MODEL_DIR") == "" {
		b.Skip("KGS_EMBED_MODEL_DIR not set: eval \"$(deploy/local/model.sh env)\"")
	}
	cfg, err := embed.ConfigFromEnv(os.Getenv)
	if err != nil {
		b.Fatal(err)
	}
	emb, err := embed.New(cfg, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer emb.Close()
	ctx := context.Background()
	queries := []string{"how do standby servers receive wal from the primary", "python virtual environment with venv",
		"list comprehension", "stable ip address for a set of pods"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := emb.Embed(ctx, queries[i%len(queries):i%len(queries)+1]); err != nil {
			b.Fatal(err)
		}
	}
}
