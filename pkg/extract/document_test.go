package extract

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDocumentEmpty(t *testing.T) {
	x := newTestExtractor(t)
	for _, doc := range []Document{{}, {ID: "d"}, {ID: "d", Chunks: []Chunk{{ID: "c"}, {ID: "c2", Text: "   \n\t "}}}} {
		res := x.Document(doc)
		if len(res.Entities)+len(res.Mentions)+len(res.Relations)+len(res.Links) != 0 {
			t.Errorf("Document(%+v): got %+v, want an empty result", doc, res)
		}
		if res.Entities == nil || res.Mentions == nil || res.Relations == nil {
			t.Errorf("Document(%+v): nil slices, want empty ones (they encode as [])", doc)
		}
	}
	if got := x.Query(""); got == nil || len(got) != 0 {
		t.Errorf("Query(\"\"): got %#v, want an empty slice", got)
	}
}

func TestDocumentLinksAndTitle(t *testing.T) {
	x := newTestExtractor(t)
	doc := Document{ID: "d1", URL: "https://example.org/a", Title: "Tuning PostgreSQL",
		Chunks: []Chunk{{ID: "c", Text: "Tune PostgreSQL memory."}},
		Links: []Link{
			{URL: "https://example.org/redis", Anchor: "Redis persistence"},
			{URL: "https://example.org/redis", Anchor: "Redis"},
			{URL: "https://example.org/x", Anchor: "here"},
			{URL: "  "},
		}}
	res := x.Document(doc)
	want := []LinkRelation{
		{From: "d1", To: "https://example.org/redis", Type: RelLinksTo, Count: 2, Anchors: []string{"Redis persistence", "Redis"}, Entities: []string{"redis"}},
		{From: "d1", To: "https://example.org/x", Type: RelLinksTo, Count: 1, Anchors: []string{"here"}},
	}
	if diff := cmp.Diff(want, res.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	if !slices.Equal(res.TitleEntities, []string{"postgresql"}) {
		t.Errorf("title entities: got %v, want [postgresql]", res.TitleEntities)
	}
}

func TestDocumentCodeSpans(t *testing.T) {
	x := newTestExtractor(t)
	text := "Call frobnicate_all with care.\n\nThen run the block."
	res := x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: text,
		CodeSpans: []string{"frobnicate_all", "zorp_handler = make_handler()"}}}})
	byID := map[string]Mention{}
	for _, m := range res.Mentions {
		byID[m.EntityID] = m
	}
	m, ok := byID["frobnicate_all"]
	if !ok || len(m.Offsets) != 1 || text[m.Offsets[0].Start:m.Offsets[0].End] != "frobnicate_all" {
		t.Errorf("located code span: got %+v, want one offset on frobnicate_all", m)
	}
	m, ok = byID["make_handler"]
	if !ok || len(m.Offsets) != 0 || m.Count != 1 {
		t.Errorf("code span outside the text: got %+v (found %v), want a mention without offsets", m, ok)
	}
}

func TestDocumentEntitiesMerged(t *testing.T) {
	x := newTestExtractor(t)
	res := x.Document(Document{ID: "d", Chunks: []Chunk{
		{ID: "c1", Text: "Postgres and PostgreSQL are one database; postgresql too."},
		{ID: "c2", Text: "We tuned Postgres."},
	}})
	var ids []string
	for _, e := range res.Entities {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, []string{"postgresql"}) {
		t.Fatalf("entities: got %v, want [postgresql]", ids)
	}
	e := res.Entities[0]
	if e.Name != "PostgreSQL" || e.Type != "database" || !slices.Contains(e.Aliases, "Postgres") {
		t.Errorf("entity: got %+v, want PostgreSQL (database) with alias Postgres", e)
	}
	counts := map[string]int{}
	for _, m := range res.Mentions {
		counts[m.ChunkID] = m.Count
	}
	if counts["c1"] != 3 || counts["c2"] != 1 {
		t.Errorf("mention counts: got %v, want c1:3 c2:1", counts)
	}
}

func TestDocumentDeterministic(t *testing.T) {
	x := newTestExtractor(t)
	set := loadEval(t, "eval.json")
	doc := Document{ID: "d"}
	for _, c := range set.Documents[1].Chunks {
		doc.Chunks = append(doc.Chunks, Chunk{ID: c.ID, Text: c.Text})
	}
	a, _ := json.Marshal(x.Document(doc))
	b, _ := json.Marshal(x.Document(doc))
	if string(a) != string(b) {
		t.Errorf("two runs differ:\n%s\n%s", a, b)
	}
}

