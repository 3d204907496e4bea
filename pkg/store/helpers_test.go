package store

import (
	"context"
	"fmt"
	"math"
	mrand "math/rand/v2"
	"sort"
	"testing"

	"github.com/kgsearch/kgsearch/internal/testenv"
)

// testModel is the reference model's shape (all-MiniLM-L6-v2).
var testModel = Model{Name: "all-MiniLM-L6-v2", Dims: 384}

// freshDatabase creates an empty database kgsearch_test_<random> on the test server
// and drops it when the test ends; it returns a DSN pointing at it.
func freshDatabase(t testing.TB) string {
	t.Helper()
	return testenv.FreshMariaDB(t)
}

func openStore(t testing.TB, dsn string, m Model) *Store {
	t.Helper()
	s, err := Open(context.Background(), Config{DSN: dsn, Model: m}, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newStore opens a store with the reference model on a fresh database.
func newStore(t testing.TB) *Store {
	t.Helper()
	return openStore(t, freshDatabase(t), testModel)
}

// vecGen generates deterministic test vectors.
type vecGen struct {
	rng       *mrand.Rand
	dims      int
	centroids [][]float32
	noise     float64
}

// newClustered makes vectors around k random centroids, the shape of real sentence
// embeddings (topics); noise is the per-component standard deviation relative to 1.
func newClustered(seed uint64, dims, k int, noise float64) *vecGen {
	g := &vecGen{rng: mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), dims: dims, noise: noise}
	for range k {
		g.centroids = append(g.centroids, g.gaussian())
	}
	return g
}

// newUniform makes isotropic Gaussian vectors: no structure, the hardest case for HNSW.
func newUniform(seed uint64, dims int) *vecGen {
	return &vecGen{rng: mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), dims: dims}
}

func (g *vecGen) gaussian() []float32 {
	v := make([]float32, g.dims)
	for i := range v {
		v[i] = float32(g.rng.NormFloat64())
	}
	return v
}

func (g *vecGen) next() []float32 {
	if len(g.centroids) == 0 {
		return normalize(g.gaussian())
	}
	c := g.centroids[g.rng.IntN(len(g.centroids))]
	v := make([]float32, g.dims)
	for i := range v {
		v[i] = c[i] + float32(g.noise*g.rng.NormFloat64())
	}
	return normalize(v)
}

func normalize(v []float32) []float32 {
	var n float64
	for _, f := range v {
		n += float64(f) * float64(f)
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

func cosineDistance(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return 1 - dot/math.Sqrt(na*nb)
}

// exactTopK is brute-force nearest neighbours by cosine distance.
func exactTopK(q []float32, ids []int64, vecs [][]float32, k int) []int64 {
	type cand struct {
		id int64
		d  float64
	}
	cs := make([]cand, len(ids))
	for i := range ids {
		cs[i] = cand{ids[i], cosineDistance(q, vecs[i])}
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	out := make([]int64, 0, k)
	for _, c := range cs[:min(k, len(cs))] {
		out = append(out, c.id)
	}
	return out
}

func recallAt(got []Hit, want []int64) float64 {
	w := map[int64]bool{}
	for _, id := range want {
		w[id] = true
	}
	n := 0
	for _, h := range got {
		if w[h.ID] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// corpus is a loaded set of generated documents and chunk vectors.
type corpus struct {
	ids  []int64
	vecs [][]float32
}

// loadCorpus upserts docs documents of perDoc chunks each with vectors from g.
func loadCorpus(tb testing.TB, s *Store, g *vecGen, docs, perDoc int, domainOf func(i int) string, tagsOf func(i int) []string) corpus {
	tb.Helper()
	ctx := context.Background()
	var c corpus
	for d := range docs {
		doc := &Document{
			URL:   fmt.Sprintf("https://%s/doc/%d", domainOf(d), d),
			Title: fmt.Sprintf("Document %d", d),
			Tags:  tagsOf(d),
		}
		chunks := make([]Chunk, perDoc)
		for i := range chunks {
			chunks[i] = Chunk{Text: fmt.Sprintf("doc %d chunk %d", d, i), TokenCount: 5, StartOffset: i * 100, EndOffset: i*100 + 99, Embedding: g.next()}
		}
		res, err := s.UpsertDocument(ctx, doc, chunks, nil)
		if err != nil {
			tb.Fatalf("load corpus: %v", err)
		}
		for i := range chunks {
			c.ids = append(c.ids, res.ChunkIDs[i])
			c.vecs = append(c.vecs, chunks[i].Embedding)
		}
	}
	return c
}

func oneDomain(int) string { return "example.com" }
func noTags(int) []string  { return nil }

func nanValue() float64 { return math.NaN() }
