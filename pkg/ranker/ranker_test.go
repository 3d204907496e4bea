package ranker

import (
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

var testNow = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func daysAgo(d float64) time.Time { return testNow.Add(-time.Duration(d * float64(24*time.Hour))) }

func newTestRanker(t *testing.T, opts Options) *Ranker {
	t.Helper()
	if opts.Now == nil {
		opts.Now = func() time.Time { return testNow }
	}
	r, err := New(opts)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// threeCandidates is the worked example used by the fusion tests.
//
//	A: vector 0.8, bm25 10, graph 2, 3 days old, title "SQLite connection objects"
//	B: vector 0.4, bm25 5, no graph, 40 days old, title "Cursor objects"
//	C: no vector, bm25 2.5, graph 4 but only through expanded entities, no date,
//	   title "Connection pooling"
//
// Normalised (query "sqlite connection", MaxScale; TestRankDefault covers the default):
//
//	    vector  graph          bm25        recency  title
//	A   0.8     2/4 = 0.5      10/10 = 1   1.0      1   (phrase "sqlite connection" in title)
//	B   0.4     0              5/10 = 0.5  0.6      0   (no query term in title)
//	C   0       4/4·0.7 = 0.7  2.5/10=.25  0.2      0.5 (1 of 2 terms)
func threeCandidates() []Candidate {
	return []Candidate{
		{ChunkID: "a", DocumentID: "da", Title: "SQLite connection objects", Published: daysAgo(3),
			VectorSimilarity: 0.8, HasVector: true, BM25Score: 10, HasBM25: true, GraphScore: 2, HasGraph: true},
		{ChunkID: "b", DocumentID: "db", Title: "Cursor objects", Published: daysAgo(40),
			VectorSimilarity: 0.4, HasVector: true, BM25Score: 5, HasBM25: true},
		{ChunkID: "c", DocumentID: "dc", Title: "Connection pooling",
			BM25Score: 2.5, HasBM25: true, GraphScore: 4, HasGraph: true, GraphExpandedOnly: true},
	}
}

var floatCmp = cmpopts.EquateApprox(0, 1e-6)

type ranked struct {
	ID    string
	Score float64
	BD    Breakdown
}

func summarize(rs []Result) []ranked {
	out := make([]ranked, len(rs))
	for i, r := range rs {
		if r.Rank != i+1 {
			panic("rank does not follow position")
		}
		out[i] = ranked{r.Candidate.ChunkID, r.Score, r.Breakdown}
	}
	return out
}

func TestRankWeighted(t *testing.T) {
	r := newTestRanker(t, Options{Normalization: MaxScale})
	got, err := r.Rank(Request{Query: Query{Text: "sqlite connection"}, Weights: DesignWeights()}, threeCandidates())
	if err != nil {
		t.Fatal(err)
	}
	// Design weights .35/.25/.20/.10/.10:
	// A = .35·.8 + .25·.5 + .2·1 + .1·1 + .1·1     = .28+.125+.2+.1+.1   = .805
	// B = .35·.4 + 0      + .2·.5 + .1·.6 + 0      = .14+.1+.06          = .300
	// C = 0      + .25·.7 + .2·.25 + .1·.2 + .1·.5 = .175+.05+.02+.05    = .295
	want := []ranked{
		{"a", 0.805, Breakdown{Vector: 0.8, Graph: 0.5, BM25: 1, Recency: 1, Title: 1, Final: 0.805}},
		{"b", 0.300, Breakdown{Vector: 0.4, Graph: 0, BM25: 0.5, Recency: 0.6, Title: 0, Final: 0.300}},
		{"c", 0.295, Breakdown{Vector: 0, Graph: 0.7, BM25: 0.25, Recency: 0.2, Title: 0.5, Final: 0.295}},
	}
	if diff := cmp.Diff(want, summarize(got), floatCmp); diff != "" {
		t.Errorf("ranking (-want +got):\n%s", diff)
	}
}

func TestRankCustomWeights(t *testing.T) {
	tests := []struct {
		name    string
		weights string
		want    []ranked
	}{
		// graph only: A .5, B 0, C .7 → C, A, B (B ties at 0 with nobody).
		{"graph only", "graph:1", []ranked{{"c", 0.7, Breakdown{}}, {"a", 0.5, Breakdown{}}, {"b", 0, Breakdown{}}}},
		// bm25:1,title:1 → .5 each: A .5+.5 = 1, B .25+0 = .25, C .125+.25 = .375.
		{"bm25 and title", "bm25:1,title:1", []ranked{{"a", 1, Breakdown{}}, {"c", 0.375, Breakdown{}}, {"b", 0.25, Breakdown{}}}},
		// degraded: defaults without graph (÷.75):
		// A (.28+.2+.1+.1)/.75 = .68/.75 = .906667
		// B (.14+.1+.06)/.75   = .30/.75 = .4
		// C (.05+.02+.05)/.75  = .12/.75 = .16
		{"design without graph", "", []ranked{{"a", 0.68 / 0.75, Breakdown{}}, {"b", 0.4, Breakdown{}}, {"c", 0.16, Breakdown{}}}},
	}
	r := newTestRanker(t, Options{Normalization: MaxScale})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var w Weights
			var err error
			if tt.weights == "" {
				w, err = DesignWeights().Renormalize(Graph)
			} else {
				w, err = ParseWeights(tt.weights)
			}
			if err != nil {
				t.Fatal(err)
			}
			res, err := r.Rank(Request{Query: Query{Text: "sqlite connection"}, Weights: w}, threeCandidates())
			if err != nil {
				t.Fatal(err)
			}
			got := summarize(res)
			for i := range got {
				got[i].BD = Breakdown{}
			}
			if diff := cmp.Diff(tt.want, got, floatCmp); diff != "" {
				t.Errorf("ranking (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRankRRF(t *testing.T) {
	r := newTestRanker(t, Options{Normalization: MaxScale})
	got, err := r.Rank(Request{Query: Query{Text: "sqlite connection"}, Weights: DesignWeights(), Fusion: RRF}, threeCandidates())
	if err != nil {
		t.Fatal(err)
	}
	// Per-signal rankings (participants only), k = 60:
	//   vector:  A(.8)=1, B(.4)=2                 (C has no vector)
	//   graph:   C(.7)=1, A(.5)=2                 (B has no graph)
	//   bm25:    A=1, B=2, C=3
	//   recency: A(1.0)=1, B(.6)=2                (C has no date)
	//   title:   A(1)=1, C(.5)=2                  (B has no title match)
	// score = 61 · Σ w/(60+rank):
	//   A = 61·(.35/61 + .25/62 + .2/61 + .1/61 + .1/61) = .75 + .25·61/62       = .995968
	//   B = 61·(.35/62 + .2/62 + .1/62)                  = .65·61/62              = .639516
	//   C = 61·(.25/61 + .2/63 + .1/62)                  = .25 + .2·61/63 + .1·61/62 = .542038
	want := map[string]float64{
		"a": 0.75 + 0.25*61/62,
		"b": 0.65 * 61 / 62,
		"c": 0.25 + 0.2*61/63 + 0.1*61/62,
	}
	order := []string{"a", "b", "c"}
	for i, res := range got {
		if res.Candidate.ChunkID != order[i] {
			t.Errorf("position %d: got %s, want %s", i, res.Candidate.ChunkID, order[i])
		}
		if math.Abs(res.Score-want[res.Candidate.ChunkID]) > 1e-9 {
			t.Errorf("RRF score of %s: got %.6f, want %.6f", res.Candidate.ChunkID, res.Score, want[res.Candidate.ChunkID])
		}
	}
}

func TestRRFTiesShareRankAndK(t *testing.T) {
	cands := []Candidate{
		{ChunkID: "x", DocumentID: "x", BM25Score: 3, HasBM25: true},
		{ChunkID: "y", DocumentID: "y", BM25Score: 3, HasBM25: true},
		{ChunkID: "z", DocumentID: "z", BM25Score: 1, HasBM25: true},
	}
	w, _ := ParseWeights("bm25:1")
	tests := []struct {
		k    float64
		want map[string]float64
	}{
		// k=60: x and y share rank 1 → 61/61 = 1; z is rank 3 (competition ranking) → 61/63.
		{60, map[string]float64{"x": 1, "y": 1, "z": 61.0 / 63}},
		// k=1: z → 2/(1+3) = .5.
		{1, map[string]float64{"x": 1, "y": 1, "z": 0.5}},
	}
	for _, tt := range tests {
		r := newTestRanker(t, Options{RRFK: tt.k})
		res, err := r.Rank(Request{Query: Query{Text: "q"}, Weights: w, Fusion: RRF}, cands)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, x := range res {
			got[x.Candidate.ChunkID] = x.Score
		}
		if diff := cmp.Diff(tt.want, got, floatCmp); diff != "" {
			t.Errorf("k=%g (-want +got):\n%s", tt.k, diff)
		}
		// Equal scores: chunk id breaks the tie.
		if res[0].Candidate.ChunkID != "x" || res[1].Candidate.ChunkID != "y" {
			t.Errorf("k=%g: tie order got %s,%s, want x,y", tt.k, res[0].Candidate.ChunkID, res[1].Candidate.ChunkID)
		}
	}
}

func TestMaxScaleAndMinMax(t *testing.T) {
	T, F := true, false
	tests := []struct {
		name       string
		v          []float64
		has        []bool
		wantMax    []float64
		wantMinMax []float64
	}{
		// max 10: 10/10, 5/10, 2.5/10; min-max: (x-2.5)/7.5 → 1, .333333, 0
		{"spread", []float64{10, 5, 2.5}, []bool{T, T, T}, []float64{1, 0.5, 0.25}, []float64{1, 2.5 / 7.5, 0}},
		{"single", []float64{3}, []bool{T}, []float64{1}, []float64{1}},
		{"all equal", []float64{2, 2}, []bool{T, T}, []float64{1, 1}, []float64{1, 1}},
		// missing values get 0 and do not take part in min or max: max 4 → 1, min-max over {4} → 1
		{"missing", []float64{4, 100}, []bool{T, F}, []float64{1, 0}, []float64{1, 0}},
		{"all zero", []float64{0, 0}, []bool{T, T}, []float64{0, 0}, []float64{0, 0}},
		{"none present", []float64{1}, []bool{F}, []float64{0}, []float64{0}},
		// negative maximum: no evidence of a match → 0 (max-scale); min-max still spreads.
		{"negative", []float64{-1, -3}, []bool{T, T}, []float64{0, 0}, []float64{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.wantMax, maxScale(tt.v, tt.has), floatCmp); diff != "" {
				t.Errorf("maxScale (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantMinMax, minMax(tt.v, tt.has), floatCmp); diff != "" {
				t.Errorf("minMax (-want +got):\n%s", diff)
			}
		})
	}
}

func TestVectorSignal(t *testing.T) {
	tests := []struct {
		name  string
		norm  Normalization
		query []float32
		cands []Candidate
		want  []float64 // vector signal per chunk id "0", "1", ...
	}{
		// MaxScale uses the clamped similarity: .9, .5, -.2 → 0.
		{"raw clamped", MaxScale, nil, []Candidate{
			{VectorSimilarity: 0.9, HasVector: true},
			{VectorSimilarity: 0.5, HasVector: true},
			{VectorSimilarity: -0.2, HasVector: true},
		}, []float64{0.9, 0.5, 0}},
		// MinMax: (x-(-.2))/1.1 → 1, .7/1.1 = .636364, 0.
		{"min-max", MinMax, nil, []Candidate{
			{VectorSimilarity: 0.9, HasVector: true},
			{VectorSimilarity: 0.5, HasVector: true},
			{VectorSimilarity: -0.2, HasVector: true},
		}, []float64{1, 0.7 / 1.1, 0}},
		// VectorMinMax (default): the retriever's hits set the scale (min .5, max .9);
		// a similarity computed from an embedding is mapped on it and clamped:
		// .9 → 1, .7 → .5, .5 → 0, cos([1,0],[1,1]) = .7071 → .5178, cos([1,0],[0,1]) = 0 → 0.
		{"min-max over the retriever's hits", VectorMinMax, []float32{1, 0}, []Candidate{
			{VectorSimilarity: 0.9, HasVector: true},
			{VectorSimilarity: 0.7, HasVector: true},
			{VectorSimilarity: 0.5, HasVector: true},
			{Embedding: []float32{1, 1}},
			{Embedding: []float32{0, 1}},
		}, []float64{1, 0.5, 0, (1/math.Sqrt2 - 0.5) / 0.4, 0}},
		// Missing similarity computed from embeddings: cos([1,0],[1,1]) = 1/√2;
		// a wrong-length embedding or none stays 0; NaN is treated as missing.
		{"computed from embedding", MaxScale, []float32{1, 0}, []Candidate{
			{Embedding: []float32{1, 1}},
			{Embedding: []float32{1, 1, 1}},
			{},
			{VectorSimilarity: math.NaN(), HasVector: true},
			{VectorSimilarity: 0.3, HasVector: true, Embedding: []float32{1, 0}}, // given value wins over computed 1.0
		}, []float64{1 / math.Sqrt2, 0, 0, 0, 0.3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newTestRanker(t, Options{Normalization: tt.norm})
			for i := range tt.cands {
				tt.cands[i].ChunkID = string(rune('0' + i))
				tt.cands[i].DocumentID = tt.cands[i].ChunkID
			}
			res, err := r.Rank(Request{Query: Query{Text: "q", Embedding: tt.query}}, tt.cands)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]float64, len(tt.cands))
			for _, x := range res {
				got[x.Candidate.ChunkID[0]-'0'] = x.Breakdown.Vector
			}
			if diff := cmp.Diff(tt.want, got, floatCmp); diff != "" {
				t.Errorf("vector signal (-want +got):\n%s", diff)
			}
		})
	}
}

func TestExpandedFactor(t *testing.T) {
	// MaxScale. Every graph hit came through expansion: normalised 4/4 = 1, 2/4 = .5, then × factor.
	cands := []Candidate{
		{ChunkID: "p", DocumentID: "p", GraphScore: 4, HasGraph: true, GraphExpandedOnly: true},
		{ChunkID: "q", DocumentID: "q", GraphScore: 2, HasGraph: true, GraphExpandedOnly: true},
		{ChunkID: "r", DocumentID: "r", GraphScore: 2, HasGraph: true},
	}
	tests := []struct {
		factor float64
		want   map[string]float64
	}{
		{0, map[string]float64{"p": 0.7, "q": 0.35, "r": 0.5}}, // default .7: 1·.7, .5·.7, .5
		{0.5, map[string]float64{"p": 0.5, "q": 0.25, "r": 0.5}},
		{1, map[string]float64{"p": 1, "q": 0.5, "r": 0.5}},
	}
	for _, tt := range tests {
		r := newTestRanker(t, Options{ExpandedFactor: tt.factor, Normalization: MaxScale})
		res, err := r.Rank(Request{Query: Query{Text: "q"}}, cands)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, x := range res {
			got[x.Candidate.ChunkID] = x.Breakdown.Graph
		}
		if diff := cmp.Diff(tt.want, got, floatCmp); diff != "" {
			t.Errorf("factor %g (-want +got):\n%s", tt.factor, diff)
		}
	}
}

func TestDedupKeepsBestChunk(t *testing.T) {
	w, _ := ParseWeights("bm25:1")
	cands := []Candidate{
		{ChunkID: "d1-c1", DocumentID: "d1", BM25Score: 4, HasBM25: true, Start: 0, End: 100},
		{ChunkID: "d1-c2", DocumentID: "d1", BM25Score: 8, HasBM25: true, Start: 100, End: 250},
		{ChunkID: "d2-c1", DocumentID: "d2", BM25Score: 6, HasBM25: true, Start: 0, End: 80},
		// No document id: the URL is the key, so u-c2 folds into u-c1.
		{ChunkID: "u-c1", URL: "https://x.test/a", BM25Score: 2, HasBM25: true},
		{ChunkID: "u-c2", URL: "https://x.test/a", BM25Score: 1, HasBM25: true},
	}
	r := newTestRanker(t, Options{})
	res, err := r.Rank(Request{Query: Query{Text: "q"}, Weights: w}, cands)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID         string
		Start, End int
		Score      float64
	}
	var got []row
	for _, x := range res {
		got = append(got, row{x.Candidate.ChunkID, x.Candidate.Start, x.Candidate.End, x.Score})
	}
	// bm25 / 8: d1-c2 1, d2-c1 .75, u-c1 .25.
	want := []row{{"d1-c2", 100, 250, 1}, {"d2-c1", 0, 80, 0.75}, {"u-c1", 0, 0, 0.25}}
	if diff := cmp.Diff(want, got, floatCmp); diff != "" {
		t.Errorf("dedup (-want +got):\n%s", diff)
	}
}

// TestCopiesOfOnePageMakeOneResult: documents with the same content key (one page
// served at two URLs) fold into one result, the copy whose chunk ranks best, with
// each signal's best over both copies; documents without a key stay apart.
func TestCopiesOfOnePageMakeOneResult(t *testing.T) {
	w, _ := ParseWeights("bm25:1,title:1")
	cands := []Candidate{
		{ChunkID: "index-c1", DocumentID: "index", ContentKey: "h1", Title: "Git", BM25Score: 9, HasBM25: true},
		{ChunkID: "git-c1", DocumentID: "git", ContentKey: "h1", Title: "git manual", BM25Score: 8, HasBM25: true},
		{ChunkID: "blame-c1", DocumentID: "blame", ContentKey: "h2", BM25Score: 6, HasBM25: true},
		{ChunkID: "log-c1", DocumentID: "log", BM25Score: 4, HasBM25: true},
		{ChunkID: "log2-c1", DocumentID: "log2", BM25Score: 4, HasBM25: true},
	}
	r := newTestRanker(t, Options{})
	res, err := r.Rank(Request{Query: Query{Text: "git manual"}, Weights: w}, cands)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, x := range res {
		got = append(got, x.Candidate.DocumentID)
	}
	// git's title matches both query words: its chunk represents the pair (1.89
	// against index's 1.5), and the pair's bm25 is index's 9/9, not git's own 8/9.
	want := []string{"git", "blame", "log", "log2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	if res[0].Breakdown.BM25 != 1 {
		t.Errorf("the pair's bm25 signal is %v, want 1 (the best over both copies)", res[0].Breakdown.BM25)
	}
}

func TestMMR(t *testing.T) {
	w, _ := ParseWeights("bm25:1")
	// Relevance bm25/9: A 1, B 8/9 = .888889, C 5/9 = .555556.
	// A and B point the same way (cos 1), C is orthogonal to both (cos 0).
	cands := []Candidate{
		{ChunkID: "A", DocumentID: "A", BM25Score: 9, HasBM25: true, Embedding: []float32{1, 0}},
		{ChunkID: "B", DocumentID: "B", BM25Score: 8, HasBM25: true, Embedding: []float32{2, 0}},
		{ChunkID: "C", DocumentID: "C", BM25Score: 5, HasBM25: true, Embedding: []float32{0, 1}},
	}
	tests := []struct {
		name   string
		lambda float64
		limit  int
		want   []string
	}{
		// λ=1: relevance only.
		{"relevance only", 1, 0, []string{"A", "B", "C"}},
		// λ=.5: pick A (.5 vs .444 vs .278); then B = .444 − .5·1 = −.056 < C = .278 − 0 → C; then B.
		{"balanced", 0.5, 0, []string{"A", "C", "B"}},
		// λ=.9: after A, B = .9·.889 − .1·1 = .7 > C = .9·.556 = .5 → B.
		{"mostly relevance", 0.9, 0, []string{"A", "B", "C"}},
		// λ=0: all tie at 0 first → A (relevance order breaks ties); then B −1 < C 0 → C.
		{"diversity only", 0, 2, []string{"A", "C"}},
	}
	r := newTestRanker(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := r.Rank(Request{Query: Query{Text: "q"}, Weights: w, MMR: true, Lambda: tt.lambda, Limit: tt.limit}, cands)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for i, x := range res {
				got = append(got, x.Candidate.ChunkID)
				if x.Rank != i+1 {
					t.Errorf("result %d has rank %d, want %d", i, x.Rank, i+1)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("MMR order (-want +got):\n%s", diff)
			}
			// MMR re-orders but keeps the fusion score.
			for _, x := range res {
				if x.Candidate.ChunkID == "B" && math.Abs(x.Score-8.0/9) > 1e-9 {
					t.Errorf("score of B: got %g, want %g", x.Score, 8.0/9)
				}
			}
		})
	}
}

