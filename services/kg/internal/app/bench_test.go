package app

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/neo4j/neo4j-go-driver/v5/neo4j"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/extract"
	"github.com/kgsearch/kgsearch/pkg/kgapi"
	"github.com/kgsearch/kgsearch/services/kg/internal/config"
)

// benchCorpus returns realistic technical documents cut into crawler-sized chunks
// (about 1 KB, the 256-token default): the reStructuredText sources of the Python
// manual that deploy/local/pydocs.sh installs (KG_BENCH_PYDOCS overrides the
// folder), or, when they are missing, the extraction evaluation set.
func benchCorpus(b *testing.B) ([]kgapi.Document, string) {
	dir := os.Getenv("KG_BENCH_PYDOCS")
	if dir == "" {
		state := os.Getenv("KGS_STATE")
		if state == "" {
			state = filepath.Join("..", "..", "..", "..", ".state")
		}
		dir = filepath.Join(state, "pydocs", "root", "usr", "share", "doc", "python3.11", "html", "_sources")
	}
	if docs := pydocs(b, dir); len(docs) > 0 {
		return docs, "python manual " + dir
	}
	return evalDocs(b), "pkg/extract evaluation set"
}

var (
	rstRole      = regexp.MustCompile("(:[a-z]+)+:`!?~?")
	rstLiteral   = regexp.MustCompile("``([^`]+)``")
	rstUnderline = regexp.MustCompile(`^(?:={4,}|-{4,}|~{4,}|\^{4,}|\*{4,}|#{4,}|"{4,}|\+{4,})\s*$`)
)

func pydocs(b *testing.B, dir string) []kgapi.Document {
	var docs []kgapi.Document
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".rst.txt") {
			return nil
		}
		f, err := os.Open(path)
		if err != nil {
			return nil
		}
		defer f.Close()
		rel, _ := filepath.Rel(dir, path)
		var lines []string
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		docs = append(docs, cutDocument(rel, lines)...)
		return nil
	})
	slices.SortFunc(docs, func(a, b kgapi.Document) int { return strings.Compare(a.ID, b.ID) })
	return docs
}

// cutDocument turns one reST file into documents of at most 32 chunks of about
// 1 KB, with headings and heading paths.
func cutDocument(name string, lines []string) []kgapi.Document {
	var (
		out     []kgapi.Document
		cur     kgapi.Document
		heading []string
		para    strings.Builder
		chunk   strings.Builder
	)
	newDoc := func() {
		cur = kgapi.Document{ID: fmt.Sprintf("%s#%d", name, len(out)), URL: "https://docs.python.org/3.11/" + strings.TrimSuffix(name, ".rst.txt") + fmt.Sprintf(".html?part=%d", len(out))}
	}
	flushChunk := func() {
		if strings.TrimSpace(chunk.String()) == "" {
			return
		}
		cur.Chunks = append(cur.Chunks, kgapi.Chunk{ID: fmt.Sprintf("%s-%d", cur.ID, len(cur.Chunks)), Ordinal: len(cur.Chunks), Text: chunk.String(), HeadingPath: slices.Clone(heading)})
		chunk.Reset()
		if len(cur.Chunks) == 32 {
			out = append(out, cur)
			newDoc()
		}
	}
	flushPara := func() {
		p := strings.TrimSpace(para.String())
		para.Reset()
		if p == "" || strings.HasPrefix(p, "..") {
			return
		}
		p = rstLiteral.ReplaceAllString(rstRole.ReplaceAllString(p, "`"), "`$1`")
		if chunk.Len() > 0 {
			chunk.WriteString("\n\n")
		}
		chunk.WriteString(p)
		if chunk.Len() >= 900 {
			flushChunk()
		}
	}
	newDoc()
	for i, l := range lines {
		if rstUnderline.MatchString(l) && i > 0 && strings.TrimSpace(lines[i-1]) != "" {
			h := strings.TrimSpace(rstRole.ReplaceAllString(lines[i-1], ""))
			h = strings.ReplaceAll(h, "`", "")
			para.Reset()
			flushChunk()
			if cur.Title == "" {
				cur.Title = h
			}
			cur.Headings = append(cur.Headings, h)
			heading = []string{h}
			continue
		}
		if strings.TrimSpace(l) == "" {
			flushPara()
			continue
		}
		para.WriteString(l)
		para.WriteString("\n")
	}
	flushPara()
	flushChunk()
	if len(cur.Chunks) > 0 {
		out = append(out, cur)
	}
	return out
}

