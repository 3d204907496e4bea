package extract

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLearnerPromotion(t *testing.T) {
	l := NewLearner(LearnerConfig{})
	terms := []Term{{Name: "Flux Router", Type: "software", Source: TermHeading}, {Name: "Flux Router", Type: "software", Source: TermCapitalised}}
	l.Observe("d1", terms, nil)
	if got := l.Promoted(); len(got) != 0 {
		t.Fatalf("after one document: got %v promoted, want none (needs 2 documents)", got)
	}
	l.Observe("d1", terms, nil) // the same document again replaces, it does not add
	if got := l.Promoted(); len(got) != 0 {
		t.Fatalf("after re-observing d1: got %v, want none", got)
	}
	l.Observe("d2", terms[:1], nil)
	got := l.Promoted()
	want := LearnedTerm{ID: "flux-router", Name: "Flux Router", Type: "software", Documents: 2, Score: 3}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("after two documents: got %+v, want [%+v]", got, want)
	}
	l.Forget("d2")
	if got := l.Promoted(); len(got) != 0 {
		t.Errorf("after forgetting d2: got %v, want none", got)
	}
	if n := l.Documents(); n != 1 {
		t.Errorf("documents: got %d, want 1", n)
	}
}

func TestLearnerCounts(t *testing.T) {
	l := NewLearner(LearnerConfig{})
	l.Observe("d1", nil, [][]string{{"a", "b"}, {"a"}, {"c"}})
	l.Observe("d2", nil, [][]string{{"b", "a", "a"}})
	ca, cb, cab, n := l.Counts("b", "a")
	if ca != 2 || cb != 3 || cab != 2 || n != 4 {
		t.Errorf("counts(b, a): got %d %d %d %d, want 2 3 2 4 (a in 3 chunks, b in 2, together 2, of 4)", ca, cb, cab, n)
	}
	l.Observe("d1", nil, [][]string{{"c"}}) // replaces d1
	ca, cb, cab, n = l.Counts("a", "b")
	if ca != 1 || cb != 1 || cab != 1 || n != 2 {
		t.Errorf("counts after replacing d1: got %d %d %d %d, want 1 1 1 2", ca, cb, cab, n)
	}
}

// TestLearnerInExtraction: a name seen in headings and prose of two documents is
// promoted and then found in a third document where nothing else marks it.
func TestLearnerInExtraction(t *testing.T) {
	l := NewLearner(LearnerConfig{})
	x := newTestExtractor(t, WithLearner(l))
	for i := 1; i <= 2; i++ {
		x.Document(Document{ID: fmt.Sprintf("d%d", i), Title: "Using Quillmate Sync",
			Chunks: []Chunk{{ID: "c", Text: "Quillmate Sync copies notes between devices."}}})
	}
	promoted := l.Promoted()
	if len(promoted) == 0 || promoted[0].ID != "quillmate-sync" {
		t.Fatalf("promoted: got %+v, want quillmate-sync", promoted)
	}
	got := x.Query("how does quillmate sync handle conflicts")
	if len(got) != 1 || got[0].ID != "quillmate-sync" || got[0].Confidence > confLearned {
		t.Errorf("query: got %+v, want quillmate-sync at confidence <= %v", got, confLearned)
	}
}

// TestLearnerCooccurrence: with a learner, NPMI uses the corpus counts.
func TestLearnerCooccurrence(t *testing.T) {
	l := NewLearner(LearnerConfig{})
	x := newTestExtractor(t, WithLearner(l))
	x.Document(Document{ID: "d1", Chunks: []Chunk{{ID: "c1", Text: "Celery talks to RabbitMQ."}, {ID: "c2", Text: "Grafana."}}})
	res := x.Document(Document{ID: "d2", Chunks: []Chunk{{ID: "c1", Text: "Celery and RabbitMQ again."}, {ID: "c2", Text: "Kibana."}}})
	// corpus: 4 chunks; celery in 2, rabbitmq in 2, together in 2 → NPMI 1
	for _, r := range res.Relations {
		if r.Type == RelCoOccurs && r.From == "celery" && r.To == "rabbitmq" {
			if math.Abs(r.Weight-1) > 1e-9 {
				t.Errorf("NPMI: got %v, want 1", r.Weight)
			}
			return
		}
	}
	t.Errorf("CO_OCCURS celery–rabbitmq missing in %+v", res.Relations)
}

func TestLearnerConcurrent(t *testing.T) {
	l := NewLearner(LearnerConfig{})
	x := newTestExtractor(t, WithLearner(l))
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				x.Document(Document{ID: fmt.Sprintf("d%d-%d", g, i), Title: "Zarnok Engine",
					Chunks: []Chunk{{ID: "c", Text: "Zarnok Engine uses Redis and PostgreSQL."}}})
				x.Query("zarnok engine redis")
				l.Promoted()
			}
		}(g)
	}
	wg.Wait()
	if n := l.Documents(); n != 80 {
		t.Errorf("documents: got %d, want 80", n)
	}
}