func TestRankLimitAndPreview(t *testing.T) {
	r := newTestRanker(t, Options{PreviewChars: 40})
	cands := threeCandidates()
	cands[0].Text = "Intro text here. The connect function opens a SQLite connection. Other."
	res, err := r.Rank(Request{Query: Query{Text: "sqlite connection"}, Limit: 2}, cands)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("got %d results, want 2", len(res))
	}
	// The best sentence (47 chars) is longer than 40: cut around "SQLite" (first match)
	// starting up to 13 runes earlier, at a word start: "a SQLite connection." is
	// preceded by "function opens " — 13 runes back from "SQLite" lands in "opens".
	if got, want := res[0].Preview, "opens a SQLite connection."; got != want {
		t.Errorf("preview: got %q, want %q", got, want)
	}
	if got := cands[0].Text[res[0].PreviewStart:res[0].PreviewEnd]; got != res[0].Preview {
		t.Errorf("preview offsets give %q, want %q", got, res[0].Preview)
	}
}

func TestRankEmptyAndBadRequests(t *testing.T) {
	r := newTestRanker(t, Options{})
	res, err := r.Rank(Request{Query: Query{Text: "q"}}, nil)
	if err != nil || len(res) != 0 {
		t.Errorf("no candidates: got %v, %v; want empty, nil", res, err)
	}
	bad := []struct {
		name string
		req  Request
	}{
		{"negative weight", Request{Weights: Weights{Vector: -1, BM25: 1}}},
		{"nan weight", Request{Weights: Weights{Vector: math.NaN()}}},
		{"unknown fusion", Request{Fusion: "borda"}},
		{"lambda above 1", Request{MMR: true, Lambda: 1.5}},
		{"lambda negative", Request{MMR: true, Lambda: -0.1}},
		{"negative limit", Request{Limit: -1}},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Rank(tt.req, threeCandidates())
			if !errors.Is(err, ErrBadRequest) {
				t.Errorf("got %v, want ErrBadRequest", err)
			}
		})
	}
}

