package main

import (
	"fmt"
	"math"
	"net/url"
	"testing"
)

func approx(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// twelve returns twelve pages p01..p12 all graded 1, and the first ten of them.
func twelve() (Judgments, []string) {
	j := Judgments{}
	var top []string
	for i := 1; i <= 12; i++ {
		p := fmt.Sprintf("p%02d.html", i)
		j[p] = 1
		if i <= 10 {
			top = append(top, p)
		}
	}
	return j, top
}

func TestMetrics(t *testing.T) {
	j12, top10 := twelve()
	// Expected values worked out by hand with log2(2)=1, log2(3)=1.5849625, log2(4)=2:
	//   a at rank 2, b at rank 3 of {a:2,b:1,c:1}: DCG = 2/1.5849625 + 1/2 = 1.7618595,
	//   IDCG = 2 + 1/1.5849625 + 1/2 = 3.1309298, nDCG = 0.5627273.
	//   [a a b] of {a:2,b:1}: DCG = 2 + 0 (repeat) + 1/2 = 2.5, IDCG = 2 + 0.6309298, nDCG = 0.9502344.
	//   [b a] of {a:2,b:1}: DCG = 1 + 2/1.5849625 = 2.2618595, nDCG = 2.2618595/2.6309298 = 0.8597187.
	tests := []struct {
		name              string
		ranked            []string
		j                 Judgments
		k                 int
		ndcg, mrr, recall float64
	}{
		{"perfect order", []string{"a", "b", "c"}, Judgments{"a": 2, "b": 1, "c": 1}, 10, 1, 1, 1},
		{"nothing relevant", []string{"x", "y"}, Judgments{"a": 2}, 10, 0, 0, 0},
		{"empty ranking", nil, Judgments{"a": 2}, 10, 0, 0, 0},
		{"relevant at ranks 2 and 3", []string{"x", "a", "b"}, Judgments{"a": 2, "b": 1, "c": 1}, 10, 0.5627272554, 0.5, 2.0 / 3},
		{"a repeated page gains once", []string{"a", "a", "b"}, Judgments{"a": 2, "b": 1}, 10, 0.9502344168, 1, 1},
		{"grades in the wrong order", []string{"b", "a"}, Judgments{"a": 2, "b": 1}, 10, 0.8597186999, 1, 1},
		{"relevant page below the cut-off", []string{"x", "y", "a"}, Judgments{"a": 2}, 2, 0, 0, 0},
		{"first useful page at rank 3", []string{"x", "y", "c", "a"}, Judgments{"a": 2, "c": 1}, 3, (1 / 2.0) / (2 + 1/math.Log2(3)), 1.0 / 3, 0.5},
		{"more judged pages than k", top10, j12, 10, 1, 1, 10.0 / 12},
		{"zero grade counts as not relevant", []string{"z", "a"}, Judgments{"a": 2, "z": 0}, 10, 2 / math.Log2(3) / 2, 0.5, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := NDCG(tc.ranked, tc.j, tc.k); !approx(got, tc.ndcg) {
				t.Errorf("NDCG = %.10f, want %.10f", got, tc.ndcg)
			}
			if got := MRR(tc.ranked, tc.j, tc.k); !approx(got, tc.mrr) {
				t.Errorf("MRR = %.10f, want %.10f", got, tc.mrr)
			}
			if got := Recall(tc.ranked, tc.j, tc.k); !approx(got, tc.recall) {
				t.Errorf("Recall = %.10f, want %.10f", got, tc.recall)
			}
		})
	}
}

func TestMetricsNoJudgments(t *testing.T) {
	for name, f := range map[string]func([]string, Judgments, int) float64{"NDCG": NDCG, "MRR": MRR, "Recall": Recall} {
		if got := f([]string{"a"}, Judgments{}, 10); got != 0 {
			t.Errorf("%s with no judgments = %v, want 0", name, got)
		}
	}
}

func TestPageKey(t *testing.T) {
	site := mustURL(t, "http://127.0.0.1:8099/")
	docs := mustURL(t, "http://docs.example/py/")
	tests := []struct {
		name string
		raw  string
		root *url.URL
		want string
	}{
		{"fragment stripped", "http://127.0.0.1:8099/library/os.html#os.listdir", site, "library/os.html"},
		{"query stripped", "http://127.0.0.1:8099/library/re.html?highlight=findall", site, "library/re.html"},
		{"directory means index", "http://127.0.0.1:8099/tutorial/", site, "tutorial/index.html"},
		{"site root", "http://127.0.0.1:8099/", site, "index.html"},
		{"site root without slash", "http://127.0.0.1:8099", site, "index.html"},
		{"host case ignored", "HTTP://127.0.0.1:8099/glossary.html", site, "glossary.html"},
		{"other host kept whole", "http://other.example/library/os.html#x", site, "http://other.example/library/os.html"},
		{"root with a path", "http://docs.example/py/library/json.html#json.dumps", docs, "library/json.html"},
		{"root path without slash", "http://docs.example/py", docs, "index.html"},
		{"outside the root path kept whole", "http://docs.example/other/json.html", docs, "http://docs.example/other/json.html"},
		{"relative url without root", "/library/os.html#x", nil, "library/os.html"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := PageKey(tc.raw, tc.root)
			if err != nil {
				t.Fatalf("PageKey(%q): %v", tc.raw, err)
			}
			if got != tc.want {
				t.Errorf("PageKey(%q) = %q, want %q", tc.raw, got, tc.want)
			}
		})
	}
	if _, err := PageKey("http://[::1", site); err == nil {
		t.Error("PageKey of a malformed URL: got no error, want one")
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func TestSignTest(t *testing.T) {
	// Worked by hand: 5 wins 0 losses: 2 * (1/2)^5 = 0.0625; 2 wins 1 loss:
	// 2 * (1 + 3)/8 = 1 (capped); 8 wins 2 losses: 2 * (1 + 10 + 45)/1024 = 0.109375.
	tests := []struct {
		wins, losses int
		want         float64
	}{
		{5, 0, 0.0625},
		{0, 5, 0.0625},
		{2, 1, 1},
		{8, 2, 0.109375},
		{0, 0, 1},
		{1, 1, 1},
	}
	for _, tc := range tests {
		if got := SignTest(tc.wins, tc.losses); !approx(got, tc.want) {
			t.Errorf("SignTest(%d, %d) = %v, want %v", tc.wins, tc.losses, got, tc.want)
		}
	}
	if got := SignTest(400, 100); got <= 0 || got > 1e-30 {
		t.Errorf("SignTest(400, 100) = %g, want a tiny positive p", got)
	}
}