// TestDocumentLongInput: a long chunk is handled in bounded time (linear
// scanning, no backtracking) and the byte cap is honoured.
func TestDocumentLongInput(t *testing.T) {
	x := newTestExtractor(t, WithMaxChunkBytes(200_000))
	unit := "PostgreSQL uses a write-ahead log (WAL) and `os.path.join()` in Python 3.11 — ÄÖÜ ((((( ````` "
	text := strings.Repeat(unit, 5000) // about 470 KB
	res := x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: text}}})
	for _, m := range res.Mentions {
		for _, o := range m.Offsets {
			if o.End > 200_000 {
				t.Fatalf("offset %v beyond the byte cap", o)
			}
		}
	}
	if len(res.Mentions) == 0 {
		t.Error("no mentions in a long chunk")
	}
	// pathological: one huge token, many brackets, many backticks
	for _, s := range []string{strings.Repeat("a", 300_000), strings.Repeat("(", 100_000), strings.Repeat("`x", 100_000),
		strings.Repeat("A-", 100_000), strings.Repeat("Foo ", 50_000)} {
		x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: s}}})
		x.Query(s)
	}
}

func TestQueryOffsets(t *testing.T) {
	x := newTestExtractor(t)
	q := "pip install requests for Python 3.12 on Ubuntu"
	got := x.Query(q)
	want := []string{"pip", "python", "python-3.12", "ubuntu"}
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
		if q[e.Start:e.End] != e.Text {
			t.Errorf("entity %s: text %q does not match offsets %d:%d", e.ID, e.Text, e.Start, e.End)
		}
	}
	if !slices.Equal(ids, want) {
		t.Errorf("query ids: got %v, want %v", ids, want)
	}
}

// TestQueryEverydayWordsInCapitals checks that a lower-case everyday word of a
// query is not read as the name the gazetteer knows only in capitals (the SQL
// keyword COMMIT, the variable USER, the HTTP method DELETE), while that name
// written as such, acronyms that are no English word (JSON, WAL) and names
// written otherwise (Windows, Rust) still match a query.
func TestQueryEverydayWordsInCapitals(t *testing.T) {
	x := newTestExtractor(t)
	for _, c := range []struct {
		q    string
		want []string // entity id:type, in order
	}{
		{"undo the last commit", nil},
		{"undo the last commit but keep the changes", nil},
		{"add extra fields to the user model", nil},
		{"delete a file", nil},
		{"update rust to a newer version", []string{"rust:programming_language"}},
		{"merge two dictionaries", []string{"dictionary:data_structure"}},
		{"parse command line options", nil},
		{"limit the number of rows", nil},
		{"run COMMIT after the UPDATE", []string{"commit:keyword", "update:keyword"}},
		{"parse a json file", []string{"json:file_format"}},
		{"postgres wal tuning", []string{"postgresql:database", "write-ahead-log:concept"}},
		{"install python on windows", []string{"python:programming_language", "windows:operating_system"}},
		{"send a request over http", []string{"http:protocol"}},
	} {
		var got []string
		for _, e := range x.Query(c.q) {
			got = append(got, e.ID+":"+e.Type)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Query(%q): got %v, want %v", c.q, got, c.want)
		}
	}
}

func TestStrayBacktick(t *testing.T) {
	x := newTestExtractor(t)
	text := "Type a ` to start code.\n\nThe quick brown fox jumps; PostgreSQL uses `std` and a backtick ` here."
	got := mentionTypes(t, x, text)
	for _, id := range []string{"quick", "brown", "fox", "jumps", "start"} {
		if _, ok := got[id]; ok {
			t.Errorf("prose word %q taken as code: got %v", id, got)
		}
	}
	if got["postgresql"] != "database" || got["std"] != "identifier" {
		t.Errorf("mentions: got %v, want postgresql (database) and std (identifier)", got)
	}
}

func TestNoRelationInsideCode(t *testing.T) {
	x := newTestExtractor(t)
	res := x.Document(Document{ID: "d", Chunks: []Chunk{{ID: "c", Text: "Write `use std::io; io uses std` first."}}})
	for _, r := range res.Relations {
		if r.Type == RelUses {
			t.Errorf("relation from code: got %+v, want none", r)
		}
	}
}