func TestNewOptionsErrors(t *testing.T) {
	for name, o := range map[string]Options{
		"negative k":       {RRFK: -1},
		"factor above one": {ExpandedFactor: 1.5},
		"negative factor":  {ExpandedFactor: -0.1},
		"bad norm":         {Normalization: 7},
		"negative preview": {PreviewChars: -1},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("%s: got no error, want one", name)
		}
	}
}

func TestRankDoesNotModifyInput(t *testing.T) {
	r := newTestRanker(t, Options{})
	cands := threeCandidates()
	before := threeCandidates()
	if _, err := r.Rank(Request{Query: Query{Text: "sqlite"}, MMR: true, Lambda: 0.3}, cands); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(before, cands); diff != "" {
		t.Errorf("candidates changed (-before +after):\n%s", diff)
	}
}

func TestRankConcurrent(t *testing.T) {
	r := newTestRanker(t, Options{PreviewChars: 80})
	want, err := r.Rank(Request{Query: Query{Text: "sqlite connection"}}, threeCandidates())
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan string, 4)
	for range 4 {
		go func() {
			for range 50 {
				got, err := r.Rank(Request{Query: Query{Text: "sqlite connection"}}, threeCandidates())
				if err != nil || cmp.Diff(summarize(want), summarize(got)) != "" {
					errs <- fmt.Sprintf("concurrent Rank differs: %v", err)
					return
				}
			}
			errs <- ""
		}()
	}
	for range 4 {
		if e := <-errs; e != "" {
			t.Error(e)
		}
	}
}

