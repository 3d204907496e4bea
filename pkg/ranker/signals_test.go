package ranker

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRecencyScore(t *testing.T) {
	d := 24 * time.Hour
	tests := []struct {
		name string
		t    time.Time
		want float64
	}{
		{"now", testNow, 1.0},
		{"6d23h", testNow.Add(-7*d + time.Hour), 1.0},
		{"exactly 7d", testNow.Add(-7 * d), 0.8},
		{"29d", testNow.Add(-29 * d), 0.8},
		{"exactly 30d", testNow.Add(-30 * d), 0.6},
		{"89d", testNow.Add(-89 * d), 0.6},
		{"90d", testNow.Add(-90 * d), 0.4},
		{"179d", testNow.Add(-179 * d), 0.4},
		{"180d", testNow.Add(-180 * d), 0.3},
		{"364d", testNow.Add(-364 * d), 0.3},
		{"365d", testNow.Add(-365 * d), 0.2},
		{"3 years", testNow.Add(-3 * 365 * d), 0.2},
		{"unknown", time.Time{}, UnknownRecency},
		{"future", testNow.Add(5 * d), 1.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RecencyScore(tt.t, testNow); got != tt.want {
				t.Errorf("RecencyScore: got %g, want %g", got, tt.want)
			}
		})
	}
}

func TestRecencyUsesNewestDateAndInjectedClock(t *testing.T) {
	tests := []struct {
		name      string
		published time.Time
		updated   time.Time
		want      float64
	}{
		// Published 2 years ago but updated 10 days ago → 10 d tier 0.8.
		{"updated wins", daysAgo(730), daysAgo(10), 0.8},
		// Updated older than published (bad metadata): published (3 d) wins → 1.0.
		{"published wins", daysAgo(3), daysAgo(400), 1.0},
		{"only updated", time.Time{}, daysAgo(100), 0.4},
		{"neither", time.Time{}, time.Time{}, 0.2},
	}
	r := newTestRanker(t, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := r.Rank(Request{Query: Query{Text: "q"}}, []Candidate{{ChunkID: "x", Published: tt.published, Updated: tt.updated}})
			if err != nil {
				t.Fatal(err)
			}
			if got := res[0].Breakdown.Recency; got != tt.want {
				t.Errorf("recency: got %g, want %g", got, tt.want)
			}
		})
	}
	// The clock is injected: the same page is 1.0 on the day and 0.2 two years later.
	page := []Candidate{{ChunkID: "x", Published: testNow}}
	later := newTestRanker(t, Options{Now: func() time.Time { return testNow.Add(2 * 365 * 24 * time.Hour) }})
	res, _ := later.Rank(Request{Query: Query{Text: "q"}}, page)
	if got := res[0].Breakdown.Recency; got != 0.2 {
		t.Errorf("recency two years later: got %g, want 0.2", got)
	}
}

func TestTitleSignal(t *testing.T) {
	tests := []struct {
		name     string
		query    string
		entities []string
		title    string
		headings []string
		want     float64
	}{
		{"phrase in title", "sqlite connection", nil, "SQLite Connection objects", nil, 1},
		// Stopwords dropped, light stemming: " open connection " in " open connection ".
		{"phrase after stemming", "how to open connections", nil, "Opening a connection", nil, 1},
		// 1 of 3 terms (cursor) → 1/3.
		{"term overlap", "sqlite cursor fetch", nil, "Cursor objects", nil, 1.0 / 3},
		// terms python ✗ sqlite ✓ cursor ✓ → 2/3; entities Python ✗ SQLite ✓ → 1/2;
		// .5·.5 + .5·2/3 = .583333
		{"entity and term overlap", "python sqlite cursor", []string{"Python", "SQLite"}, "SQLite cursor guide", nil, 0.25 + 1.0/3},
		// Multi-word entity must appear as a phrase: "row factory" ✓ → 1; terms row ✓ factory ✓ → 1.
		// (the query phrase "set row factory" is not in the title, so no shortcut)
		{"multi-word entity", "set row factory", []string{"row factory"}, "The row factory attribute", nil, 0.5*1 + 0.5*2.0/3},
		// Heading only: title 0, heading phrase match 1 → .5·1.
		{"heading at half", "row factory", nil, "sqlite3 module", []string{"Reference", "Row factory examples"}, 0.5},
		// Title .5 (1 of 2 terms) beats heading .5·.5.
		{"title beats heading", "row factory", nil, "Row objects", []string{"Factory list"}, 0.5},
		{"whole words only", "row", nil, "Arrows and throws", nil, 0},
		{"empty query", "", nil, "Anything", nil, 0},
		{"empty title", "sqlite", nil, "", nil, 0},
		// Only stopwords: Terms keeps them, so "how to" matches "How to guide" fully.
		{"stopword-only query", "how to", nil, "How to guide", nil, 1},
		// Entities without terms: entity overlap only. "?" has no words → terms empty.
		{"entities only", "?", []string{"SQLite"}, "About SQLite", nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tq := newTitleQuery(Query{Text: tt.query, Entities: tt.entities}, 1)
			got := tq.score(tt.title, tt.headings)
			if diff := cmp.Diff(tt.want, got, floatCmp); diff != "" {
				t.Errorf("title signal: got %g, want %g", got, tt.want)
			}
		})
	}
}

func TestStem(t *testing.T) {
	tests := map[string]string{
		"connections": "connection",
		"connection":  "connection",
		"queries":     "query",
		"indexes":     "index",
		"indexing":    "index",
		"indexed":     "index",
		"create":      "creat",
		"created":     "creat",
		"creating":    "creat",
		"running":     "run",
		"installed":   "install",
		"passes":      "pass",
		"matches":     "match",
		"files":       "file",
		"class":       "class",
		"status":      "status",
		"analysis":    "analysis",
		"c++":         "c++",
		"go":          "go",
		"naïve":       "naïve",
	}
	for in, want := range tests {
		if got := stem(in); got != want {
			t.Errorf("stem(%q): got %q, want %q", in, got, want)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		// Final 'e' of stems longer than 4 letters is dropped on both sides of every
		// comparison: "sqlite" → "sqlit", "templates" → "template" → "templat".
		{"How do I open SQLite connections?", []string{"open", "sqlit", "connection"}},
		{"C++ templates vs C# generics", []string{"c++", "templat", "c#", "generic"}},
		{"index indexes indexing", []string{"index"}},
		{"the of", []string{"the", "of"}},
		{"", []string{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Terms(tt.in)); diff != "" {
			t.Errorf("Terms(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestStopwordLengthBound(t *testing.T) {
	// isStopword skips the lookup for words longer than maxStopwordLen.
	for w := range stopwords {
		if len(w) > maxStopwordLen {
			t.Errorf("stopword %q has %d bytes, more than maxStopwordLen %d", w, len(w), maxStopwordLen)
		}
	}
}

func TestPrefixFilterNeverHidesAMatch(t *testing.T) {
	// Every word must keep its first two bytes when stemmed, or the filter would
	// drop words that stem to a wanted stem.
	for _, w := range []string{"queries", "passes", "running", "indexed", "ties", "uses", "created", "abed", "eyes", "c++", "été", "naïve"} {
		s := stem(w)
		if !newPrefixFilter([]string{s}).may(w) {
			t.Errorf("filter built from stem(%q) = %q rejects %q", w, s, w)
		}
	}
}