func evalDocs(b *testing.B) []kgapi.Document {
	var docs []kgapi.Document
	for _, f := range []string{"eval.json", "holdout.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "pkg", "extract", "testdata", "eval", f))
		if err != nil {
			b.Fatal(err)
		}
		var set struct {
			Documents []struct {
				ID, Title, URL string
				Chunks         []struct {
					ID          string   `json:"id"`
					Text        string   `json:"text"`
					HeadingPath []string `json:"heading_path"`
				}
			}
		}
		if err := json.Unmarshal(data, &set); err != nil {
			b.Fatal(err)
		}
		for _, d := range set.Documents {
			doc := kgapi.Document{ID: d.ID, URL: d.URL, Title: d.Title}
			for i, c := range d.Chunks {
				doc.Chunks = append(doc.Chunks, kgapi.Chunk{ID: d.ID + "-" + c.ID, Ordinal: i, Text: c.Text, HeadingPath: c.HeadingPath})
			}
			docs = append(docs, doc)
		}
	}
	return docs
}

// BenchmarkIngest measures ingest throughput through the HTTP API (JSON decode,
// validation, extraction, mapping, one Neo4j write transaction per document):
// each operation ingests one document of the corpus under a fresh id. clients=1 is
// one crawler outbox worker; clients=4 shows what concurrency buys with the graph
// store's single writer.
//
//	eval "$(deploy/local/neo4j.sh env)"
//	go test -run '^$' -bench Ingest -benchtime 200x ./services/kg/internal/app/
func BenchmarkIngest(b *testing.B) {
	uri, user, password := testenv.Neo4j(b)
	docs, source := benchCorpus(b)
	chunks := 0
	bytes := 0
	for _, d := range docs {
		chunks += len(d.Chunks)
		for _, c := range d.Chunks {
			bytes += len(c.Text)
		}
	}
	b.Logf("corpus: %s: %d documents, %d chunks, %.0f bytes/chunk", source, len(docs), chunks, float64(bytes)/float64(chunks))
	// The extraction alone, as the service configures it, for the share of the
	// time the graph write takes.
	b.Run("extract-only", func(b *testing.B) {
		cfg := config.Default(b.TempDir())
		p, err := Build(cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
		if err != nil {
			b.Fatal(err)
		}
		defer p.Store.Close(context.Background())
		n := 0
		b.ResetTimer()
		start := time.Now()
		for i := range b.N {
			d := docs[i%len(docs)]
			d.ID = fmt.Sprintf("%d-%s", i, d.ID)
			p.Extractor.Document(toExtractDoc(d))
			n += len(d.Chunks)
		}
		b.ReportMetric(float64(n)/time.Since(start).Seconds(), "chunks/s")
	})
	for _, clients := range []int{1, 4} {
		b.Run(fmt.Sprintf("clients=%d", clients), func(b *testing.B) {
			cfg := config4bench(b, uri, user, password)
			s := start(b, cfg, true)
			run := fmt.Sprintf("kgbench-%d-", time.Now().UnixNano())
			var (
				next    atomic.Int64
				nChunks atomic.Int64
				nEnt    atomic.Int64
				nMen    atomic.Int64
				nRel    atomic.Int64
				mu      sync.Mutex
				ids     []string
			)
			ctx := context.Background()
			b.ResetTimer()
			start := time.Now()
			var wg sync.WaitGroup
			for range clients {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						i := int(next.Add(1)) - 1
						if i >= b.N {
							return
						}
						d := docs[i%len(docs)]
						d.ID = fmt.Sprintf("%s%d-%s", run, i, d.ID)
						d.Chunks = slices.Clone(d.Chunks)
						for k := range d.Chunks {
							d.Chunks[k].ID = fmt.Sprintf("%s%d-%s", run, i, d.Chunks[k].ID)
						}
						res, err := s.client.Ingest(ctx, d)
						if err != nil {
							b.Error(err)
							return
						}
						nEnt.Add(int64(res.Entities))
						nMen.Add(int64(res.Mentions))
						nRel.Add(int64(res.Relations))
						nChunks.Add(int64(len(d.Chunks)))
						mu.Lock()
						ids = append(ids, d.ID)
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			elapsed := time.Since(start)
			b.StopTimer()
			b.ReportMetric(float64(nChunks.Load())/elapsed.Seconds(), "chunks/s")
			b.ReportMetric(float64(nChunks.Load())/float64(b.N), "chunks/doc")
			b.ReportMetric(float64(nEnt.Load())/float64(b.N), "entities/doc")
			b.ReportMetric(float64(nMen.Load())/float64(b.N), "mentions/doc")
			b.ReportMetric(float64(nRel.Load())/float64(b.N), "relations/doc")
			for _, id := range ids {
				if err := s.client.DeleteDocument(ctx, id); err != nil {
					b.Errorf("clean up: %v", err)
				}
			}
		})
	}
}

func config4bench(b *testing.B, uri, user, password string) config.Config {
	cfg := testConfig(b, uri, user, password)
	cfg.Neo4jRetry = 30 * time.Second
	cfg.GraphTimeout = time.Minute
	return cfg
}

// BenchmarkExpandHTTP measures expansion latency through the HTTP API (request
// decoding, name resolution, the graph query, the answer) on pkg/graph's
// synthetic graph of 50k entities and 500k relations, which it reuses: build
// and keep it first, then run this benchmark.
//
//	eval "$(deploy/local/neo4j.sh env)"
//	KGS_BENCH_GRAPH=1 KGS_BENCH_KEEP=1 go test -run '^$' -bench BenchmarkExpand -benchtime 300x -timeout 60m ./pkg/graph/
//	KGS_BENCH_GRAPH=1 go test -run '^$' -bench ExpandHTTP -benchtime 300x ./services/kg/internal/app/
//
// Dropping the synthetic graph afterwards: run the pkg/graph benchmark again
// without KGS_BENCH_KEEP.
func BenchmarkExpandHTTP(b *testing.B) {
	if os.Getenv("KGS_BENCH_GRAPH") != "1" {
		b.Skip("set KGS_BENCH_GRAPH=1 (and build the synthetic graph with pkg/graph's BenchmarkExpand and KGS_BENCH_KEEP=1)")
	}
	uri, user, password := testenv.Neo4j(b)
	const entities = 50_000
	drv, err := neo4j.NewDriverWithContext(uri, neo4j.BasicAuth(user, password, ""))
	if err != nil {
		b.Fatal(err)
	}
	res, err := neo4j.ExecuteQuery(context.Background(), drv, "MATCH (m:BenchMarker {id: 'bench:marker'}) RETURN m.entities AS e, m.edges AS r",
		nil, neo4j.EagerResultTransformer)
	_ = drv.Close(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Records) != 1 {
		b.Skip("no synthetic graph: build it with KGS_BENCH_GRAPH=1 KGS_BENCH_KEEP=1 go test -run '^$' -bench BenchmarkExpand ./pkg/graph/")
	}
	e, _ := res.Records[0].Get("e")
	r, _ := res.Records[0].Get("r")
	b.Logf("synthetic graph: %v entities, %v relations", e, r)
	cfg := testConfig(b, uri, user, password)
	cfg.GazetteerSize = 0
	s := start(b, cfg, true)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(5, 6))
	for _, hops := range []int{1, 2} {
		b.Run(fmt.Sprintf("hops=%d", hops), func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			related := 0
			for range b.N {
				req := kgapi.ExpandRequest{Entities: []string{fmt.Sprintf("bench:e%d", rng.IntN(entities))}, MaxHops: hops, Limit: 20, MinConfidence: 0.3}
				t0 := time.Now()
				got, err := s.client.Expand(ctx, req)
				if err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
				if len(got.Unknown) > 0 {
					b.Fatalf("entity %v unknown: the synthetic graph is incomplete", got.Unknown)
				}
				related += len(got.Related)
			}
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(float64(related)/float64(b.N), "entities/op")
		})
	}
}

func toExtractDoc(d kgapi.Document) extract.Document {
	out := extract.Document{ID: d.ID, URL: d.URL, Title: d.Title, Headings: d.Headings}
	for _, c := range d.Chunks {
		out.Chunks = append(out.Chunks, extract.Chunk{ID: c.ID, Text: c.Text, HeadingPath: c.HeadingPath, CodeSpans: c.CodeSpans})
	}
	return out
}