func TestRRFParticipationFollowsPresenceNotValue(t *testing.T) {
	// MinMax maps the weaker vector hit to 0, but it was found by the retriever, so it
	// still ranks 2nd in the vector list: X = 61/61 = 1, Y = 61/62 = .983871.
	// A candidate without a vector score (Z) gets nothing.
	w, _ := ParseWeights("vector:1")
	r := newTestRanker(t, Options{Normalization: MinMax})
	res, err := r.Rank(Request{Query: Query{Text: "q"}, Weights: w, Fusion: RRF}, []Candidate{
		{ChunkID: "X", DocumentID: "X", VectorSimilarity: 0.9, HasVector: true},
		{ChunkID: "Y", DocumentID: "Y", VectorSimilarity: 0.5, HasVector: true},
		{ChunkID: "Z", DocumentID: "Z", BM25Score: 3, HasBM25: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, x := range res {
		got[x.Candidate.ChunkID] = x.Score
	}
	want := map[string]float64{"X": 1, "Y": 61.0 / 62, "Z": 0}
	if diff := cmp.Diff(want, got, floatCmp); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// TestRankDefault is the default rule (VectorMinMax, per-document maxima) on a worked
// example with two chunks in document A. Query "sqlite connection", embedding [1,0].
//
//	chunk  doc  vector            bm25   graph                 date     title
//	a1     A    .7 (retriever)    2      -                     3 d      "SQLite connection objects"
//	a2     A    .5 (retriever)    8      .6                    3 d      "SQLite connection objects"
//	b1     B    .6 (retriever)    -      .3, expansion only    40 d     "Cursor objects"
//	c1     C    [3,4] → cos .6    4      -                     none     "Connection pooling"
//
// Normalised: vector (v-.5)/(.7-.5) over the retriever's hits (c1's computed .6 → .5);
// bm25 /8; graph used as is (kg's score is in [0,1]), b1 × .7 = .21; recency 1, .6, .2;
// title 1 (phrase), 0, .5 (1 of 2 terms). Default weights 7/18, 5/18, 4/18, 2/18 and
// title 0 (the title is computed and shown, not weighed):
//
//	a1 = (7·1 + 4·.25 + 2·1)/18                 = 10/18  (A's representative: > a2)
//	a2 = (5·.6 + 4·1 + 2·1)/18                  = 9/18
//	A  = max per signal: v 1, g .6, bm25 1, rec 1
//	   = (7 + 3 + 4 + 2)/18                     = 16/18 = .889
//	c1 = (7·.5 + 4·.5 + 2·.2)/18                = 5.9/18 = .328
//	b1 = (7·.5 + 5·.21 + 2·.6)/18               = 5.75/18 = .319
func TestRankDefault(t *testing.T) {
	title := "SQLite connection objects"
	cands := []Candidate{
		{ChunkID: "a1", DocumentID: "A", Title: title, Published: daysAgo(3),
			VectorSimilarity: 0.7, HasVector: true, BM25Score: 2, HasBM25: true},
		{ChunkID: "a2", DocumentID: "A", Title: title, Published: daysAgo(3),
			VectorSimilarity: 0.5, HasVector: true, BM25Score: 8, HasBM25: true, GraphScore: 0.6, HasGraph: true},
		{ChunkID: "b1", DocumentID: "B", Title: "Cursor objects", Published: daysAgo(40),
			VectorSimilarity: 0.6, HasVector: true, GraphScore: 0.3, HasGraph: true, GraphExpandedOnly: true},
		{ChunkID: "c1", DocumentID: "C", Title: "Connection pooling", Embedding: []float32{3, 4},
			BM25Score: 4, HasBM25: true},
	}
	r := newTestRanker(t, Options{})
	got, err := r.Rank(Request{Query: Query{Text: "sqlite connection", Embedding: []float32{1, 0}}}, cands)
	if err != nil {
		t.Fatal(err)
	}
	want := []ranked{
		{"a1", 16.0 / 18, Breakdown{Vector: 1, Graph: 0.6, BM25: 1, Recency: 1, Title: 1, Final: 16.0 / 18}},
		{"c1", 5.9 / 18, Breakdown{Vector: 0.5, BM25: 0.5, Recency: 0.2, Title: 0.5, Final: 5.9 / 18}},
		{"b1", 5.75 / 18, Breakdown{Vector: 0.5, Graph: 0.21, Recency: 0.6, Final: 5.75 / 18}},
	}
	if diff := cmp.Diff(want, summarize(got), floatCmp); diff != "" {
		t.Errorf("ranking (-want +got):\n%s", diff)
	}
}

// TestRankRRFPerDocument: RRF ranks documents on their per-signal maxima. With
// bm25:1,vector:1 and k=60, document A (a1 vector .9, a2 bm25 5) is first on both
// signals although no single chunk is: 61·(1/61 + 1/61) = 2 → normalised weights
// .5 each → 1. B (vector .8, bm25 3) is second on both: 61/62.
func TestRankRRFPerDocument(t *testing.T) {
	cands := []Candidate{
		{ChunkID: "a1", DocumentID: "A", VectorSimilarity: 0.9, HasVector: true},
		{ChunkID: "a2", DocumentID: "A", BM25Score: 5, HasBM25: true},
		{ChunkID: "b1", DocumentID: "B", VectorSimilarity: 0.8, HasVector: true, BM25Score: 3, HasBM25: true},
	}
	w, _ := ParseWeights("vector:1,bm25:1")
	r := newTestRanker(t, Options{})
	res, err := r.Rank(Request{Query: Query{Text: "q"}, Weights: w, Fusion: RRF}, cands)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		ID    string
		Score float64
	}
	var got []row
	for _, x := range res {
		got = append(got, row{x.Candidate.ChunkID, x.Score})
	}
	// A's representative is a1: chunk-level RRF a1 = .5·61/61 = .5 (vector rank 1),
	// a2 = .5·61/61 = .5 (bm25 rank 1); the tie goes to the smaller chunk id.
	want := []row{{"a1", 1}, {"b1", 61.0 / 62}}
	if diff := cmp.Diff(want, got, floatCmp); diff != "" {
		t.Errorf("RRF per document (-want +got):\n%s", diff)
	}
}

func TestMinMaxOver(t *testing.T) {
	tests := []struct {
		name string
		v    []float64
		has  []bool
		ref  []bool
		want []float64
	}{
		{"reference range, others clamped", []float64{0.8, 0.4, 0.9, 0.2, 0.5}, []bool{true, true, true, true, false},
			[]bool{true, true, false, false, false}, []float64{1, 0, 1, 0, 0}},
		{"no reference: plain min-max", []float64{0.2, 0.6}, []bool{true, true}, []bool{false, false}, []float64{0, 1}},
		{"one reference value", []float64{0.5, 0.4}, []bool{true, true}, []bool{true, false}, []float64{1, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, minMaxOver(tt.v, tt.has, tt.ref), floatCmp); diff != "" {
				t.Errorf("minMaxOver (-want +got):\n%s", diff)
			}
		})
	}
}

func TestClamp01(t *testing.T) {
	for _, c := range []struct{ in, want float64 }{
		{-0.5, 0}, {0, 0}, {0.25, 0.25}, {1, 1}, {1.5, 1}, {math.NaN(), 0}, {math.Inf(1), 1}, {math.Inf(-1), 0},
	} {
		if got := Clamp01(c.in); got != c.want {
			t.Errorf("Clamp01(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}
