package main

import (
	"context"
	"math"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/internal/testenv"
	"github.com/kgsearch/kgsearch/pkg/apiclient"
	"github.com/kgsearch/kgsearch/pkg/ranker"
	"github.com/kgsearch/kgsearch/pkg/store"
)

func testCorpus() *Corpus {
	c := &Corpus{Chunks: []StoredChunk{
		{ID: "1", URL: site + "a.html", Title: "A", Text: "alpha", Vector: []float32{1, 0, 0}},
		{ID: "2", URL: site + "a.html", Title: "A", Text: "alpha beta", Vector: []float32{0.6, 0.8, 0}},
		{ID: "3", URL: site + "b.html", Title: "B", Text: "beta", Vector: []float32{0, 1, 0}},
		{ID: "4", URL: site + "c.html", Title: "C", Text: "gamma", Vector: []float32{0, 0, 1}},
	}, Pages: 3}
	return c
}

func TestDenseRanksByCosineAndPagesByBestChunk(t *testing.T) {
	c := testCorpus()
	qv := []float32{0, 1, 0}
	got, err := Dense(c, qv, 10)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range got {
		ids = append(ids, c.Chunks[r.i].ID)
	}
	// cosines 0, 0.8, 1, 0: chunk 3, then 2, then 1 and 4 in corpus order.
	if diff := cmp.Diff([]string{"3", "2", "1", "4"}, ids); diff != "" {
		t.Errorf("chunk order (-want +got):\n%s", diff)
	}
	pages := pagesOf(c, got, 10)
	var urls []string
	for _, p := range pages {
		urls = append(urls, strings.TrimPrefix(p.URL, site))
	}
	// a.html appears at the rank of its best chunk (2) and only once.
	if diff := cmp.Diff([]string{"b.html", "a.html", "c.html"}, urls); diff != "" {
		t.Errorf("page order (-want +got):\n%s", diff)
	}
	if math.Abs(pages[1].Score-0.8) > 1e-6 {
		t.Errorf("a.html scored %v, want its best chunk's 0.8", pages[1].Score)
	}
	if got := pagesOf(c, got, 2); len(got) != 2 {
		t.Errorf("pagesOf(…, 2) gave %d pages", len(got))
	}
	if _, err := Dense(c, []float32{1, 0}, 10); err == nil {
		t.Error("a query vector of another width gave no error")
	}
}

func TestRRF(t *testing.T) {
	a := []PageScore{{URL: "x"}, {URL: "y"}, {URL: "z"}}
	b := []PageScore{{URL: "y"}, {URL: "w"}}
	got := RRF(60, a, b)
	want := []PageScore{
		{URL: "y", Score: 1.0/62 + 1.0/61},
		{URL: "x", Score: 1.0 / 61},
		{URL: "w", Score: 1.0 / 62},
		{URL: "z", Score: 1.0 / 63},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })); diff != "" {
		t.Errorf("RRF (-want +got):\n%s", diff)
	}
	tie := RRF(60, []PageScore{{URL: "b"}}, []PageScore{{URL: "a"}})
	if tie[0].URL != "a" || tie[1].URL != "b" {
		t.Errorf("equal scores not ordered by URL: %+v", tie)
	}
}