func TestLearnerSaveLoad(t *testing.T) {
	l := NewLearner(LearnerConfig{MinDocuments: 2, MinScore: 2})
	for _, id := range []string{"d1", "d2"} {
		l.Observe(id, []Term{{Name: "Brontide Mesh", Type: "software", Source: TermAnchor}, {Name: "brontide mesh", Source: TermCode}},
			[][]string{{"a", "b"}, {"b"}})
	}
	var buf bytes.Buffer
	if err := l.Save(&buf); err != nil {
		t.Fatalf("save: %v", err)
	}
	got, err := LoadLearner(&buf)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	if diff := cmp.Diff(l.Promoted(), got.Promoted()); diff != "" {
		t.Errorf("promoted after load (-want +got):\n%s", diff)
	}
	a1, b1, ab1, n1 := l.Counts("a", "b")
	a2, b2, ab2, n2 := got.Counts("a", "b")
	if a1 != a2 || b1 != b2 || ab1 != ab2 || n1 != n2 {
		t.Errorf("counts after load: got %d %d %d %d, want %d %d %d %d", a2, b2, ab2, n2, a1, b1, ab1, n1)
	}
	got.Forget("d1") // contributions survive the round trip
	if _, _, _, n := got.Counts("a", "b"); n != 2 {
		t.Errorf("chunks after forgetting d1: got %d, want 2", n)
	}
	for _, bad := range []string{"", "{", `{"version": 2}`, `{"version": 1, "docs": {"d": {"terms": {"": {"name": "x", "weight": 1}}}}}`} {
		if _, err := LoadLearner(strings.NewReader(bad)); !errors.Is(err, ErrBadLearnerState) {
			t.Errorf("LoadLearner(%q): got %v, want ErrBadLearnerState", bad, err)
		}
	}
}

// TestLearnerSpecificity: terms on every page (navigation links, or matched
// everywhere once promoted) and terms whose key is an everyday word are not
// promoted; an identifier-shaped term on every page is.
func TestLearnerSpecificity(t *testing.T) {
	l := NewLearner(LearnerConfig{})
	for i := range 30 {
		terms := []Term{
			{Name: "Report a Bug", Type: "concept", Source: TermAnchor},
			{Name: "Report a Bug", Type: "concept", Source: TermHeading},
			{Name: "QuerySet", Type: "class", Source: TermCode},
			{Name: "QuerySet", Type: "class", Source: TermHeading},
			{Name: "--file", Type: "cli_option", Source: TermCode},
			{Name: "--file", Type: "cli_option", Source: TermHeading},
		}
		if i%10 == 0 {
			terms = append(terms, Term{Name: "Shard Keeper", Type: "software", Source: TermHeading},
				Term{Name: "Shard Keeper", Type: "software", Source: TermCapitalised})
		}
		l.Observe(fmt.Sprintf("d%d", i), terms, nil)
	}
	got := make(map[string]bool)
	for _, p := range l.Promoted() {
		got[p.ID] = true
	}
	for id, want := range map[string]bool{"report-a-bug": false, "file": false, "queryset": true, "shard-keeper": true} {
		if got[id] != want {
			t.Errorf("promoted[%s] = %v, want %v (promoted: %v)", id, got[id], want, l.Promoted())
		}
	}
}

// TestLearnerEverydayWordsNotPromoted: a term made of an everyday word fed to a
// Learner directly (or from a state saved by an older version) is not
// promoted, so it matches nowhere: not in prose, not in code.
func TestLearnerEverydayWordsNotPromoted(t *testing.T) {
	l := NewLearner(LearnerConfig{})
	for _, d := range []string{"d1", "d2"} {
		l.Observe(d, []Term{{Name: "Namespace", Type: "class", Source: TermCode}, {Name: "Namespace", Type: "class", Source: TermHeading},
			{Name: "default", Type: "identifier", Source: TermCode}, {Name: "default", Type: "identifier", Source: TermHeading}}, nil)
	}
	x, err := New(WithLearner(l))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text string
		want int
	}{
		{"Every namespace has a name.", 0},
		{"The parser returns a `Namespace` with the values.", 0},
		{"The parser returns a `default` with the values.", 0},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			res := x.Document(Document{ID: "q", Chunks: []Chunk{{ID: "c", Text: tt.text}}})
			n := 0
			for _, m := range res.Mentions {
				if m.EntityID == "namespace" || m.EntityID == "default" {
					n += m.Count
				}
			}
			if n != tt.want {
				t.Errorf("mentions of namespace or default = %d, want %d", n, tt.want)
			}
		})
	}
}

// TestLearnedWordLevels: a promoted single word in lower case matches in code
// only (it may be a verb of prose: split, extract); a capitalised one only as
// written; a name of several words in any case.
func TestLearnedWordLevels(t *testing.T) {
	l := NewLearner(LearnerConfig{})
	for _, d := range []string{"d1", "d2"} {
		l.Observe(d, []Term{
			{Name: "splitext", Type: "function", Source: TermCode}, {Name: "splitext", Type: "function", Source: TermHeading},
			{Name: "Quillmesh", Type: "software", Source: TermHeading}, {Name: "Quillmesh", Type: "software", Source: TermAnchor},
			{Name: "Shard Keeper", Type: "software", Source: TermHeading}, {Name: "Shard Keeper", Type: "software", Source: TermAnchor},
		}, nil)
	}
	x, err := New(WithLearner(l))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		text, id string
		want     int
	}{
		{"We splitext the names first.", "splitext", 0},
		{"Call `splitext` on the name.", "splitext", 1},
		{"Call splitext() on the name.", "splitext", 1},
		{"Quillmesh routes the request.", "quillmesh", 1},
		{"the quillmesh of the port", "quillmesh", 0},
		{"a shard keeper holds the lease", "shard-keeper", 1},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			res := x.Document(Document{ID: "q", Chunks: []Chunk{{ID: "c", Text: tt.text}}})
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
