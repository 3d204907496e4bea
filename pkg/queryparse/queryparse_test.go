package queryparse

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/kgsearch/kgsearch/pkg/extract"
)

// fakeFinder knows a few names, as the gazetteer would.
var fakeFinder = FinderFunc(func(q string) []Entity {
	known := map[string]Entity{
		"asyncio":    {ID: "asyncio", Name: "asyncio", Type: "module", Confidence: 0.9},
		"python":     {ID: "python", Name: "Python", Type: "programming_language", Confidence: 0.95},
		"postgresql": {ID: "postgresql", Name: "PostgreSQL", Type: "database", Confidence: 0.9},
	}
	var out []Entity
	for name, e := range known {
		if i := strings.Index(q, name); i >= 0 {
			e.Text, e.Start, e.End = name, i, i+len(name)
			out = append(out, e)
		}
	}
	return out
})

func TestNormalize(t *testing.T) {
	tests := []struct{ in, want string }{
		{"  How  DO I\tuse\nAsyncIO?  ", "how do i use asyncio?"},
		{"ｆｕｌｌｗｉｄｔｈ", "fullwidth"},
		{"a\x00b\x1fc", "a b c"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Normalize(tt.in); got != tt.want {
			t.Errorf("Normalize(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"how do i join paths with os.path.join?", []string{"join", "paths", "os.path.join"}},
		{"c++ vs c# performance", []string{"c++", "c#", "performance"}},
		{"utf-8 encoding errors in the json module", []string{"utf-8", "encoding", "errors", "json", "module"}},
		{"the the the", []string{}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, Terms(tt.in)); diff != "" {
			t.Errorf("Terms(%q) (-want +got):\n%s", tt.in, diff)
		}
	}
}

func TestParseIntent(t *testing.T) {
	p := New(fakeFinder)
	tests := []struct {
		q    string
		want Intent
	}{
		{"how does asyncio schedule coroutines?", Informational},
		{"what is a context manager", Informational},
		{"difference between list and tuple", Informational},
		{"install python on windows", Transactional},
		{"download postgresql", Transactional},
		{"configure logging handlers", Transactional},
		{"python documentation", Navigational},
		{"docs.python.org tutorial", Navigational},
		{"asyncio", Navigational},
		{"coroutine scheduling fairness", Informational},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			got, err := p.Parse(tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if got.Intent != tt.want {
				t.Errorf("intent: got %s, want %s", got.Intent, tt.want)
			}
			if got.Confidence <= 0 || got.Confidence > 1 {
				t.Errorf("confidence %v outside (0,1]", got.Confidence)
			}
		})
	}
}

func TestParseEntitiesAndVariants(t *testing.T) {
	got, err := New(fakeFinder).Parse("Using AsyncIO with PostgreSQL")
	if err != nil {
		t.Fatal(err)
	}
	wantEnts := []Entity{
		{Text: "asyncio", ID: "asyncio", Name: "asyncio", Type: "module", Confidence: 0.9, Start: 6, End: 13},
		{Text: "postgresql", ID: "postgresql", Name: "PostgreSQL", Type: "database", Confidence: 0.9, Start: 19, End: 29},
	}
	if diff := cmp.Diff(wantEnts, got.Entities); diff != "" {
		t.Errorf("entities (-want +got):\n%s", diff)
	}
	want := Variants{
		Original:         "using asyncio with postgresql",
		EntityEmphasised: "using asyncio with postgresql asyncio postgresql",
		EntityOnly:       "asyncio postgresql",
	}
	if diff := cmp.Diff(want, got.Variants); diff != "" {
		t.Errorf("variants (-want +got):\n%s", diff)
	}
	// Two well-known entities covering both content terms give a higher confidence
	// than the same query with no entity found.
	plain, _ := New(nil).Parse("Using AsyncIO with PostgreSQL")
	if got.Confidence <= plain.Confidence {
		t.Errorf("confidence with entities %v <= without %v", got.Confidence, plain.Confidence)
	}
}

// TestParseEverydayWordsWithTheExtractor parses plain-language queries with the
// real extractor (as the search service does): an everyday word is not read as
// the SQL keyword, variable or HTTP method the gazetteer knows in capitals
// ("commit" is not COMMIT, "user" not $USER), while JSON, a format people type
// in lower case, is still found.
func TestParseEverydayWordsWithTheExtractor(t *testing.T) {
	x, err := extract.New()
	if err != nil {
		t.Fatal(err)
	}
	p := New(FinderFunc(func(q string) []Entity {
		var out []Entity
		for _, e := range x.Query(q) {
			out = append(out, Entity{Text: e.Text, ID: e.ID, Name: e.Name, Type: e.Type, Confidence: e.Confidence, Start: e.Start, End: e.End})
		}
		return out
	}))
	for _, c := range []struct {
		q    string
		want []string // entity id:type
	}{
		{"undo the last commit", nil},
		{"Undo the last commit but keep the changes", nil},
		{"how do I add extra fields to the user model", nil},
		{"delete a branch on the remote server", nil},
		{"difference between merge and rebase", []string{"rebase:concept"}},
		{"parse a json file", []string{"json:file_format"}},
		{"How do I read and write JSON files", []string{"json:file_format"}},
		{"install python on windows", []string{"python:programming_language", "windows:operating_system"}},
	} {
		got, err := p.Parse(c.q)
		if err != nil {
			t.Fatalf("Parse(%q): %v", c.q, err)
		}
		var ents []string
		for _, e := range got.Entities {
			ents = append(ents, e.ID+":"+e.Type)
		}
		if !slices.Equal(ents, c.want) {
			t.Errorf("Parse(%q) entities: got %v, want %v", c.q, ents, c.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	p := New(fakeFinder)
	for _, q := range []string{"", "   ", "?!?", "\x00\x01"} {
		if _, err := p.Parse(q); !errors.Is(err, ErrEmpty) {
			t.Errorf("Parse(%q): got %v, want ErrEmpty", q, err)
		}
	}
	_, err := p.Parse(strings.Repeat("a ", 6000))
	var tl *TooLongError
	if !errors.As(err, &tl) || tl.Bytes != 12000 {
		t.Errorf("long query: got %v, want TooLongError{12000}", err)
	}
	// Only stop words: still searchable.
	got, err := p.Parse("how to")
	if err != nil || len(got.Terms) == 0 {
		t.Errorf("stop-word query: got %+v, %v; want terms", got, err)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"how do i use asyncio", "site:python.org", "c++", "\xff\xfe", "ｑ"} {
		f.Add(s)
	}
	p := New(fakeFinder)
	f.Fuzz(func(t *testing.T, q string) {
		got, err := p.Parse(q)
		if err != nil {
			return
		}
		if got.Normalized != Normalize(got.Normalized) {
			t.Errorf("normalisation not idempotent: %q", got.Normalized)
		}
		for _, e := range got.Entities {
			if e.Start < 0 || e.End > len(got.Normalized) || e.Start > e.End {
				t.Errorf("entity offsets %d..%d outside %q", e.Start, e.End, got.Normalized)
			}
		}
	})
}
