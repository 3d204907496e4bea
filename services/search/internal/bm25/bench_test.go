package bm25

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The benchmarks index a synthetic corpus: a vocabulary of 20,000 pseudo-words drawn
// with a Zipf distribution (s = 1.1), chunks of ~150 words (~1 KB) with a 5-word title
// and two headings, 5 chunks per document, 20 domains and 50 tags. Queries are 2–3
// words of middle frequency (ranks 100–5,000), the kind that match hundreds to
// thousands of chunks at 100k.

var benchDir string

func TestMain(m *testing.M) {
	code := m.Run()
	if benchDir != "" {
		_ = os.RemoveAll(benchDir)
	}
	os.Exit(code)
}

type corpus struct {
	rng   *rand.Rand
	vocab []string
	zipf  *rand.Zipf
}

func newCorpus(seed uint64) *corpus {
	rng := rand.New(rand.NewPCG(seed, 7))
	syll := strings.Fields("ka lo mi ne ru sa te vi do pa ge zu ri fo ba ma nu li se to")
	seen := map[string]struct{}{}
	var vocab []string
	for len(vocab) < 20000 {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		w := b.String()
		if _, dup := seen[w]; dup {
			continue
		}
		seen[w] = struct{}{}
		vocab = append(vocab, w)
	}
	return &corpus{rng: rng, vocab: vocab, zipf: rand.NewZipf(rng, 1.1, 1, uint64(len(vocab)-1))}
}

func (c *corpus) words(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = c.vocab[c.zipf.Uint64()]
	}
	return strings.Join(ws, " ")
}

// docs returns ops upserting documents first..first+n-1, 5 chunks each.
func (c *corpus) docs(first, n int, seq int64) []Op {
	ops := make([]Op, n)
	for d := range n {
		id := fmt.Sprintf("doc%07d", first+d)
		title := c.words(5)
		chunks := make([]Chunk, 5)
		for k := range chunks {
			chunks[k] = Chunk{
				ID:         fmt.Sprintf("%s-%d", id, k),
				DocumentID: id,
				URL:        "https://site" + fmt.Sprint((first+d)%20) + ".test/" + id,
				Domain:     "site" + fmt.Sprint((first+d)%20) + ".test",
				Title:      title,
				Headings:   []string{c.words(3), c.words(4)},
				Text:       c.words(150),
				Tags:       []string{"tag" + fmt.Sprint(c.rng.IntN(50))},
				Published:  time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c.rng.IntN(700*24)) * time.Hour),
			}
		}
		ops[d] = Op{Seq: seq, Kind: UpsertDocument, DocumentID: id, Chunks: chunks}
	}
	return ops
}

func (c *corpus) queries(n int) []string {
	qs := make([]string, n)
	for i := range qs {
		k := 2 + c.rng.IntN(2)
		ws := make([]string, k)
		for j := range ws {
			ws[j] = c.vocab[100+c.rng.IntN(4900)]
		}
		qs[i] = strings.Join(ws, " ")
	}
	return qs
}

var (
	benchMu      sync.Mutex
	benchIndexes = map[int]*Index{}
)

// benchIndex returns an index of n chunks, built once per process.
func benchIndex(b *testing.B, n int) *Index {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if ix, ok := benchIndexes[n]; ok {
		return ix
	}
	if benchDir == "" {
		d, err := os.MkdirTemp("", "bm25bench")
		if err != nil {
			b.Fatal(err)
		}
		benchDir = d
	}
	ix, err := Open(filepath.Join(benchDir, fmt.Sprintf("idx%d", n)))
	if err != nil {
		b.Fatal(err)
	}
	c := newCorpus(uint64(n))
	start, c0 := time.Now(), cpuTime()
	const docsPerBatch = 400 // 2,000 chunks per Apply
	for first := 0; first < n/5; first += docsPerBatch {
		cnt := min(docsPerBatch, n/5-first)
		if err := ix.Apply(context.Background(), c.docs(first, cnt, int64(first+cnt))); err != nil {
			b.Fatal(err)
		}
	}
	el, cpu := time.Since(start), cpuTime()-c0
	b.Logf("built %d chunks in %s (%.0f chunks/s wall, %.0f chunks per CPU-second)",
		n, el.Round(time.Millisecond), float64(n)/el.Seconds(), float64(n)/cpu.Seconds())
	// Measure the steady state, as after Rebuild: no merges running behind the searches.
	start = time.Now()
	if err := ix.Compact(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Logf("compacted in %s", time.Since(start).Round(time.Millisecond))
	benchIndexes[n] = ix
	return ix
}

// BenchmarkSearch measures one Search (k = 100, the retriever's candidate depth) and
// reports p50 and p99 latency in microseconds.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		for _, bc := range []struct {
			name string
			f    Filter
		}{
			{"nofilter", Filter{}},
			{"filtered", Filter{Domain: "site3.test", PublishedAfter: time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)}},
		} {
			b.Run(fmt.Sprintf("chunks=%d/%s", n, bc.name), func(b *testing.B) {
				ix := benchIndex(b, n)
				qs := newCorpus(99).queries(500)
				var lat []time.Duration
				i := 0
				c0 := cpuTime()
				for b.Loop() {
					t0 := time.Now()
					if _, err := ix.Search(context.Background(), qs[i%len(qs)], 100, bc.f); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
					i++
				}
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
				b.ReportMetric(float64((cpuTime()-c0).Microseconds())/float64(b.N), "cpu-µs/op")
			})
		}
	}
}

// BenchmarkApply measures indexing throughput: each iteration upserts 200 new
// documents (1,000 chunks) in one Apply.
func BenchmarkApply(b *testing.B) {
	ix, err := Open(filepath.Join(b.TempDir(), "bm25"))
	if err != nil {
		b.Fatal(err)
	}
	defer ix.Close()
	c := newCorpus(5)
	const docs = 200
	batches := make([][]Op, 0, 16)
	for i := range 16 {
		batches = append(batches, c.docs(i*docs, docs, int64(i+1)))
	}
	i := 0
	c0 := cpuTime()
	for b.Loop() {
		// Fresh document ids each iteration so every batch adds 1,000 chunks.
		ops := batches[i%len(batches)]
		for j := range ops {
			ops[j].DocumentID = fmt.Sprintf("it%d-%d", i, j)
			for k := range ops[j].Chunks {
				ops[j].Chunks[k].ID = fmt.Sprintf("it%d-%d-%d", i, j, k)
				ops[j].Chunks[k].DocumentID = ops[j].DocumentID
			}
		}
		if err := ix.Apply(context.Background(), ops); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(i*docs*5)/b.Elapsed().Seconds(), "chunks/s")
	b.ReportMetric(float64(i*docs*5)/(cpuTime()-c0).Seconds(), "chunks/cpu-s")
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
