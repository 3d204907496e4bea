package extract

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
)

type codeWordsSet struct {
	Documents []Document `json:"documents"`
	MustNot   []string   `json:"must_not"`
	Must      []string   `json:"must"`
}

// TestCodeWords runs documentation pages whose code spans and code blocks are
// full of everyday words (as crawled pages send them) through an extractor with
// a learner, twice so that learned terms take effect: the everyday words must
// not become entities, not even after the learner has seen them in three
// documents, while the real identifiers must.
func TestCodeWords(t *testing.T) {
	b, err := os.ReadFile("testdata/codewords/docs.json")
	if err != nil {
		t.Fatal(err)
	}
	var set codeWordsSet
	if err := json.Unmarshal(b, &set); err != nil {
		t.Fatalf("decode testdata/codewords/docs.json: %v", err)
	}
	l := NewLearner(LearnerConfig{})
	x, err := New(WithLearner(l))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range set.Documents {
		x.Document(d)
	}
	found := make(map[string][]string) // entity id -> chunks
	for _, d := range set.Documents {
		res := x.Document(d)
		for _, m := range res.Mentions {
			found[m.EntityID] = append(found[m.EntityID], m.ChunkID)
		}
	}
	t.Run("everyday words", func(t *testing.T) {
		for _, w := range set.MustNot {
			if chunks, ok := found[x.Resolve(w)]; ok {
				t.Errorf("%q is an entity in chunks %v, want no entity", w, chunks)
			}
		}
	})
	t.Run("identifiers", func(t *testing.T) {
		for _, w := range set.Must {
			if _, ok := found[x.Resolve(w)]; !ok {
				t.Errorf("%q (id %s) is not an entity, want one", w, x.Resolve(w))
			}
		}
	})
	t.Run("learned terms", func(t *testing.T) {
		for _, lt := range l.Promoted() {
			if slices.Contains(set.MustNot, strings.ToLower(lt.Name)) {
				t.Errorf("learner promoted %q (%s, %d documents), want everyday words left alone", lt.Name, lt.Type, lt.Documents)
			}
		}
	})
	t.Run("query", func(t *testing.T) {
		for _, q := range []string{"default mode without version", "module function message value"} {
			if got := x.Query(q); len(got) != 0 {
				t.Errorf("Query(%q) = %v, want no entities", q, got)
			}
		}
		q := "asyncio json module os.path print()"
		var ids []string
		for _, e := range x.Query(q) {
			ids = append(ids, e.ID)
		}
		for _, want := range []string{"asyncio", "json", "os.path", "print"} {
			if !slices.Contains(ids, x.Resolve(want)) {
				t.Errorf("Query(%q) = %v, want %s among them", q, ids, x.Resolve(want))
			}
		}
	})
}

func TestIsProseWord(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"default", true}, {"Changed", true}, {"DEFAULT", true}, {"values", true}, {"named", true},
		{"calling", true}, {"entries", true}, {"foo", true}, {"a", true},
		{"asyncio", false}, {"zipfile", false}, {"max_bytes", false}, {"os.path", false}, {"ValueError", false},
		{"print()", false}, {"utf8", false}, {"kubectl", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := isProseWord(tt.in); got != tt.want {
				t.Errorf("isProseWord(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// TestUpperCaseNamesNeedTheirCase: a known all-capital name that is also an
// English word (the DISPLAY variable, the SELECT keyword) is found only as
// written, not in the everyday word.
func TestUpperCaseNamesNeedTheirCase(t *testing.T) {
	x, err := New()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text, name, written string
	}{
		{"Export DISPLAY before the viewer starts, or it cannot display the chart.", "DISPLAY", "DISPLAY"},
		{"Select the rows with a SELECT statement and display them.", "SELECT", "SELECT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: tt.text}}})
			id := x.Resolve(tt.name)
			var got []string
			for _, m := range res.Mentions {
				if m.EntityID == id {
					for _, o := range m.Offsets {
						got = append(got, tt.text[o.Start:o.End])
					}
				}
			}
			if want := []string{tt.written}; !slices.Equal(got, want) {
				t.Errorf("mentions of %s = %q, want %q", tt.name, got, want)
			}
		})
	}
}

// TestAddKnownEverydayWord: an everyday word the graph hands back as a live
// gazetteer entry matches only in code, not all over prose.
func TestAddKnownEverydayWord(t *testing.T) {
	x, err := New()
	if err != nil {
		t.Fatal(err)
	}
	if err := x.AddKnown("Availability", "concept"); err != nil {
		t.Fatal(err)
	}
	if err := x.AddKnown("Quokka Engine", "database"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text, id string
		want     int
	}{
		{"Notes on the availability of these functions.", "availability", 0},
		{"Availability is checked first.", "availability", 0},
		{"The `availability` field holds it.", "availability", 1},
		{"The quokka engine stores rows.", "quokka-engine", 1},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			res := x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: tt.text}}})
			n := 0
			for _, m := range res.Mentions {
				if m.EntityID == tt.id {
					n += m.Count
				}
			}
			if n != tt.want {
				t.Errorf("mentions of %s = %d, want %d", tt.id, n, tt.want)
			}
		})
	}
}

func TestIsEverydayWord(t *testing.T) {
	for in, want := range map[string]bool{"default": true, "--file": true, "/a": true, "Availability": true, "xy": true,
		"asyncio": false, "--verbose-json": false, "Kafka": false, "write-ahead log": false} {
		if got := IsEverydayWord(in); got != want {
			t.Errorf("IsEverydayWord(%q) = %v, want %v", in, got, want)
		}
	}
}

// TestCodeRanges: exact code ranges from the caller decide what is code; bad
// ranges are ignored.
func TestCodeRanges(t *testing.T) {
	x, err := New()
	if err != nil {
		t.Fatal(err)
	}
	text := "Open it with the with statement; it works with zipfile.\n\nfor name in names:\n    print(name)\n\nDone with é."
	at := func(s string, nth int) Span {
		k := -1
		for range nth {
			k += 1 + strings.Index(text[k+1:], s)
		}
		return Span{k, k + len(s)}
	}
	block := Span{strings.Index(text, "for name"), strings.Index(text, "\n\nDone")}
	e := strings.Index(text, "é")
	ch := Chunk{ID: "c", Text: text,
		CodeRanges: []Span{at("with", 2), at("zipfile", 1), {-1, 3}, {5, 500}, {e + 1, e + 2}, {9, 9}},
		CodeBlocks: []Span{block}}
	res := x.Document(Document{ID: "d", Chunks: []Chunk{ch}})
	got := make(map[string][]string)
	for _, m := range res.Mentions {
		for _, o := range m.Offsets {
			got[m.EntityID] = append(got[m.EntityID], fmt.Sprintf("%d:%s", o.Start, text[o.Start:o.End]))
		}
	}
	want := map[string][]string{
		"with":    {fmt.Sprintf("%d:with", at("with", 2).Start)},
		"zipfile": {fmt.Sprintf("%d:zipfile", at("zipfile", 1).Start)},
		"print":   {fmt.Sprintf("%d:print", strings.Index(text, "print"))},
	}
	for id, w := range want {
		if !slices.Equal(got[id], w) {
			t.Errorf("mentions of %s = %v, want %v", id, got[id], w)
		}
	}
	if g, ok := got["for"]; ok {
		t.Errorf("mentions of the keyword for = %v, want none (syntax of a code block)", g)
	}
}