func TestAblations(t *testing.T) {
	got := Ablations(ranker.DesignWeights())
	want := map[string]string{
		"no-graph":       "weights=vector:0.35,bm25:0.2,recency:0.1,title:0.1",
		"no-expand":      "expand=false",
		"graph-off":      "expand=false&weights=vector:0.35,bm25:0.2,recency:0.1,title:0.1",
		"no-bm25":        "weights=vector:0.35,graph:0.25,recency:0.1,title:0.1",
		"no-vector":      "weights=graph:0.25,bm25:0.2,recency:0.1,title:0.1",
		"no-title":       "weights=vector:0.35,graph:0.25,bm25:0.2,recency:0.1",
		"no-recency":     "weights=vector:0.35,graph:0.25,bm25:0.2,title:0.1",
		"keep-history":   "history=keep",
		"keep-generated": "generated=keep",
	}
	gotm := map[string]string{}
	var order []string
	for _, m := range got {
		if m.Kind != KindAblation {
			t.Errorf("%s: kind %q", m.Name, m.Kind)
		}
		gotm[m.Name] = m.String()
		order = append(order, m.Name)
	}
	if diff := cmp.Diff(want, gotm); diff != "" {
		t.Errorf("ablations (-want +got):\n%s", diff)
	}
	if order[0] != "no-graph" || order[2] != "graph-off" {
		t.Errorf("order %v", order)
	}
	// A signal already off is switched on instead: at a tenth, the rest scaled to
	// nine tenths (the defaults with the title on are the design's weights).
	w, _ := ranker.ParseWeights("vector:0.5,bm25:0.5")
	var names []string
	for _, m := range Ablations(w) {
		names = append(names, m.String())
	}
	if diff := cmp.Diff([]string{"expand=false", "weights=vector:0.5", "weights=bm25:0.5",
		"weights=vector:0.45,bm25:0.45,title:0.1", "weights=vector:0.45,bm25:0.45,recency:0.1", "history=keep", "generated=keep"}, names); diff != "" {
		t.Errorf("ablations of vector+bm25 (-want +got):\n%s", diff)
	}
	for _, m := range Ablations(ranker.DefaultWeights()) {
		if m.Name == "with-title" && m.String() != "weights="+ranker.DesignWeights().String() {
			t.Errorf("with-title of the defaults: %s, want the design's weights %s", m, ranker.DesignWeights())
		}
	}
}

// explainSearch answers with explain weights chosen by the query text.
type explainSearch struct {
	weights map[string]string
	asked   []apiclient.SearchRequest
}

func (e *explainSearch) SearchJSON(_ context.Context, req apiclient.SearchRequest) (*apiclient.SearchResponse, error) {
	e.asked = append(e.asked, req)
	return &apiclient.SearchResponse{Explain: &apiclient.SearchExplain{Weights: e.weights[req.Q]}}, nil
}

func TestDefaultWeightsTakesTheAnswerNamingMostSignals(t *testing.T) {
	s := &explainSearch{weights: map[string]string{
		"no entity": "vector:0.4667,bm25:0.2667,recency:0.1333,title:0.1333",
		"entity":    "vector:0.35,graph:0.25,bm25:0.2,recency:0.1,title:0.1",
	}}
	qs := []Query{{Query: "no entity"}, {Query: "entity"}, {Query: "never asked"}}
	w, err := DefaultWeights(context.Background(), s, qs, []string{"python-docs"})
	if err != nil {
		t.Fatal(err)
	}
	if w != ranker.DesignWeights() {
		t.Errorf("weights %v, want the answer naming five signals", w)
	}
	if len(s.asked) != 2 {
		t.Errorf("asked %d queries, want 2 (stop once all five signals are named)", len(s.asked))
	}
	if !slices.Equal(s.asked[0].Tags, []string{"python-docs"}) || !s.asked[0].Explain {
		t.Errorf("probe without the corpus tags: %v", s.asked[0])
	}
	if _, err := DefaultWeights(context.Background(), &explainSearch{}, qs, nil); err == nil {
		t.Error("no explain weights at all gave no error")
	}
}

type fakeBM25 struct{ hits map[string][]chunkScore }

func (f fakeBM25) Search(_ context.Context, q string, n int) ([]chunkScore, error) {
	h := f.hits[q]
	return h[:min(n, len(h))], nil
}

type fakeEmbedder struct {
	vecs  map[string][]float32
	texts []string
}

func (f *fakeEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	f.texts = append(f.texts, texts...)
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = f.vecs[t]
	}
	return out, nil
}

