package ranker

import (
	"errors"
	"math"
	"strings"
	"testing"
)

const eps = 1e-9

func weightsClose(a, b Weights) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > eps {
			return false
		}
	}
	return true
}

func TestParseWeights(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want Weights
	}{
		// Already sums to 1: unchanged.
		{"design weights", "vector:0.35,graph:0.25,bm25:0.2,recency:0.1,title:0.1", DesignWeights()},
		// 0.35+0.25+0.2+0.1 = 0.9: the defaults (title 0) are the design's others scaled.
		{"defaults", "vector:0.35,graph:0.25,bm25:0.2,recency:0.1", DefaultWeights()},
		// 1+1 = 2 → each 1/2; unlisted signals 0.
		{"normalised", "vector:1,bm25:1", Weights{Vector: 0.5, BM25: 0.5}},
		// 2/(2+0) = 1: a zero switches graph off.
		{"zero switches off", "vector:2,graph:0", Weights{Vector: 1}},
		// 0.7+0.3 = 1; case and spaces ignored.
		{"case and spaces", " Vector : 0.7 , BM25:0.3 ", Weights{Vector: 0.7, BM25: 0.3}},
		// 3+1 = 4 → 0.75 / 0.25.
		{"above one", "title:3,recency:1", Weights{Title: 0.75, Recency: 0.25}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseWeights(tt.in)
			if err != nil {
				t.Fatalf("ParseWeights(%q): %v", tt.in, err)
			}
			if !weightsClose(got, tt.want) {
				t.Errorf("ParseWeights(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

func TestParseWeightsErrors(t *testing.T) {
	tests := []struct {
		in      string
		wantSub string
	}{
		{"", "empty list"},
		{"   ", "empty list"},
		{"vector", `"vector" is not name:value`},
		{"vector=0.3", "is not name:value"},
		{"colour:1", `unknown signal "colour"`},
		{"vector:-0.1", "vector must not be negative"},
		{"vector:NaN", "vector must be finite"},
		{"graph:+Inf", "graph must be finite"},
		{"bm25:abc", `value "abc" of bm25 is not a number`},
		{"vector:0,graph:0", ErrNoWeight.Error()},
		{"vector:1,vector:2", "vector given twice"},
		{"vector:1,,graph:1", "empty entry"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			_, err := ParseWeights(tt.in)
			if err == nil {
				t.Fatalf("ParseWeights(%q): got no error, want one containing %q", tt.in, tt.wantSub)
			}
			if !strings.Contains(err.Error(), tt.wantSub) {
				t.Errorf("ParseWeights(%q) error = %q, want it to contain %q", tt.in, err, tt.wantSub)
			}
		})
	}
}

func TestRenormalize(t *testing.T) {
	tests := []struct {
		name    string
		w       Weights
		without []Signal
		want    Weights
	}{
		// Defaults (7/18, 5/18, 4/18, 2/18) without graph: remaining 13/18.
		{"defaults without graph", DefaultWeights(), []Signal{Graph},
			Weights{Vector: 7.0 / 13, BM25: 4.0 / 13, Recency: 2.0 / 13}},
		// Design weights without graph: remaining sum 0.75.
		// vector .35/.75 = .466667, bm25 .2/.75 = .266667, recency = title = .1/.75 = .133333
		{"design without graph", DesignWeights(), []Signal{Graph},
			Weights{Vector: 0.35 / 0.75, BM25: 0.2 / 0.75, Recency: 0.1 / 0.75, Title: 0.1 / 0.75}},
		// Without graph and bm25: remaining .35+.1+.1 = .55.
		{"without graph and bm25", DesignWeights(), []Signal{Graph, BM25},
			Weights{Vector: 0.35 / 0.55, Recency: 0.1 / 0.55, Title: 0.1 / 0.55}},
		// Nothing dropped: already sums to 1.
		{"nothing dropped", DefaultWeights(), nil, DefaultWeights()},
		// Unnormalised input is normalised as well: 2/(2+2) each.
		{"unnormalised input", Weights{Vector: 2, Graph: 5, BM25: 2}, []Signal{Graph}, Weights{Vector: 0.5, BM25: 0.5}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.w.Renormalize(tt.without...)
			if err != nil {
				t.Fatalf("Renormalize: %v", err)
			}
			if !weightsClose(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("nothing left", func(t *testing.T) {
		_, err := Weights{Graph: 1}.Renormalize(Graph)
		if !errors.Is(err, ErrNoWeight) {
			t.Errorf("got %v, want ErrNoWeight", err)
		}
	})
	t.Run("bad signal", func(t *testing.T) {
		if _, err := DefaultWeights().Renormalize(Signal(9)); err == nil {
			t.Error("got no error for signal 9, want one")
		}
	})
}

func TestWeightsStringRoundTrip(t *testing.T) {
	w := Weights{Vector: 0.5, BM25: 0.25, Title: 0.25}
	if got, want := w.String(), "vector:0.5,bm25:0.25,title:0.25"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	back, err := ParseWeights(w.String())
	if err != nil || !weightsClose(back, w) {
		t.Errorf("ParseWeights(String()) = %v, %v; want %v", back, err, w)
	}
}

func TestParseSignalAndFusion(t *testing.T) {
	for _, s := range Signals {
		got, err := ParseSignal(strings.ToUpper(s.String()))
		if err != nil || got != s {
			t.Errorf("ParseSignal(%q) = %v, %v; want %v", strings.ToUpper(s.String()), got, err, s)
		}
	}
	for in, want := range map[string]Fusion{"": Weighted, "weighted": Weighted, "RRF": RRF} {
		got, err := ParseFusion(in)
		if err != nil || got != want {
			t.Errorf("ParseFusion(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseFusion("borda"); err == nil || !strings.Contains(err.Error(), `"borda"`) {
		t.Errorf("ParseFusion(borda) error = %v, want one naming it", err)
	}
}

func FuzzParseWeights(f *testing.F) {
	for _, s := range []string{"vector:0.35,graph:0.25,bm25:0.2,recency:0.1,title:0.1", "vector:1", "x:y", ",", "bm25:1e308,vector:1e308"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		w, err := ParseWeights(s)
		if err != nil {
			return
		}
		var sum float64
		for _, v := range w {
			if v < 0 || math.IsNaN(v) {
				t.Fatalf("ParseWeights(%q) = %v: negative or NaN weight", s, w)
			}
			sum += v
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Fatalf("ParseWeights(%q) sums to %g, want 1", s, sum)
		}
	})
}
