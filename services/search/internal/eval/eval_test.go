package eval

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestMetrics(t *testing.T) {
	rel := map[string]int{"a": 2, "b": 1}
	tests := []struct {
		name   string
		ranked []string
		ndcg   float64
		mrr    float64
		recall float64
	}{
		// DCG = 3/log2(2) + 1/log2(4) = 3.5; IDCG = 3 + 1/log2(3) = 3.63093
		{"a x b", []string{"a", "x", "b"}, 3.5 / (3 + 1/math.Log2(3)), 1, 1},
		{"x a", []string{"x", "a"}, (3 / math.Log2(3)) / (3 + 1/math.Log2(3)), 0.5, 0.5},
		{"nothing", []string{"x", "y"}, 0, 0, 0},
		{"empty", nil, 0, 0, 0},
		{"duplicate counts once", []string{"a", "a"}, 3 / (3 + 1/math.Log2(3)), 1, 0.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NDCG(tt.ranked, rel, 10); math.Abs(got-tt.ndcg) > 1e-9 {
				t.Errorf("NDCG: got %.6f, want %.6f", got, tt.ndcg)
			}
			if got := MRR(tt.ranked, rel, 10); got != tt.mrr {
				t.Errorf("MRR: got %v, want %v", got, tt.mrr)
			}
			if got := Recall(tt.ranked, rel, 10); got != tt.recall {
				t.Errorf("Recall: got %v, want %v", got, tt.recall)
			}
		})
	}
	if got := MRR([]string{"x", "a"}, rel, 1); got != 0 {
		t.Errorf("MRR@1 beyond the cut: got %v", got)
	}
}

func TestPathOf(t *testing.T) {
	roots := map[string]bool{"library": true, "tutorial": true}
	for in, want := range map[string]string{
		"http://127.0.0.1:8099/library/json.html#basic":        "library/json.html",
		"http://h/docs/python3.11/html/tutorial/venv.html?x=1": "tutorial/venv.html",
		"http://h/glossary.html":                               "glossary.html",
	} {
		if got := PathOf(in, roots); got != want {
			t.Errorf("PathOf(%q): got %q, want %q", in, got, want)
		}
	}
}

// TestRunAsksEachSystem checks the parameters each system sends and the signal filter.
func TestRunAsksEachSystem(t *testing.T) {
	var seen []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.Query().Get("weights")+"|"+r.URL.Query().Get("fusion")+"|"+r.URL.Query().Get("expand"))
		resp := apiResponse{Results: []apiResult{
			{URL: "http://d/library/b.html", ScoreBreakdown: map[string]float64{"bm25": 0, "vector": 0.5}},
			{URL: "http://d/library/a.html", ScoreBreakdown: map[string]float64{"bm25": 1, "vector": 0.4}},
		}}
		_ = json.NewEncoder(w).Encode(resp)
	}))
	defer srv.Close()
	set := Set{Queries: []Query{{Q: "x", Relevant: map[string]int{"library/a.html": 2}}}}
	scores, err := Run(context.Background(), srv.URL, set, 10, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"||", "bm25:1||false", "vector:1||false", "vector:1,bm25:1|rrf|false"}
	for i := range want {
		if seen[i] != want[i] {
			t.Errorf("request %d: got %q, want %q", i, seen[i], want[i])
		}
	}
	// BM25 only drops the result BM25 did not find, so a.html is first: MRR 1.
	if scores[1].MRR != 1 || scores[0].MRR != 0.5 || scores[2].MRR != 0.5 {
		t.Errorf("MRR per system: got %v %v %v, want 0.5 1 0.5", scores[0].MRR, scores[1].MRR, scores[2].MRR)
	}
}

func TestLoadTheShippedSet(t *testing.T) {
	s, err := Load("../../testdata/eval/pydocs.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Queries) < 40 {
		t.Errorf("got %d queries, want at least 40", len(s.Queries))
	}
}