func TestPeerEvaluator(t *testing.T) {
	c := testCorpus()
	emb := &fakeEmbedder{vecs: map[string][]float32{"normalised beta": {0, 2, 0}}}
	ev := &PeerEvaluator{
		Corpus: c, Embedder: emb, Root: mustURL(t, site), K: 10,
		// BM25 finds c.html, then a.html twice (chunks 4, 1, 2).
		BM25:      fakeBM25{hits: map[string][]chunkScore{"Beta?": {{3, 9}, {0, 5}, {1, 4}}}},
		EmbedText: func(q Query) string { return "normalised beta" },
	}
	d := &Dataset{Queries: []Query{{ID: "q1", Query: "Beta?", Relevant: Judgments{"b.html": 2, "a.html": 1}}}}
	res, err := ev.Evaluate(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"normalised beta"}, emb.texts); diff != "" {
		t.Errorf("embedded texts (-want +got):\n%s", diff)
	}
	pages := map[string][]string{}
	for _, m := range res {
		if m.Kind != KindPeer {
			t.Errorf("%s: kind %q", m.Method, m.Kind)
		}
		for _, h := range m.PerQuery[0].Hits {
			pages[m.Method] = append(pages[m.Method], h.Page)
		}
	}
	want := map[string][]string{
		PeerBM25:  {"c.html", "a.html"},
		PeerDense: {"b.html", "a.html", "c.html"},
		// RRF: c 1/61+1/63 = 0.032266, a 1/62+1/62 = 0.032258, b 1/61.
		PeerRRF: {"c.html", "a.html", "b.html"},
	}
	if diff := cmp.Diff(want, pages); diff != "" {
		t.Errorf("pages (-want +got):\n%s", diff)
	}
	// peer-dense has the ideal order: nDCG 1.
	if res[1].Method != PeerDense || !approx(res[1].NDCG, 1) || !approx(res[0].MRR, 0.5) {
		t.Errorf("dense nDCG %v, bm25 MRR %v; want 1 and 0.5", res[1].NDCG, res[0].MRR)
	}
}

func TestUnionPoolsQueries(t *testing.T) {
	mk := func(name string, full, other []float64) *Report {
		d := &Dataset{Name: name}
		var fr, or []QueryResult
		for i := range full {
			id := "q" + string(rune('1'+i))
			d.Queries = append(d.Queries, Query{ID: id, Relevant: Judgments{"x": 2}})
			fr = append(fr, QueryResult{ID: id, NDCG: full[i]})
			or = append(or, QueryResult{ID: id, NDCG: other[i]})
		}
		f := &MethodResult{Method: "full", Kind: KindOurs, PerQuery: fr}
		o := &MethodResult{Method: PeerRRF, Kind: KindPeer, PerQuery: or}
		f.summarise()
		o.summarise()
		return newReport(d, "s", 10, nil, []*MethodResult{f, o}, time.Unix(0, 0))
	}
	a := mk("a", []float64{1, 1, 0.5}, []float64{0.5, 0.5, 0.5})
	b := mk("b", []float64{1, 0}, []float64{0, 0})
	u := Union([]*Report{a, b})
	if u.Queries != 5 || u.Judged != 5 || u.Dataset != "union of a, b" {
		t.Errorf("union %q: %d queries, %d judged", u.Dataset, u.Queries, u.Judged)
	}
	if !approx(u.Methods[0].NDCG, 3.5/5) || len(u.Methods[0].PerQuery) != 5 || u.Methods[0].PerQuery[3].ID != "b/q1" {
		t.Errorf("union full: nDCG %v, queries %+v", u.Methods[0].NDCG, u.Methods[0].PerQuery)
	}
	p := u.PeerComparisons[0]
	if p.A != "full" || p.B != PeerRRF || p.Wins != 3 || p.Ties != 2 || p.Losses != 0 {
		t.Errorf("union comparison %+v, want full vs peer-rrf 3 wins 2 ties", p)
	}
}

// TestTantivyPeer runs scripts/eval-tantivy.py when a Python with tantivy is given
// (KGS_EVAL_PYTHON, as make eval sets up in $KGS_STATE/eval/venv).
func TestTantivyPeer(t *testing.T) {
	py := os.Getenv("KGS_EVAL_PYTHON")
	if py == "" || exec.Command(py, "-c", "import tantivy").Run() != nil {
		t.Skip("KGS_EVAL_PYTHON is not a Python with tantivy; make eval installs one into $KGS_STATE/eval/venv")
	}
	c := &Corpus{Chunks: []StoredChunk{
		{ID: "10", URL: "u1", Title: "Connections", Text: "opening a socket"},
		{ID: "11", URL: "u1", Title: "Connections", Headings: []string{"Pooling"}, Text: "a pool of connections is reused"},
		{ID: "12", URL: "u2", Title: "Files", Text: "reading files line by line"},
	}}
	tv, err := StartTantivy(context.Background(), py, "../../scripts/eval-tantivy.py", c, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer tv.Close()
	hits, err := tv.Search(context.Background(), "pooled connection", 10)
	if err != nil {
		t.Fatal(err)
	}
	// Stemming: "pooled" finds "Pooling" and "pool", "connection" finds "connections".
	if len(hits) != 2 || c.Chunks[hits[0].i].ID != "11" || c.Chunks[hits[1].i].ID != "10" {
		t.Errorf("hits %+v, want chunk 11 then 10", hits)
	}
	// Query syntax is only words: quotes, operators and field prefixes are not parsed.
	for _, q := range []string{`title:"files" AND -socket`, "lru_cache(", "", "((("} {
		if _, err := tv.Search(context.Background(), q, 10); err != nil {
			t.Errorf("query %q: %v", q, err)
		}
	}
}

// TestLoadCorpus reads chunks and vectors back from a real MariaDB, restricted by tag.
func TestLoadCorpus(t *testing.T) {
	dsn := testenv.FreshMariaDB(t)
	ctx := context.Background()
	st, err := store.Open(ctx, store.Config{DSN: dsn, Model: store.Model{Name: "test-model", Dims: 3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	put := func(u string, tags []string, vecs ...[]float32) {
		id := u[len(u)-1:]
		var chunks []store.Chunk
		for i, v := range vecs {
			chunks = append(chunks, store.Chunk{Text: "text " + id, TokenCount: 2, StartOffset: i, EndOffset: i + 1,
				HeadingPath: []string{"H " + id}, Embedding: v})
		}
		if _, err := st.UpsertDocument(ctx, &store.Document{URL: u, Title: "T " + id, Tags: tags}, chunks, nil); err != nil {
			t.Fatal(err)
		}
	}
	put("http://h/a", []string{"docs"}, []float32{3, 0, 4}, []float32{0, 1, 0})
	put("http://h/b", []string{"other"}, []float32{1, 1, 1})
	c, err := LoadCorpus(ctx, dsn, []string{"docs"})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.Name != "test-model" || c.Model.Dims != 3 || len(c.Chunks) != 2 || c.Pages != 1 {
		t.Fatalf("corpus: model %v, %d chunks, %d pages; want test-model/3, 2, 1", c.Model, len(c.Chunks), c.Pages)
	}
	ch := c.Chunks[0]
	if ch.URL != "http://h/a" || ch.Title != "T a" || ch.Headings[0] != "H a" ||
		math.Abs(float64(ch.Vector[0])-0.6) > 1e-6 || math.Abs(float64(ch.Vector[2])-0.8) > 1e-6 {
		t.Errorf("chunk %+v: want page a, its title and heading, vector (0.6, 0, 0.8)", ch)
	}
	all, err := LoadCorpus(ctx, dsn, nil)
	if err != nil || len(all.Chunks) != 3 || all.Pages != 2 {
		t.Errorf("untagged corpus: %v, %+v", err, all)
	}
	if _, err := LoadCorpus(ctx, dsn, []string{"missing"}); err == nil || !strings.Contains(err.Error(), "crawl the dataset first") {
		t.Errorf("unknown tag: %v", err)
	}
}
